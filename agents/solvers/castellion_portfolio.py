"""Every method that decides Castellion deals, cheap first, on one budget: what ``castle-envs
solve --game castellion`` runs on each deal.

``Portfolio(max_nodes=...).solve(state)`` returns a ``castellion.Result`` whose ``found_by``
names the stage that decided the deal:

1. ``bound``: the proofs of loss at the root (``castellion_loss``): a sentence naming the
   ordeal that cannot be met; nearly free.
2. ``planner``: the planner agent plays the deal once, from the player's seat; a won game is
   a winning line.
3. ``nested:1``: nested Monte Carlo search over the true deal with the planner as playout
   (``castellion_nested``), 4 candidates a decision.
4. ``nested:1:see`` (the Menace only), ``nested:1:top8``: the same with the planner playing
   on a copy of the position whose face-down Ordeals are turned up (it plans for the
   Assault that will come; the search reads the true deal anyway), 4 and then 8 candidates.
5. ``beam:W`` / ``dfs`` / ``solver``: the compiled perfect-information solver
   (``castellion.Solver``, its proofs of loss off: stages 1 and 7 are those); ``solver``
   where it searched the whole tree and found no win.
6. ``nested:2``: the seeing nested search one level deeper.
7. ``loss-search``: the loss search (``Solver.loss_stages``): no line passes an ordeal.

At the Menace (``MENACE_SHARES``) three more seeing searches take the place of level 2
(which costs about 100 times level 1 and seldom finishes within the budget there):
``nested:1:see:value`` ranks the lines that fail at the same Assault by the planner's
value of where they end instead of by the moves they survive, and
``nested:1:see:planner:w1=0.6,w2=0.3`` and ``...:w1=1.0,w2=0.5`` have the planner weigh the
two Assaults after the current one more than its 0.3 and 0.1 (seeing them, it can build
early for the five formations of Assault III). Each won Menace deals of the study that
every search before it had lost: run one after another on the 186 the study left
undecided, the two planners won 8 and 7, then value scoring 16 of the 170 still open.

Every stage but the first gets its ``SHARES`` of the budget, and what a stage leaves unspent
goes to the stages after it. The budget is a node count, deterministic (the same verdicts on
any machine): one node is one move played by the compiled searches, and a move the planner
chooses (its game, the nested search) counts ``PLANNER_NODES`` nodes, about what it costs
next to a solver node (the planner weighs every placement by its formation costs).
``max_seconds`` gives a budget of seconds instead, shared the same way (not deterministic).

A win is a line (the caller replays it in the Gymnasium env before it counts), a loss a
proof; a deal no stage decides is ``unknown``, with ``reached`` the Ordeals the furthest
line passed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from castle_envs.agents.solvers.castellion import (
    LOSS_NODES,
    LOST,
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Result,
    Solver,
    stage_proof,
)
from castle_envs.agents.solvers.castellion_nested import NestedSearch, level_planner

from castle_envs.castellion.data import MENACE
from castle_envs.castellion.rules import State

#: nodes a move chosen by the planner counts (the compiled solver plays about this many
#: moves in the time the planner chooses one)
PLANNER_NODES = 200
#: the stages after the root bounds and the planner's game, each with its share of the budget
#: (a stage's unspent share goes to the next): (name, share)
SHARES = (
    ("nested:1", 0.20),
    ("nested:1:see", 0.20),
    ("nested:1:top8", 0.10),
    ("solver", 0.10),
    ("nested:2", 0.30),
    ("loss-search", 0.10),
)
#: the seeing searches the Menace adds: the planner weighing the later Assaults more, and
#: lines ranked by the planner's value of their end (``castellion_nested``'s ``score``)
AHEAD = "nested:1:see:planner:w1=0.6,w2=0.3"
VALUE = "nested:1:see:value"
FURTHER = "nested:1:see:planner:w1=1.0,w2=0.5"
#: the Menace's stages (module docstring)
MENACE_SHARES = (
    ("nested:1", 0.20),
    ("nested:1:see", 0.20),
    ("nested:1:top8", 0.10),
    (VALUE, 0.14),
    (AHEAD, 0.14),
    (FURTHER, 0.14),
    ("solver", 0.04),
    ("loss-search", 0.04),
)
#: the nested stages' settings: (level, candidates a decision, planner units behind the best,
#: whether the planner plays with the face-down Ordeals turned up, the planner's options,
#: how lines are compared); ``nested:1:see`` is skipped where no Ordeal is face down (it
#: would repeat the search before it)
NESTED: dict[str, tuple[int, int, float, bool, dict[str, float], str]] = {
    "nested:1": (1, 4, 4.0, False, {}, "moves"),
    "nested:1:see": (1, 4, 4.0, True, {}, "moves"),
    "nested:1:top8": (1, 8, 8.0, True, {}, "moves"),
    AHEAD: (1, 4, 4.0, True, {"w1": 0.6, "w2": 0.3}, "moves"),
    VALUE: (1, 4, 4.0, True, {}, "value"),
    FURTHER: (1, 4, 4.0, True, {"w1": 1.0, "w2": 0.5}, "moves"),
    "nested:2": (2, 4, 4.0, True, {}, "moves"),
}


def shares(level: int) -> tuple[tuple[str, float], ...]:
    """The stages after the planner's game at ``level`` (a ``castellion.data`` level)."""
    return MENACE_SHARES if level == MENACE else SHARES


#: the default budget a deal (``castle-envs solve --game castellion``)
DEFAULT_NODES = 20_000_000


@dataclass
class Stage:
    """What one stage did: its name, the nodes and seconds it spent, what it decided."""

    name: str
    nodes: int
    seconds: float
    verdict: str

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 4),
            "verdict": self.verdict,
        }


class Portfolio:
    """The stages (module docstring) on a budget of ``max_nodes`` nodes or ``max_seconds``."""

    def __init__(
        self,
        max_nodes: int | None = DEFAULT_NODES,
        max_seconds: float | None = None,
        loss_nodes: int | None = None,
    ):
        if max_nodes is None and max_seconds is None:
            raise ValueError("give a node budget or a time budget")
        if max_nodes is not None and max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        if max_seconds is not None and max_seconds <= 0:
            raise ValueError(f"max_seconds must be > 0, got {max_seconds}")
        if loss_nodes is not None and loss_nodes < 0:
            raise ValueError(f"loss_nodes must be >= 0, got {loss_nodes}")
        self.max_nodes, self.max_seconds = max_nodes, max_seconds
        self.loss_nodes = loss_nodes
        self.stages: list[Stage] = []
        self._main: Solver | None = None  # the solver, made at its first use
        self._loss: Solver | None = None  # the loss search's and the root bounds'

    def _solver(self, nodes: int | None, seconds: float | None) -> Solver:
        """The solver (proofs of loss off), its budget set to this stage's."""
        if self._main is None:
            share = dict(SHARES)["solver"]
            size = None if self.max_nodes is None else max(1, int(share * self.max_nodes))
            self._main = Solver(max_nodes=size, max_seconds=seconds, loss=False)
        self._main.max_nodes, self._main.max_seconds = nodes, seconds
        return self._main

    def _loss_solver(self, loss_nodes: int) -> Solver:
        """The root bounds and the loss search, with ``loss_nodes`` (0: the bounds only)."""
        if self._loss is None:
            self._loss = Solver(max_nodes=1, loss_nodes=0)
        self._loss.loss_nodes = loss_nodes
        return self._loss

    def solve(self, state: State) -> Result:
        """The deal's verdict (module docstring); ``self.stages`` says what each stage did."""
        start = time.perf_counter()
        self.stages = []
        self._spent_nodes = 0
        self._reached = state.current
        found = self._root_bound(state) or self._planner_game(state)
        carry = 0.0  # the share the stages so far left unspent
        for name, share in shares(state.level):
            if found is not None:
                break
            carry += share
            cap_nodes, cap_seconds = self._caps(carry, start)
            if cap_nodes == 0:
                break  # the budget is spent
            t = time.perf_counter()
            found, nodes = self._run_stage(name, state, cap_nodes, cap_seconds)
            self._log(name, nodes, t, found)
            if self.max_nodes is not None:
                carry -= nodes / self.max_nodes
            else:
                assert self.max_seconds is not None  # a budget is nodes or seconds
                carry -= (time.perf_counter() - t) / self.max_seconds
            carry = max(carry, 0.0)
        result = found or Result(UNKNOWN, reached=self._reached)
        result.nodes = self._spent_nodes
        result.seconds = time.perf_counter() - start
        result.loss_nodes = sum(s.nodes for s in self.stages if s.name == "loss-search")
        return result

    def _caps(self, share: float, start: float) -> tuple[int | None, float | None]:
        """A stage's budget: ``share`` of the whole, in nodes, or in seconds (bounded by what
        the deal has left)."""
        if self.max_nodes is not None:
            left = self.max_nodes - self._spent_nodes
            return max(0, min(left, int(share * self.max_nodes))), None
        assert self.max_seconds is not None
        seconds_left = self.max_seconds - (time.perf_counter() - start)
        return None, max(1e-3, min(seconds_left, share * self.max_seconds))

    def _log(self, name: str, nodes: int, t: float, found: Result | None) -> None:
        self._spent_nodes += nodes
        verdict = found.verdict if found is not None else UNKNOWN
        self.stages.append(Stage(name, nodes, time.perf_counter() - t, verdict))

    def _root_bound(self, state: State) -> Result | None:
        t = time.perf_counter()
        proof, _, _ = self._loss_solver(0).prove_loss(state)
        found = None
        if proof:
            found = Result(UNWINNABLE, found_by="bound", reached=state.current, proof=proof)
        self._log("bound", 0, t, found)
        return found

    def _planner_game(self, state: State) -> Result | None:
        t = time.perf_counter()
        planner = level_planner(state.level)
        s = state.clone()
        line: list[int] = []
        cap = None if self.max_nodes is None else self.max_nodes // PLANNER_NODES
        while not s.outcome:
            if cap is not None and len(line) >= cap:
                break  # the budget is smaller than the planner's game
            a = int(planner(s, None))
            line.append(a)
            s.apply_legal(a)
        self._reached = max(self._reached, int(s.current))
        found = Result(WINNABLE, line, found_by="planner", reached=3) if s.outcome > 0 else None
        self._log("planner", len(line) * PLANNER_NODES, t, found)
        return found

    def _run_stage(
        self, name: str, state: State, nodes: int | None, seconds: float | None
    ) -> tuple[Result | None, int]:
        """Run one stage within its budget: (its verdict or None, the nodes it spent)."""
        if name in NESTED:
            level, top, gap, see, options, score = NESTED[name]
            if see and name == "nested:1:see" and not any(state.face_down):
                return None, 0
            deadline = None if seconds is None else time.perf_counter() + seconds
            moves = None if nodes is None else nodes // PLANNER_NODES
            planner = level_planner(state.level, **options) if options else None
            search = NestedSearch(level, top, gap, planner, moves, deadline, see=see, score=score)
            found = search.search(state)
            self._reached = max(self._reached, found.passed)
            spent = found.moves * PLANNER_NODES
            if found.won:
                return Result(WINNABLE, found.line, found_by=name, reached=3), spent
            return None, spent
        if name == "solver":
            r = self._solver(nodes, seconds).solve(state)
            self._reached = max(self._reached, r.reached)
            if r.verdict == UNKNOWN:
                return None, r.nodes
            return Result(r.verdict, r.line, found_by=r.found_by or "solver", reached=r.reached), (
                r.nodes
            )
        return self._loss_search(state, nodes, seconds)

    def _loss_search(
        self, state: State, nodes: int | None, seconds: float | None
    ) -> tuple[Result | None, int]:
        """The loss search on its share of the nodes (``loss_nodes`` when given; with a time
        budget, ``loss_nodes`` or the solver's default): a stage that ends with no line past
        its ordeal is the proof."""
        budget = self.loss_nodes if self.loss_nodes is not None else (nodes or LOSS_NODES)
        if budget <= 0:
            return None, 0
        stages = self._loss_solver(budget).loss_stages(state)
        spent = stages[-1].nodes if stages else 0
        for stage in stages:
            if stage.verdict == LOST:
                proof = stage_proof(state, stage)
                lost = Result(
                    UNWINNABLE, found_by="loss-search", reached=state.current, proof=proof
                )
                return lost, spent
        return None, spent
