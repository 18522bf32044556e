"""``NestedSearch``: winning lines by nested Monte Carlo search (perfect information).

The depth-first solver (``solve_castle_siege.CompiledSolver``) decides a deal by searching its
tree; on Very Hard the tree is far too wide for it to find most wins.
Nested Monte Carlo search (``agents/solvers/castle_siege_nested_kernel.py`` documents the kernels)
follows the trained move scorer's best few moves instead, finishing the game from each
with a search one level down, and finds a win on most Very Hard deals in a fraction of a
second. It proves only wins: a deal it fails is left to the solver.

    from castle_envs.agents.solvers.castle_siege_nested import NestedSearch
    weights = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json").vector()
    result = NestedSearch(level=2, width=5, runs=4, weights=weights).solve(state)  # a Result

Each run is the whole nested search with its own noise seed (``seed + run``), so the result
depends only on the position and the settings. ``Result.nodes`` counts the moves played
in playouts and search (and the solver's nodes of ``check``). ``budget`` > 0 bounds the
work: no further run starts once the runs so far have counted that many nodes (a node
count, not a clock, so that the answer still depends only on the position and the settings;
a run is a fraction of a second to about a second).
"""

from __future__ import annotations

import time

import numpy as np
from castle_envs.agents.solvers.castle_siege import UNKNOWN, WINNABLE, Result
from castle_envs.agents.solvers.castle_siege_nested_kernel import MAX_WIDTH

from castle_envs.castle_siege.rules import State
from castle_envs.core import jit as _jit
from castle_envs.core.options import Option, Options

#: the settings (``castle-envs solve --nested LEVEL``): ``level``, candidates a step
#: (``width``), whole searches (``runs``), the playouts' noise, the solver's nodes at the end
#: (``check``), the nodes after which no further run starts (``budget``, 0: every run)
OPTIONS = Options(
    level=Option(2, 0, 2),
    width=Option(5, 2, MAX_WIDTH),
    runs=Option(4, 1, 1 << 20),
    noise=Option(0.2, 0.0, 1.0),
    check=Option(0, 0, 1 << 40),
    budget=Option(0, 0, 1 << 50),
)
DEFAULTS = OPTIONS.defaults()


class NestedSearch:
    """Nested Monte Carlo search for a winning line (module docstring)."""

    @OPTIONS.keywords
    def __init__(self, *, weights=None, seed: int = 0, **options):
        if not _jit.HAVE_NUMBA:
            raise ImportError("the nested search needs numba: " + _jit.INSTALL_HINT)
        from castle_envs.agents.solvers import castle_siege_nested_kernel as N

        o = OPTIONS.check(options, "nested search", "NestedSearch")
        level, width, runs, noise, check, budget = (o[k] for k in OPTIONS)
        if weights is None:
            raise ValueError(
                "the nested search needs the scorer's 30 weights "
                "(LinearPolicy.vector(), e.g. of models/castle_siege_very_hard_"
                "linear/policy.json)"
            )
        self.weights = np.asarray(weights, dtype=np.float64)
        if self.weights.shape != (30,):
            raise ValueError(
                f"weights must be the 30 of LinearPolicy.vector(), got shape {self.weights.shape}"
            )
        self.level, self.width, self.runs = level, width, runs
        self.noise, self.check, self.seed, self.budget = noise, check, seed, budget
        from castle_envs.agents.solvers import castle_siege_kernel as S
        from castle_envs.agents.solvers.castle_siege_compiled import shared_memo

        self._N, self._memo = N, shared_memo()
        self._x = N.new_scratch()
        self._w = S.new_work(max(10, min(22, (2 * max(check, 1)).bit_length())))

    def solve(self, state: State, budget: int | None = None) -> Result:
        """A winning line from ``state`` (``WINNABLE``), or ``UNKNOWN``; ``budget`` (> 0)
        replaces the settings' own for this call."""
        from castle_envs.castle_siege.vector import write_state

        N, x = self._N, self._x
        start = time.perf_counter()
        b0 = np.zeros(x.B.shape[1], np.int8)
        v0 = np.zeros(x.V.shape[1], np.int32)
        write_state(b0, v0, state, state.rows, state.rule_options())
        recent = state.attack == "most_recent"
        leave = state.defeated == "leave_game"
        nodes, budget = 0, self.budget if budget is None else budget
        if budget < 0:
            raise ValueError(f"budget must be >= 0 (0: every run), got {budget}")
        for run in range(self.runs):
            if budget and nodes >= budget:
                break
            score, line = N.search(
                x,
                self._w,
                self._memo,
                b0,
                v0,
                self.level,
                recent,
                leave,
                self.weights,
                self.width,
                self.noise,
                self.check,
                self.seed + run,
            )
            nodes += int(x.stats[0] + x.stats[1])
            if score == N.WIN_SCORE:
                return Result(WINNABLE, line, nodes, time.perf_counter() - start)
        return Result(UNKNOWN, [], nodes, time.perf_counter() - start)
