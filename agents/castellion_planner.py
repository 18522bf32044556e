"""Castellion planner agent: each decision's outcome scored by a formation planner.

At every decision with a choice the agent plays each candidate move on a copy of the
position that holds only what the player sees (both piles sorted, so their order is gone; a
face-down ordeal replaced by each card its slot may hold in turn, the results averaged),
finishes what the move forces (a Traitor's or a penalty's destructions, a power's steps:
the best choice at each), and scores the result:

    value = 1000 x ordeals passed - sum over the unresolved ordeals of weight x cost - pressure

``cost`` is ``castellion_plan.castle_cost``: the tiles the castle still needs for that
ordeal (its formations on usable sites, the complete foundation or the rows a row-removal
card takes, or for an Assault the cheaper of its formations and a castle big enough to
survive the penalty); later ordeals are scored on the castle as the row-removal cards before
them will leave it. ``weights`` (default 1, 0.3, 0.1) weigh the current ordeal and the next
two. ``pressure`` costs the current ordeal's missing tiles beyond what the draws left
before its trigger can bring (Traitors still to come before it x the pile's Defenders per
Traitor x ``useful``), so placing a Traitor that brings the encounter closer, or discarding
one (4 tiles destroyed), are weighed against each other.

Turn start: encounter the lowest ordeal early when it is face up (or every card its slot
may hold) and the castle passes it without penalty; play the revealed tile that scores best;
draw from the safe pile (no Traitors) while the next Traitor would trigger an ordeal the
castle does not meet yet, else from the regular pile. The Seer reveals from the regular pile
and a tower's reveal turns up the lowest face-down ordeal.

It reads only what a player sees: the castle, hand, revealed tiles, discard pile, the piles'
contents by kind (public by counting), the face-up ordeals and the Traitors beside them. It
never draws in its copies, so the piles' order never enters a decision, and a face-down card
is only ever replaced by the cards its slot may hold (``tests/agents/test_castellion_planner.py``
re-deals both and checks every decision is unchanged). It uses no randomness.

At the Menace the value also adds ``grow`` (default 8) per tile in the castle: a failed
Assault destroys 16 / 32 / 42 tiles (4 fewer per bastion) and the game is lost unless a
complete foundation survives, so a bigger castle is what lets a wrong guess about a
face-down card be survived. (Chosen on training deals 20,000,000+: 150 deals, grow 0 / 0.5 /
1.5 / 4 passed 0.31 / 0.47 / 0.61 / 0.69 ordeals a game; 600 others, grow 8 passed 0.75 and
won 5.)

At the Menace the value also charges ``info`` (default 30) for each unresolved ordeal still
face down, counting the one a just-completed tower is about to turn up as known. Averaging
over the cards a face-down Assault may be values a castle that hedges between formations, but
a known card lets the castle be built for it: of the planner's Menace games, none passed
Assault II while it was still face down at its encounter (0 of 57 on 200 training deals),
against 25 of 69 face up. So completing a tower is worth more than its formation. (Chosen on
training deals 20,100,000+: 3,600 deals, info 0 won 29 and info 30 won 52; info 10 and 100
on 1,000 of them gave 8 and 10 wins against info 30's 10.) ``reveal=1`` turns up the lowest
face-down card *after* the current one when there is one, instead of the lowest (not
clearly better: 16 wins against 18 on 600 training deals, 13 against 8 on 800 others).

Agent spec: ``planner[:w1=0.3,w2=0.1,useful=0.4,pressure=0.5,pyro=1,grow=8,info=30,reveal=0]``.
"""
from __future__ import annotations

import numpy as np

from castle_envs.castellion.actions import (DESTROY, DISCARD_POWER, DRAW, ENCOUNTER_NOW, REVEAL, REVEAL_ORDEAL,
                                            TAKE_REVEALED)
from castle_envs.castellion.data import (ASSAULT, NUM_DEFENDER_KINDS, ORDEALS, ORDEALS_BY_SLOT, PYRO,
                                         SEER)
from castle_envs.castellion import kernel as K
from castle_envs.castellion.rules import (DEFENDER_PHASE, DESTROY_PHASE, DRAW_PHASE,
                                          JUGGLE_PHASE, LIFT_PHASE, MOVE_PHASE, PYRO_DESTROY, RECOVER_PHASE, REVEAL_PHASE,
                                          REVEAL_ORDEAL_PHASE, SIZE, TRAITOR_PHASE, State)

from castle_envs.vector.castellion_moves import planner_value

DEFAULTS = {"w1": 0.3, "w2": 0.1, "useful": 0.4, "pressure": 0.5, "pyro": 1, "grow": 8.0,
            "info": 30.0, "reveal": 0}
OPTION_TYPES = {"w1": float, "w2": float, "useful": float, "pressure": float, "pyro": int,
                "grow": float, "info": float, "reveal": int}
WIN, LOSS = 1e6, -1e6


class PlannerPolicy:
    """``policy(state, rng) -> action`` (module docstring); ``rng`` is not used."""

    def __init__(self, w1: float = 0.3, w2: float = 0.1, useful: float = 0.4,
                 pressure: float = 0.5, pyro: int = 1, grow: float = 8.0, info: float = 30.0,
                 reveal: int = 0):
        for name, value in (("w1", w1), ("w2", w2), ("useful", useful),
                            ("pressure", pressure), ("grow", grow), ("info", info)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not 0 <= value <= 100:
                raise ValueError(f"planner option {name} must be a number in 0-100, got {value!r}")
        for name, value in (("pyro", pyro), ("reveal", reveal)):
            if value not in (0, 1) or isinstance(value, bool):
                raise ValueError(f"planner option {name} must be 0 or 1, got {value!r}")
        self.weights = (1.0, float(w1), float(w2))
        self.useful, self.pressure, self.pyro = float(useful), float(pressure), int(pyro)
        self.grow, self.info, self.reveal = float(grow), float(info), int(reveal)
        self._weights = np.array(self.weights)

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
    def value(self, state: State) -> float:
        """The score of a position (module docstring); face-down cards averaged over their
        slot's cards. Compiled (``vector.castellion_moves.planner_value``): the planner
        scores thousands of positions a decision."""
        s = state.s
        outcome = s[K.OUTCOME]
        if outcome:
            return WIN if outcome > 0 else LOSS
        return float(planner_value(s, np.empty_like(s), state.level, self._weights,
                                   self.pressure, self.useful, self.grow, self.info))

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
                break       # the move did not turn the card up: no card could change it
        return out

    def _after(self, view: State, action: int) -> float:
        outs = self._outcomes(view, action)
        return sum(self._best_value(o) for o in outs) / len(outs)

    def _best_value(self, state: State) -> float:
        """The value of a position, taking the best choice of any power or move it waits on."""
        phase = state.phase
        if phase in (JUGGLE_PHASE, RECOVER_PHASE, MOVE_PHASE, LIFT_PHASE) or \
                (phase == DESTROY_PHASE and state.destroy_reason == PYRO_DESTROY):
            return max(self._after(state, a) for a in self._choices(state))
        if phase == DEFENDER_PHASE:   # a recovered tile: place it or discard it
            return max(self._after(state, a) for a in self._choices(state)
                       if a != DISCARD_POWER)
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
            bonus[DISCARD_POWER] = 0.5     # seeing the next tiles: choices later
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
            defenders = [a for a in taken
                         if view.revealed[a - TAKE_REVEALED] < NUM_DEFENDER_KINDS]
            if not defenders:
                return taken[0]
            return max(defenders, key=lambda a: (self._take_value(view, a), -a))
        if mask[DRAW + 1] and (not mask[DRAW] or self._next_traitor_triggers(view)):
            return DRAW + 1
        return DRAW if mask[DRAW] else legal[0]

    def _take_value(self, view: State, action: int) -> float:
        other = view.clone()
        other._apply(action)
        return max(self._after(other, a) for a in np.flatnonzero(
            other.legal_action_mask()).tolist() if a != DISCARD_POWER)

    def _passes_now(self, view: State) -> bool:
        """Every card the lowest ordeal may be is passed now, without penalty."""
        before = view.current
        for other in self._outcomes(view, ENCOUNTER_NOW):
            if other.outcome < 0 or other.current == before or \
                    other.castle_size < view.castle_size and \
                    ORDEALS[other.ordeals[before]].kind == ASSAULT:
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
                return False        # a penalty to pay
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
