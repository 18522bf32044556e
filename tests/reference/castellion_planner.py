"""The Castellion planner agent in plain Python, as it was before it was compiled
(``vector.castellion_planner``): the reference the compiled planner is checked against, move
for move. ``agents/castellion_planner.py``'s docstring says what it does and why; this copy
keeps its position memo and its own plain-Python value."""

from __future__ import annotations

import numpy as np

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
    PYRO,
    ROWS,
    SEER,
    TRAITOR,
)
from castle_envs.castellion import kernel as K
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
    REVEAL_PHASE,
    REVEAL_ORDEAL_PHASE,
    SIZE,
    TRAITOR_PHASE,
    State,
)

from castle_envs.vector.castellion_plan import bastions, castle_cost, orders_for

DEFAULTS = {
    "w1": 0.3,
    "w2": 0.1,
    "useful": 0.4,
    "pressure": 0.5,
    "pyro": 1,
    "grow": 8.0,
    "info": 30.0,
    "reveal": 0,
}
OPTION_TYPES = {
    "w1": float,
    "w2": float,
    "useful": float,
    "pressure": float,
    "pyro": int,
    "grow": float,
    "info": float,
    "reveal": int,
}
WIN, LOSS = 1e6, -1e6
_ORDERS = [orders_for(c.towers, c.bastions, c.lines) for c in ORDEALS]
_NO_ORDER = orders_for(0, 0, 0)


def _avail_of(w: list, regular: list) -> np.ndarray:
    """Defenders per faction in the regular pile ``regular``, the safe pile, the revealed
    tiles, the hand and Pyro's lifted tile of the kernel row ``w`` (as a list)."""
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


def _cells(state: State) -> np.ndarray:
    return np.array(state.cells, np.int8)


def _drop_rows(cells: np.ndarray, rows: int) -> np.ndarray:
    """The castle after a row-removal card: rows slide down, empty columns close up."""
    grid = cells.reshape(SIZE, SIZE)[rows:]
    out = np.full((SIZE, SIZE), -1, np.int8)
    cols = [c for c in range(SIZE) if grid[0, c] >= 0] if len(grid) else []
    for i, c in enumerate(cols):
        out[: len(grid), i] = grid[:, c]
    return out.reshape(-1)


class PlannerPolicy:
    """``policy(state, rng) -> action`` (module docstring); ``rng`` is not used."""

    def __init__(
        self,
        w1: float = 0.3,
        w2: float = 0.1,
        useful: float = 0.4,
        pressure: float = 0.5,
        pyro: int = 1,
        grow: float = 8.0,
        info: float = 30.0,
        reveal: int = 0,
    ):
        for name, value in (
            ("w1", w1),
            ("w2", w2),
            ("useful", useful),
            ("pressure", pressure),
            ("grow", grow),
            ("info", info),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= 100
            ):
                raise ValueError(f"planner option {name} must be a number in 0-100, got {value!r}")
        for name, value in (("pyro", pyro), ("reveal", reveal)):
            if value not in (0, 1) or isinstance(value, bool):
                raise ValueError(f"planner option {name} must be 0 or 1, got {value!r}")
        self.weights = (1.0, float(w1), float(w2))
        self.useful, self.pressure, self.pyro = float(useful), float(pressure), int(pyro)
        self.grow, self.info, self.reveal = float(grow), float(info), int(reveal)
        self._memo: dict = {}

    # --- the player's view ---------------------------------------------------------------
    @staticmethod
    def _visible(state: State) -> State:
        """The player's view (piles sorted, face-down cards set to their slot's first card),
        as the planner's own model: the guard is lifted because ``_outcomes`` deals every card
        a face-down ordeal may be itself, and no move it simulates draws from a pile."""
        other = state.player_view()
        other.hidden = False
        return other

    @staticmethod
    def _cards(state: State, slot: int):
        """The cards ``slot`` may hold as the player knows it."""
        if slot < 3 and state.face_down[slot]:
            return ORDEALS_BY_SLOT[state.level][slot]
        return (state.ordeals[slot],)

    # --- scoring ---------------------------------------------------------------------------
    def _avail(self, state: State) -> np.ndarray:
        """Defenders per faction still to come or in hand (piles, revealed, hand, lifted)."""
        w = state.s.tolist()
        return _avail_of(w, w[K.REG : K.REG + w[K.REG_N]])

    def _card_cost(self, cells, card_id: int, avail, size: int, bast: int) -> float:
        card = ORDEALS[card_id]
        if card.kind == ROWS:
            return castle_cost(cells, _NO_ORDER, avail, card.rows + 1)
        plan = castle_cost(cells, _ORDERS[card_id], avail, 1)
        if card.kind == ASSAULT and plan > 0:
            # or a castle big enough that the penalty leaves a complete foundation
            left = max(0, card.penalty - 4 * bast)
            if left + SIZE <= CELLS:
                found = sum(1 for c in range(SIZE) if cells[c] < 0)
                plan = min(plan, max(0, left + SIZE - size, found))
        return float(plan)

    def value(self, state: State) -> float:
        """The score of a position (module docstring); face-down cards averaged over their
        slot's cards. It reads the position's kernel row as one list of ints (the planner
        scores thousands of positions a decision)."""
        w = state.s.tolist()
        outcome = w[K.OUTCOME]
        if outcome:
            return WIN if outcome > 0 else LOSS
        cells = _cells(state)
        level, current, phase = state.level, w[K.CURRENT], w[K.PHASE]
        regular = w[K.REG : K.REG + w[K.REG_N]]
        avail = _avail_of(w, regular)
        traitors = regular.count(TRAITOR) + regular.count(BLACK_TRAITOR)
        ordeals, face = w[K.ORD : K.ORD + 3], w[K.FACE : K.FACE + 3]
        beside = w[K.BESIDE : K.BESIDE + 6]
        # a power's choices lead to many copies of a few positions: score each once
        seen = tuple(-1 if down else card for card, down in zip(ordeals, face))
        key = (
            level,
            cells.tobytes(),
            avail.tobytes(),
            current,
            seen,
            tuple(beside),
            len(regular),
            traitors,
            w[K.SAFE_N],
            phase == REVEAL_ORDEAL_PHASE,
        )
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        castle_size = sum(w[K.HEIGHT : K.HEIGHT + SIZE])
        size = castle_size
        total = 1000.0 * current
        cost0 = 0.0
        bast = bastions(cells)
        for slot in range(current, 3):
            weight = self.weights[slot - current]
            cards = ORDEALS_BY_SLOT[level][slot] if face[slot] else (ordeals[slot],)
            cost = sum(self._card_cost(cells, c, avail, size, bast) for c in cards) / len(cards)
            if slot == current:
                cost0 = cost
            total -= weight * cost
            card = ORDEALS[ordeals[slot]]
            if not face[slot] and card.kind == ROWS:
                cells = _drop_rows(cells, card.rows)
                size = int((cells >= 0).sum())
                bast = bastions(cells)
        total -= self.pressure * max(0.0, cost0 - self._slack_of(w, len(regular), traitors))
        if level == MENACE:
            # a failed Assault destroys 16 / 32 / 42 tiles (4 fewer per bastion) and the
            # castle must keep its foundation: at the Menace every tile standing is insurance
            total += self.grow * castle_size
            # knowing an Assault lets the castle be built for it: each card still face down
            # costs ``info`` (a tower just completed is about to turn one up)
            down = sum(face[current:]) - (phase == REVEAL_ORDEAL_PHASE)
            total -= self.info * down
        if len(self._memo) > 200_000:
            self._memo.clear()
        self._memo[key] = total
        return total

    def _slack(self, state: State) -> float:
        """Useful tiles the draws before the current ordeal's trigger may still bring."""
        w = state.s.tolist()
        regular = w[K.REG : K.REG + w[K.REG_N]]
        return self._slack_of(
            w, len(regular), regular.count(TRAITOR) + regular.count(BLACK_TRAITOR)
        )

    def _slack_of(self, w: list, n_regular: int, traitors: int) -> float:
        """``_slack`` of the row ``w`` (as a list) whose regular pile holds ``n_regular``
        tiles, ``traitors`` of them Traitors."""
        slot = w[K.CURRENT]
        need = 2 if w[K.FACE + slot] else ORDEALS[w[K.ORD + slot]].traitors
        left = need - w[K.BESIDE + 2 * slot] - w[K.BESIDE + 2 * slot + 1]
        gap = (n_regular - traitors) / (traitors + 1)
        return self.useful * ((left - 1 + 0.5) * gap + w[K.SAFE_N])

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
            other._apply(action)
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
            state._apply(action)

    # --- the policy ----------------------------------------------------------------------------
    def __call__(self, state: State, rng=None) -> int:
        mask = state.legal_action_mask()
        legal = np.flatnonzero(mask).tolist()
        if len(legal) == 1:
            return legal[0]
        view = self._visible(state)
        phase = state.phase
        if phase == DRAW_PHASE:
            return self._turn_start(view, mask, legal)
        if phase == REVEAL_PHASE:
            return REVEAL if mask[REVEAL] else REVEAL + 1
        if phase == REVEAL_ORDEAL_PHASE:
            later = [a for a in legal if a - REVEAL_ORDEAL > state.current]
            return min(later) if self.reveal and later else min(legal)
        if phase == DEFENDER_PHASE:
            options = [a for a in legal if a != DISCARD_POWER or self._power_worth(view)]
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
        other._apply(action)
        return self.value(other)

    def _power_worth(self, view: State) -> bool:
        return self.pyro or view.hand // 3 != PYRO

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
        other._apply(action)
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


def make_planner_policy(options: dict) -> PlannerPolicy:
    return PlannerPolicy(**options)
