"""Nested Monte Carlo search (Cazenave 2009) for a winning Castellion line, over the true deal,
with the planner as its playout policy.

At level 1, at each decision with a choice, every candidate move (``pimc``'s candidates: the
planner's move and its next best, at most ``top`` of them within ``gap`` planner units) is
played in the true deal and the planner plays on to the end of the game; at level ``n`` a
level ``n - 1`` search plays on instead. The best line found so far is remembered and its
next move is played, so the search never ends worse than the best playout it has seen, and
it stops at the first playout that wins. Lines are compared by the Ordeals they pass, then by
the moves they survive, or with ``score="value"`` by the planner's value of the position the
line ends in (its cost for the Ordeal that beat it: how near the castle came to meeting it),
which tells apart the many lines that fail at the same Ordeal.

The candidates and playouts choose on the player's view, but the comparison between
candidates is made in the one true deal (the playouts draw from the real piles and meet the
real face-down Ordeals), so this is a perfect-information search like the solver, not an
agent. It proves only wins; a search that ends without one proves nothing.

    from castle_envs.agents.solvers.castellion_nested import NestedSearch
    found = NestedSearch(level=1, top=4, gap=4.0).search(state)  # a Found

``max_moves`` bounds the work by the moves the search plays (in playouts and in its own
line): a count, not a clock, so the answer depends only on the position and the settings.
``deadline`` (a ``time.perf_counter()`` value) also stops it, where a clock is wanted.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
from castle_envs.agents.search.castellion_pimc import LEVEL_PLANNER, PimcPolicy
from castle_envs.agents.search.castellion_planner import PlannerPolicy

from castle_envs.castellion import kernel as K
from castle_envs.castellion.rules import REVEAL_ORDEAL_PHASE, State

#: moves a playout may take (a game takes fewer than 400)
MAX_STEPS = 2000
#: a won line's score: more than any line that passes fewer than all three Ordeals
WON = 4


class Found(NamedTuple):
    """What a search found: its best line (a win when ``won``), the Ordeals that line passed
    (3 for a win), the planner playouts and the moves it played, and whether it ran to its end
    (False: ``max_moves`` or ``deadline`` stopped it)."""

    won: bool
    line: list[int]
    passed: int
    playouts: int
    moves: int
    finished: bool


class _Stop(Exception):
    """The budget ran out in the middle of a search."""


def level_planner(level: int, **options: Any) -> PlannerPolicy:
    """The planner a level's nested search plays with: its defaults, the level's tuned
    options (``castellion_pimc.LEVEL_PLANNER``) and ``options`` over them."""
    return PlannerPolicy(**{**LEVEL_PLANNER.get(level, {}), **options})


class NestedSearch:
    """Nested Monte Carlo search of ``level`` (module docstring)."""

    def __init__(
        self,
        level: int = 1,
        top: int = 4,
        gap: float = 4.0,
        planner: PlannerPolicy | None = None,
        max_moves: int | None = None,
        deadline: float | None = None,
        see: bool = False,
        score: str = "moves",
    ):
        if level < 1:
            raise ValueError(f"the nested search's level must be >= 1, got {level}")
        if top < 1:
            raise ValueError(f"top must be >= 1, got {top}")
        if score not in ("moves", "value"):
            raise ValueError(f"score must be 'moves' or 'value', got {score!r}")
        self.score = score
        self.level, self.top, self.gap = level, top, gap
        self.planner = planner
        self.max_moves, self.deadline = max_moves, deadline
        self.see = see
        self._moves = self._playouts = 0

    def search(self, state: State) -> Found:
        """The search from ``state`` (not changed)."""
        planner = self.planner or level_planner(state.level)
        ranker = PimcPolicy(planner=planner, top=self.top, gap=self.gap)
        self._moves = self._playouts = 0
        self._best: tuple[list[int], tuple[int, float]] = ([], (-1, 0))
        try:
            line, (passed, _) = self._nested(state.clone(), self.level, planner, ranker, [])
            finished = True
        except _Stop:
            line, (passed, _) = self._best
            finished = False
        won = passed == WON
        return Found(won, line, min(max(passed, 0), 3), self._playouts, self._moves, finished)

    def _spent(self, more: int = 0) -> bool:
        """Would ``more`` moves more pass ``max_moves``, or is the deadline past?"""
        if self.max_moves is not None and self._moves + more > self.max_moves:
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def _playout(self, world: State, planner: PlannerPolicy) -> tuple[list[int], tuple[int, float]]:
        """The planner plays ``world`` on (changed in place): its moves, the line's score."""
        moves = []
        for _ in range(MAX_STEPS):
            if world.outcome:
                break
            if self.max_moves is not None and self._moves >= self.max_moves:
                raise _Stop
            a = self._choose(planner, world)
            moves.append(a)
            world.apply_legal(a)
            self._moves += 1
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _Stop
        self._playouts += 1
        if world.outcome > 0:
            return moves, (WON, 0)
        if self.score == "moves":
            return moves, (world.current, len(moves))
        # the lost end scored as if play went on: the planner's value of its castle
        end = world.clone()
        end.s[K.OUTCOME] = 0
        return moves, (world.current, planner.value(self._seen(end)))

    def _nested(self, s: State, level: int, planner, ranker, before: list[int]) -> tuple:
        """Search of ``level`` from ``s`` (changed in place), ``before`` the moves that led
        there from the root: (best line from ``s``, its score)."""
        if level == 0:
            return self._playout(s, planner)
        played: list[int] = []
        best: list[int] = []
        best_score: tuple[int, float] = (-1, 0.0)
        while not s.outcome:
            legal = np.flatnonzero(s.legal_action_mask()).tolist()
            cands = ranker.candidates(self._seen(s), legal) if len(legal) > 1 else legal
            if self.see:
                cands = [a for a in cands if a in legal] or legal[:1]
            if len(cands) > 1 or not best:
                for a in cands:
                    if self._spent(1):
                        raise _Stop
                    w = s.clone()
                    w.apply_legal(a)
                    self._moves += 1
                    moves, (passed, survived) = self._nested(
                        w, level - 1, planner, ranker, before + played + [a]
                    )
                    line_score = (passed, self._after(survived, len(played) + 1))
                    if line_score > best_score:
                        best, best_score = played + [a] + moves, line_score
                        self._remember(
                            before + best, (passed, self._after(survived, len(before + played) + 1))
                        )
                    if best_score[0] == WON:
                        return best, best_score
            a = best[len(played)]
            s.apply_legal(a)
            played.append(a)
        return best, best_score

    def _after(self, tiebreak: float, moves: int) -> float:
        """A line's tie-break with ``moves`` played before it: the moves survived add up, a
        value is the end position's own."""
        return tiebreak + moves if self.score == "moves" else tiebreak

    def _seen(self, s: State) -> State:
        """What the planner plays on: ``s`` itself, or with ``see`` a copy of it with every
        face-down Ordeal turned up (not while a tower's reveal is being chosen)."""
        if not self.see or not any(s.face_down) or s.phase == REVEAL_ORDEAL_PHASE:
            return s
        seen = s.clone()
        seen.face_down = [False, False, False]
        return seen

    def _choose(self, planner: PlannerPolicy, s: State) -> int:
        """The planner's move in ``s`` (on ``_seen(s)``; a move that is not legal in ``s``
        itself falls back to the planner's own move there)."""
        if not self.see:
            return planner(s, None)
        a = planner(self._seen(s), None)
        return a if s.legal_action_mask()[a] else planner(s, None)

    def _remember(self, line: list[int], score: tuple[int, float]) -> None:
        """The best whole line from the root so far, for a search the budget stops."""
        if score > self._best[1]:
            self._best = (line, score)
