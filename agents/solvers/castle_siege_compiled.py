"""``CompiledSolver``: Castle Siege's perfect-information solver (the package's only one),
compiled (numba).

``solve(state)`` returns a ``solvers.castle_siege.Result``, whose verdict is ``winnable`` (with a
winning line of env action ids), ``unwinnable`` (the whole tree searched under sound
reductions) or ``unknown`` (budget spent). The search, the reductions and their soundness
arguments are described in ``solvers/castle_siege.py``; ``solvers/castle_siege_kernel.py``
holds the kernels and says what differs from the Python solver that was written first (now
``tests/reference/castle_siege_solver.py``, the tests' reference): the table of lost positions
is keyed by a 128-bit Zobrist hash rather than the position's bytes, moves are bucket-sorted,
the probes' noise is xorshift64*, and the probes follow the compiled linear move scorer
(``probe_weights``: ``LinearPolicy.vector()``; the heuristic's weights reproduce the heuristic
agent). ``reference=True`` searches move for move as the reference (the kernel's ``reference_mode``):
``LinearPolicy``'s endgame uses it, so that the shipped linear model plays as it was measured.

Needs numba (a core dependency); without it the kernels would run as plain Python, far too
slow, so ``CompiledSolver`` refuses to start.

    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver
    result = CompiledSolver(max_nodes=1_000_000).solve(state)

Budgets: ``max_nodes`` (deterministic) and/or ``max_seconds``; the probes get
``probe_share`` of the budget, then the depth-first search the rest.
"""

from __future__ import annotations

import time

import numpy as np
from castle_envs.agents.solvers.castle_siege import UNKNOWN, UNWINNABLE, WINNABLE, Result

from castle_envs.castle_siege.rules import State
from castle_envs.core import jit as _jit

_CHUNK = 1 << 16  # nodes per kernel call when a time budget is set
_MEMO = None  # the relaxed game's memo (bound 4): deal-independent, kept per process


def _memo():
    global _MEMO
    if _MEMO is None:
        from numba import types
        from numba.typed import Dict

        _MEMO = Dict.empty(key_type=types.int64, value_type=types.boolean)
    return _MEMO


#: the process-wide memo of the relaxed bound, for the search agents' kernels
shared_memo = _memo


class CompiledSolver:
    """Depth-first search for a winning line in compiled kernels (module docstring)."""

    def __init__(
        self,
        max_nodes: int | None = 100_000,
        max_seconds: float | None = None,
        prune: bool = True,
        table: bool = True,
        order: bool = True,
        probe_share: float = 0.5,
        probe_noise: float = 0.15,
        seed: int = 0,
        probe_weights=None,
        table_bits: int | None = None,
        reference: bool = False,
    ):
        if not _jit.HAVE_NUMBA:
            raise ImportError("the compiled solver needs numba: " + _jit.INSTALL_HINT)
        if max_nodes is None and max_seconds is None:
            raise ValueError("give a node budget, a time budget or both")
        from castle_envs.agents.solvers import castle_siege_kernel as S

        self._S = S
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.prune, self.table, self.order = prune, table, order
        self.probe_share = probe_share if order else 0.0
        self.probe_noise = probe_noise
        self.seed = seed
        self.weights = (
            np.zeros(30) if probe_weights is None else np.asarray(probe_weights, dtype=np.float64)
        )
        if self.weights.shape != (30,):
            raise ValueError(
                f"probe_weights must be the 30 weights of LinearPolicy.vector(), "
                f"got shape {self.weights.shape}"
            )
        self.guided = probe_weights is not None
        if reference and self.guided:
            raise ValueError(
                "the reference mode's probes follow the search's order: no probe_weights"
            )
        self.reference = reference
        if table_bits is None:  # room for every node of the budget, at most 2^24 slots
            table_bits = 24 if max_nodes is None else max(10, min(24, (2 * max_nodes).bit_length()))
        self._w = S.new_work(table_bits)

    def hopeless(self, state: State) -> bool:
        """Do the pruning bounds 2-4 (``solvers.castle_siege``) call this position lost?"""
        from castle_envs.castle_siege.vector import write_state

        w = self._w
        write_state(w.B[0], w.V[0], state, state.rows, state.rule_options())
        return bool(self._S.hopeless(w.B[0], w.V[0], w, _memo()))

    def solve(self, state: State) -> Result:
        from castle_envs.castle_siege.vector import write_state

        S, w = self._S, self._w
        rules = state.rule_options()
        recent = state.attack == "most_recent"
        leave = state.defeated == "leave_game"
        write_state(w.B[0], w.V[0], state, state.rows, rules)
        S.tt_clear(w.table, w.used)
        w.stats[:] = 0
        w.rng[0] = np.uint64(self.seed * 2654435761 + 88172645463325252) | np.uint64(1)
        S.reference_mode(w, self.reference, self.seed)
        memo = _memo()
        start = time.perf_counter()
        deadline = None if self.max_seconds is None else start + self.max_seconds
        line = None
        # probes: randomized greedy playouts (they only ever find wins)
        probe_budget = None if self.max_nodes is None else int(self.max_nodes * self.probe_share)
        probe_deadline = None if deadline is None else start + self.max_seconds * self.probe_share  # type: ignore[operator]  # a deadline: set
        while self.probe_share:
            limit = probe_budget if probe_budget is not None else 1 << 62
            if deadline is not None:
                limit = min(limit, w.stats[0] + _CHUNK)
            n = S.probe(
                w,
                memo,
                recent,
                leave,
                limit,
                self.probe_noise,
                self.weights,
                self.guided,
                self.prune,
            )
            if n:
                line = [int(a) for a in w.line[:n]]
                break
            if probe_budget is not None and w.stats[0] >= probe_budget:
                break
            if probe_deadline is not None and time.perf_counter() > probe_deadline:
                break
        verdict = WINNABLE if line else UNKNOWN
        w.stats[1:] = 0
        while verdict == UNKNOWN:  # the depth-first search, in chunks when timed
            limit = (1 << 62) if self.max_nodes is None else self.max_nodes
            if deadline is not None:
                limit = min(limit, w.stats[0] + _CHUNK)
            result = S.dfs(
                w, S.ZOBRIST, memo, recent, leave, limit, self.prune, self.table, self.order
            )
            if result == S.WIN:
                depth = int(w.stats[2]) + 1
                line = w.moves[np.arange(depth), w.idx[:depth] - 1].tolist()
                verdict = WINNABLE
            elif result == S.LOSS:
                verdict = UNWINNABLE
            elif (self.max_nodes is not None and w.stats[0] >= self.max_nodes) or (
                deadline is not None and time.perf_counter() > deadline
            ):
                break
        return Result(
            verdict,
            line or [],
            int(w.stats[0]),
            time.perf_counter() - start,
            int(w.used[0]),
            int(w.stats[1]),
        )
