"""The Castellion planner in plain Python, as it was before it was compiled
(``search.castellion_planner_kernel``, ``castellion.moves.planner_value``): the reference the
compiled planner is checked against, move for move and value for value, bit for bit.
``agents/search/castellion_planner.py``'s docstring says what it does and why.

``reference_costs`` and ``reference_value`` are the position value; ``PlannerPolicy`` is the
agent's class (its options, checks and player's view) with every decision made here in
Python (the old position memo left out: the value is a pure function of the position)."""

from __future__ import annotations

import numpy as np
from castle_envs.agents.search import castellion_planner as agent

from castle_envs.castellion import kernel as K
from castle_envs.castellion.actions import (
    DESTROY,
    DISCARD_POWER,
    DRAW,
    ENCOUNTER_NOW,
    REVEAL,
    REVEAL_ORDEAL,
    TAKE_REVEALED,
)
from castle_envs.castellion.data import (
    ASSAULT,
    BLACK_TRAITOR,
    MENACE,
    NUM_DEFENDER_KINDS,
    ORDEALS,
    ORDEALS_BY_SLOT,
    ROWS,
    SEER,
    TRAITOR,
)
from castle_envs.castellion.plan import bastions, castle_cost, orders_for
from castle_envs.castellion.rules import (
    CELLS,
    DEFENDER_PHASE,
    DESTROY_PHASE,
    DRAW_PHASE,
    JUGGLE_PHASE,
    LIFT_PHASE,
    MOVE_PHASE,
    PYRO_DESTROY,
    RECOVER_PHASE,
    REVEAL_ORDEAL_PHASE,
    REVEAL_PHASE,
    SIZE,
    TRAITOR_PHASE,
    State,
)

WIN, LOSS = agent.WIN, agent.LOSS

_ORDERS = [orders_for(c.towers, c.bastions, c.lines) for c in ORDEALS]
_NO_ORDER = orders_for(0, 0, 0)


def _avail_of(w: list, regular: list) -> np.ndarray:
    avail = [0, 0, 0, 0]
    for pile in (
        regular,
        w[K.SAFE : K.SAFE + w[K.SAFE_N]],
        w[K.REV : K.REV + w[K.REV_N]],
        (w[K.HAND], w[K.LIFTED]),
    ):
        for k in pile:
            if 0 <= k < NUM_DEFENDER_KINDS:
                avail[k // 3] += 1
    return np.array(avail, np.int64)


def _drop_rows(cells: np.ndarray, rows: int) -> np.ndarray:
    grid = cells.reshape(SIZE, SIZE)[rows:]
    out = np.full((SIZE, SIZE), -1, np.int8)
    cols = [c for c in range(SIZE) if grid[0, c] >= 0] if len(grid) else []
    for i, c in enumerate(cols):
        out[: len(grid), i] = grid[:, c]
    return out.reshape(-1)


def _card_cost(cells, card_id: int, avail, size: int, bast: int) -> float:
    card = ORDEALS[card_id]
    if card.kind == ROWS:
        return castle_cost(cells, _NO_ORDER, avail, card.rows + 1)
    plan = castle_cost(cells, _ORDERS[card_id], avail, 1)
    if card.kind == ASSAULT and plan > 0:
        left = max(0, card.penalty - 4 * bast)
        if left + SIZE <= CELLS:
            found = sum(1 for c in range(SIZE) if cells[c] < 0)
            plan = min(plan, max(0, left + SIZE - size, found))
    return float(plan)


def reference_costs(state: State) -> list[float]:
    """The plan costs of the lowest unresolved ordeal and the two after it (0 past the last),
    each later one on the castle the face-up row-removal cards before it leave."""
    w = state.s.tolist()
    cells = np.array(state.cells, np.int8)
    level, current = state.level, w[K.CURRENT]
    avail = _avail_of(w, w[K.REG : K.REG + w[K.REG_N]])
    ordeals, face = w[K.ORD : K.ORD + 3], w[K.FACE : K.FACE + 3]
    size = sum(w[K.HEIGHT : K.HEIGHT + SIZE])
    bast = bastions(cells)
    costs = []
    for slot in range(current, 3):
        cards = ORDEALS_BY_SLOT[level][slot] if face[slot] else (ordeals[slot],)
        costs.append(sum(_card_cost(cells, c, avail, size, bast) for c in cards) / len(cards))
        card = ORDEALS[ordeals[slot]]
        if not face[slot] and card.kind == ROWS:
            cells = _drop_rows(cells, card.rows)
            size = int((cells >= 0).sum())
            bast = bastions(cells)
    return costs + [0.0] * (3 - len(costs))


def reference_value(
    state: State,
    weights=(1.0, 0.3, 0.1),
    pressure=0.5,
    useful=0.4,
    grow=0.5,
    info=30.0,
    scout=5.0,
) -> float:
    w = state.s.tolist()
    outcome = w[K.OUTCOME]
    if outcome:
        return WIN if outcome > 0 else LOSS
    level, current, phase = state.level, w[K.CURRENT], w[K.PHASE]
    regular = w[K.REG : K.REG + w[K.REG_N]]
    traitors = regular.count(TRAITOR) + regular.count(BLACK_TRAITOR)
    ordeals, face = w[K.ORD : K.ORD + 3], w[K.FACE : K.FACE + 3]
    castle_size = sum(w[K.HEIGHT : K.HEIGHT + SIZE])
    total = 1000.0 * current
    costs = reference_costs(state)
    for slot in range(current, 3):
        total -= weights[slot - current] * costs[slot - current]
    cost0 = costs[0]
    slot = current
    need = 2 if face[slot] else ORDEALS[ordeals[slot]].traitors
    left = need - w[K.BESIDE + 2 * slot] - w[K.BESIDE + 2 * slot + 1]
    gap = (len(regular) - traitors) / (traitors + 1)
    slack = useful * ((left - 1 + 0.5) * gap + w[K.SAFE_N])
    total -= pressure * max(0.0, cost0 - slack)
    if level == MENACE:
        total += grow * castle_size
        down = sum(face[current:]) - (phase == REVEAL_ORDEAL_PHASE)
        total -= info * down
        if down > 0 and scout != 0:
            towers = np.zeros((1, state.formations()[0] + 1), np.int64)
            cells = np.array(state.cells, np.int8)
            avail = _avail_of(w, regular)
            total -= scout * float(castle_cost(cells, towers, avail, 0))
    return total


class PlannerPolicy(agent.PlannerPolicy):
    """The planner with its decisions in plain Python (module docstring)."""

    def value(self, state: State) -> float:
        return reference_value(
            state, self.weights, self.pressure, self.useful, self.grow, self.info, self.scout
        )

    @staticmethod
    def _cards(state: State, slot: int):
        """The cards ``slot`` may hold as the player knows it."""
        if slot < 3 and state.face_down[slot]:
            return ORDEALS_BY_SLOT[state.level][slot]
        return (state.ordeals[slot],)

    # --- playing a move on copies ------------------------------------------------------------
    def _outcomes(self, view: State, action: int):
        """The positions ``action`` leads to, one per card a face-down current ordeal may be
        when the move may resolve it; forced destructions finished."""
        slot = view.current
        out = []
        for card in self._cards(view, slot):
            other = view.clone()
            other.ordeals[slot] = card
            other._mask = None
            other.apply_legal(action)
            self._settle(other)
            out.append(other)
            if not view.face_down[slot]:
                break
            if other.face_down[slot] and view.phase != TRAITOR_PHASE:
                break  # the move did not turn the card up: no card could change it
        return out

    def _after(self, view: State, action: int) -> float:
        outs = self._outcomes(view, action)
        return sum(self._best_value(o) for o in outs) / len(outs)

    def _best_value(self, state: State) -> float:
        """The value of a position, taking the best choice of any power or move it waits on."""
        phase = state.phase
        if phase in (JUGGLE_PHASE, RECOVER_PHASE, MOVE_PHASE, LIFT_PHASE) or (
            phase == DESTROY_PHASE and state.destroy_reason == PYRO_DESTROY
        ):
            return max(self._after(state, a) for a in self._choices(state))
        if phase == DEFENDER_PHASE:  # a recovered tile: place it or discard it
            return max(self._after(state, a) for a in self._choices(state) if a != DISCARD_POWER)
        return self.value(state)

    def _choices(self, state: State):
        legal = np.flatnonzero(state.legal_action_mask()).tolist()
        if state.phase == DESTROY_PHASE and state.destroy_reason == PYRO_DESTROY:
            tops = {(state.heights[c] - 1) * SIZE + c for c in range(SIZE) if state.heights[c]}
            legal = [a for a in legal if a - DESTROY in tops] or legal
        return legal

    def _settle(self, state: State) -> None:
        """Finish the destructions a move forces (a Traitor's cost, a penalty): the tile
        whose loss costs least each time; long penalties take from the tallest column."""
        while state.phase == DESTROY_PHASE and state.destroy_reason != PYRO_DESTROY:
            legal = np.flatnonzero(state.legal_action_mask()).tolist()
            if state.destroy_left > 4:
                action = _tallest_top(state, legal)
            else:
                action = max(legal, key=lambda a: (self._one_step(state, a), -a))
            state.apply_legal(action)

    # --- the policy ----------------------------------------------------------------------------
    def __call__(self, state: State, rng=None) -> int:
        mask = state.legal_action_mask()
        legal = np.flatnonzero(mask).tolist()
        if len(legal) == 1:
            return legal[0]
        view = self.visible(state)
        phase = state.phase
        if phase == DRAW_PHASE:
            return self._turn_start(view, mask, legal)
        if phase == REVEAL_PHASE:
            return REVEAL if mask[REVEAL] else REVEAL + 1
        if phase == REVEAL_ORDEAL_PHASE:
            later = [a for a in legal if a - REVEAL_ORDEAL > state.current]
            return min(later) if self.reveal and later else min(legal)
        if phase == DEFENDER_PHASE:
            options = [a for a in legal if a != DISCARD_POWER or self.power_worth(view)]
        elif phase == DESTROY_PHASE and state.destroy_reason != PYRO_DESTROY:
            if state.destroy_left > 4:
                return _tallest_top(state, legal)
            return max(legal, key=lambda a: (self._one_step(view, a), -a))
        else:
            options = self._choices(view)
        bonus = {}
        if phase == DEFENDER_PHASE and DISCARD_POWER in options and state.hand // 3 == SEER:
            bonus[DISCARD_POWER] = 0.5  # seeing the next tiles: choices later
        return max(options, key=lambda a: (self._after(view, a) + bonus.get(a, 0.0), -a))

    def _one_step(self, view: State, action: int) -> float:
        other = view.clone()
        other.apply_legal(action)
        return self.value(other)

    def _turn_start(self, view: State, mask, legal) -> int:
        if mask[ENCOUNTER_NOW] and self._passes_now(view):
            return ENCOUNTER_NOW
        taken = [a for a in legal if TAKE_REVEALED <= a < ENCOUNTER_NOW]
        if taken:
            defenders = [a for a in taken if view.revealed[a - TAKE_REVEALED] < NUM_DEFENDER_KINDS]
            if not defenders:
                return taken[0]
            return max(defenders, key=lambda a: (self._take_value(view, a), -a))
        if mask[DRAW + 1] and (not mask[DRAW] or self._next_traitor_triggers(view)):
            return DRAW + 1
        return DRAW if mask[DRAW] else legal[0]

    def _take_value(self, view: State, action: int) -> float:
        other = view.clone()
        other.apply_legal(action)
        return max(
            self._after(other, a)
            for a in np.flatnonzero(other.legal_action_mask()).tolist()
            if a != DISCARD_POWER
        )

    def _passes_now(self, view: State) -> bool:
        """Every card the lowest ordeal may be is passed now, without penalty."""
        before = view.current
        for other in self._outcomes(view, ENCOUNTER_NOW):
            if (
                other.outcome < 0
                or other.current == before
                or other.castle_size < view.castle_size
                and ORDEALS[other.ordeals[before]].kind == ASSAULT
            ):
                return False
        return True

    def _next_traitor_triggers(self, view: State) -> bool:
        slot = view.current
        need = 2 if view.face_down[slot] else ORDEALS[view.ordeals[slot]].traitors
        if sum(view.beside[slot]) + 1 < need:
            return False
        return not self._passes_if_triggered(view)

    def _passes_if_triggered(self, view: State) -> bool:
        slot = view.current
        for card in self._cards(view, slot):
            other = view.clone()
            other.ordeals[slot] = card
            other._mask = None
            if not other._encounter():
                return False  # a penalty to pay
            if other.outcome < 0:
                return False
        return True


def _tallest_top(state: State, legal) -> int:
    """The top tile of the tallest column that may lose one (a penalty keeps the foundation
    as long as it can)."""
    best, key = legal[0], None
    for a in legal:
        cell = a - DESTROY
        r, c = divmod(cell, SIZE)
        if r != state.heights[c] - 1:
            continue
        k = (state.heights[c], c)
        if key is None or k > key:
            best, key = a, k
    return best
