"""A perfect-information solver for Castellion: with both piles' order and every face-down
Ordeal known, can this deal be won?

``Solver(max_nodes=...).solve(state)`` returns a ``Result`` whose verdict is

- ``winnable``, with a winning line of env action ids (``castle-envs solve`` replays it in
  the Gymnasium env and refuses to count it unless it wins);
- ``unwinnable``: proven lost, with the proof in ``Result.proof``: a bound of
  ``castle_envs.agents.solvers.castellion_loss`` shows at the root that an ordeal cannot be met
  (``found_by`` "bound"), or the *loss search* (``found_by`` "loss-search") found no line
  that passes the current ordeal (then the next one), searched to the end under those
  bounds, or the whole game tree was searched under sound reductions (``found_by`` "");
- ``unknown``: the budget ran out first.

The proofs of loss come first and have their own node budget (``loss_nodes``, reported as
``Result.loss_nodes``), so the schedule that finds wins, its node counts and the verdicts it
gives are those of a solver without them; a deal they prove lost never reaches it.

It knows what no player knows, so its winnable share is an upper bound for any player.
The search runs in compiled kernels (``castle_envs.agents.solvers.castellion_kernel``, which states
each reduction and why it is sound) over the batched env's rows; a fixed schedule alternates
beam searches over turns of growing width (1, 4, 16, ...: they find wins) with slices of a
resumable depth-first search (it proves losses, and finds wins too). The schedule does not
depend on the budget, so a node budget gives the same verdict on any machine, and a run with
budget B decides exactly the deals that a run with a larger budget decided within B nodes
(``Result.nodes``). A time budget (``max_seconds``) is also accepted (not deterministic).

``exhaustive(state)`` is the plain reference: every legal move, no table, no bound, over
``castellion.rules.State`` in pure Python (tests compare it with the compiled search on small positions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from castle_envs.castellion.rules import State

WINNABLE, UNWINNABLE, UNKNOWN = "winnable", "unwinnable", "unknown"
#: beam widths, in order; a slice of depth-first search follows each beam
BEAM_WIDTHS = (1, 4, 16, 64, 256, 1024, 4096, 16384)
#: the depth-first slice after a beam gets this share of that beam's nodes
DFS_SHARE = 0.5
#: the loss search's node budget (``Solver(loss_nodes=...)``), apart from the main budget
LOSS_NODES = 100_000


@dataclass
class Result:
    verdict: str
    line: list = field(default_factory=list)
    nodes: int = 0  # nodes spent until the verdict (or the whole budget)
    seconds: float = 0.0
    pruned: int = 0  # positions the School supply bound called lost
    found_by: str = ""  # "beam:W", "dfs", "bound", "loss-search" or ""
    reached: int = 0  # ordeals passed on the beams' furthest turn ends
    proof: str = ""  # unwinnable: why (the ordeal that cannot be met)
    loss_nodes: int = 0  # nodes the loss search spent (its own budget)

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "line": list(self.line),
            "nodes": self.nodes,
            "seconds": self.seconds,
            "pruned": self.pruned,
            "found_by": self.found_by,
            "reached": self.reached,
            "proof": self.proof,
            "loss_nodes": self.loss_nodes,
        }


def deal(seed: int, level: str, **rules) -> State:
    """The position ``CastellionEnv(level, **rules).reset(seed=seed)`` deals."""
    return State.new_game(np.random.default_rng(seed), level, **rules)


def replay_wins(seed: int, level: str, line, **rules) -> bool:
    """Play ``line`` in the Gymnasium env from ``reset(seed=seed)``: does it end in a win?"""
    import gymnasium

    env = gymnasium.make(
        "castle_envs/Castellion-v0",
        level=level,
        max_episode_steps=10_000,
        illegal_action="raise",
        **rules,
    )  # an illegal move: a bug, raised
    _, info = env.reset(seed=seed)
    for action in line:
        if not info["action_mask"][action]:
            return False
        _, _, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            return bool(terminated and info["won"])
    return False


#: a loss-search stage's verdicts: a line passes its ordeal, none does (proven lost), or
#: the budget ran out first
PASSED, LOST, OPEN = "pass", "lost", "unk"


class LossStage(NamedTuple):
    """One stage of ``Solver.loss_stages``."""

    goal: int  # the ordeal (1-based) a line must pass
    verdict: str  # PASSED, LOST or OPEN
    nodes: int  # the nodes the loss search has spent so far, this stage included
    cut: int  # positions the bounds have cut so far


def stage_proof(state: State, stage: LossStage) -> str:
    """The proof a loss-search stage that ended with no line past its ordeal gives."""
    from castle_envs.castellion.data import ORDEALS

    title = ORDEALS[state.ordeals[stage.goal - 1]].title
    return (
        f"no line passes {title} (ordeal {stage.goal}): the loss search ended "
        f"after {stage.nodes:,} nodes, {stage.cut:,} positions cut by the bounds"
    )


class Solver:
    """The compiled search (module docstring). ``prune``/``table``/``order``/``beam`` switch
    the School supply bound, the table of lost positions, the move ordering and the beam
    searches off (all off: plain exhaustive depth-first search). ``loss`` switches the
    proofs of loss off; ``loss_nodes`` is the loss search's budget (0: the root bounds only)."""

    def __init__(
        self,
        max_nodes: int | None = 1_000_000,
        max_seconds: float | None = None,
        prune: bool = True,
        table: bool = True,
        order: bool = True,
        beam: bool = True,
        inner: int = 2,
        table_bits: int | None = None,
        loss: bool = True,
        loss_nodes: int = LOSS_NODES,
    ):
        from castle_envs.core import jit as _jit

        if not _jit.HAVE_NUMBA:
            raise ImportError("the Castellion solver needs numba: " + _jit.INSTALL_HINT)
        if max_nodes is None and max_seconds is None:
            raise ValueError("give a node budget, a time budget or both")
        if max_nodes is not None and max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        from castle_envs.agents.solvers import castellion_kernel as C

        self._C = C
        self.max_nodes, self.max_seconds = max_nodes, max_seconds
        self.prune, self.table, self.order, self.beam, self.inner = prune, table, order, beam, inner
        if loss_nodes < 0:
            raise ValueError(f"loss_nodes must be >= 0, got {loss_nodes}")
        self.loss, self.loss_nodes = loss, loss_nodes
        if table_bits is None:
            table_bits = 22 if max_nodes is None else max(10, min(22, (2 * max_nodes).bit_length()))
        self._w = C.new_work(table_bits)
        self._lw: Any = None  # the loss search's work arrays, made at its first use

    def prove_loss(self, state: State) -> tuple[str, str, int]:
        """(proof, found_by, loss nodes): a proof that ``state`` is lost, or ("", "", n).
        First the bounds at the root (``castellion_loss.loss_code``); then, with
        ``loss_nodes``, the loss search (``loss_stages``). A stage that ends without a line
        passing its ordeal proves the position lost: every winning line passes that ordeal,
        and every position it pruned is lost."""
        C = self._C
        root, level, flags = root_row(state)
        text = C.describe(C.loss_code(root, level, flags), state.ordeals)
        if text:
            return text, "bound", 0
        stages = self.loss_stages(state)
        for stage in stages:
            if stage.verdict == LOST:
                return stage_proof(state, stage), "loss-search", stage.nodes
        return "", "", stages[-1].nodes if stages else 0

    def loss_stages(self, state: State) -> list[LossStage]:
        """The loss search from ``state``, one stage an ordeal: depth-first search over every
        legal move, the bounds pruning and a table of mirror-canonical positions, for a line
        that passes the current ordeal; if it finds one, the same for the ordeal after it,
        up to the second-last (a line past the last one is a win, the solver's business).
        The stages share ``loss_nodes`` and the table of lost positions (a position that
        cannot pass an ordeal cannot pass a later one). Empty without ``loss_nodes`` or at
        the end of the game."""
        if not self.loss_nodes or state.outcome:
            return []
        C = self._C
        root, level, flags = root_row(state)
        if self._lw is None:
            self._lw = C.new_work(max(10, min(22, (2 * self.loss_nodes).bit_length())))
        w = self._lw
        w.table[:] = 0
        w.stats[:] = 0
        stages = []
        for goal in range(state.current + 1, 3):
            w.S[0, :] = root
            w.stats[4] = 0
            r = C.dfs(w, C.ZOBRIST, level, flags, self.loss_nodes, 2, True, False, goal, True)
            verdict = {C.WIN: PASSED, C.LOSS: LOST}.get(r, OPEN)
            stages.append(LossStage(goal, verdict, int(w.stats[0]), int(w.stats[1])))
            if verdict != PASSED:
                break
        return stages

    def solve(self, state: State) -> Result:
        start = time.perf_counter()
        loss_spent = 0
        if self.loss:
            proof, how, loss_spent = self.prove_loss(state)
            if proof:
                return Result(
                    UNWINNABLE,
                    [],
                    0,
                    time.perf_counter() - start,
                    0,
                    how,
                    state.current,
                    proof,
                    loss_spent,
                )
        r = self._solve(state)
        r.loss_nodes = loss_spent
        r.seconds = time.perf_counter() - start
        return r

    def _solve(self, state: State) -> Result:
        C, w = self._C, self._w
        start = time.perf_counter()
        root, level, flags = root_row(state)
        w.S[0, :] = root
        w.table[:] = 0
        w.stats[:] = 0
        budget = self.max_nodes if self.max_nodes is not None else 1 << 62
        deadline = None if self.max_seconds is None else start + self.max_seconds
        used = 0  # nodes of finished beam runs
        beam_stats = np.zeros(3, np.int64)
        line = np.zeros(C.MAX_DEPTH * 2, np.int64)

        reached = [0]

        def result(verdict, moves=(), found_by=""):
            return Result(
                verdict,
                [int(a) for a in moves],
                int(used + w.stats[0]),
                time.perf_counter() - start,
                int(w.stats[1]),
                found_by,
                3 if verdict == WINNABLE else reached[0],
            )

        def dfs_until(limit):
            r = C.dfs(w, C.ZOBRIST, level, flags, limit, int(self.prune), self.table, self.order)
            if r == C.WIN:
                d = int(w.stats[2])
                return result(WINNABLE, [w.moves[k, w.idx[k] - 1] for k in range(d)], "dfs")
            if r == C.LOSS:
                return result(UNWINNABLE)
            return None

        widths = BEAM_WIDTHS if self.beam else ()
        for width in widths:
            if used + w.stats[0] >= budget or (deadline and time.perf_counter() > deadline):
                return result(UNKNOWN)
            cap = budget - used - w.stats[0]
            if deadline is not None:
                cap = min(cap, self._nodes_left(deadline, used + w.stats[0], start))
            beam_stats[:] = 0
            n = C.beam(root, C.ZOBRIST, level, flags, width, self.inner, cap, beam_stats, line)
            reached[0] = max(reached[0], int(beam_stats[1]))
            spent = int(min(beam_stats[0], cap))
            if n > 0:
                used += int(beam_stats[0])
                return result(WINNABLE, line[:n], f"beam:{width}")
            used += spent
            if used + w.stats[0] >= budget:
                return result(UNKNOWN)
            limit = int(w.stats[0] + max(1, spent * DFS_SHARE))
            limit = min(limit, budget - used)
            if deadline is not None:
                limit = min(
                    limit, int(w.stats[0]) + self._nodes_left(deadline, used + w.stats[0], start)
                )
            found = dfs_until(limit)
            if found is not None:
                return found
        # the beams are done (or off): depth-first search for the rest of the budget
        while True:
            if deadline is None:
                found = dfs_until(budget - used)
                return found if found is not None else result(UNKNOWN)
            if time.perf_counter() > deadline or used + w.stats[0] >= budget:
                return result(UNKNOWN)
            found = dfs_until(min(budget - used, int(w.stats[0]) + 200_000))
            if found is not None:
                return found

    def _nodes_left(self, deadline, nodes, start) -> int:
        """Nodes that fit before ``deadline`` at the rate so far (at least 20,000)."""
        elapsed = max(time.perf_counter() - start, 1e-3)
        rate = max(nodes / elapsed, 20_000.0)
        return max(20_000, int(rate * (deadline - time.perf_counter())))


def exhaustive(state: State, max_nodes: int = 1_000_000) -> str:
    """Plain exhaustive search over ``castellion.rules.State`` (no table, no bound, no ordering):
    ``winnable``, ``unwinnable`` or ``unknown`` past ``max_nodes`` moves played."""
    nodes = 0

    def won(s: State):
        nonlocal nodes
        if s.outcome:
            return s.outcome == 1
        for action in np.flatnonzero(s.legal_action_mask()):
            nodes += 1
            if nodes > max_nodes:
                raise TimeoutError
            child = s.clone()
            child.apply_action(int(action))
            if won(child):
                return True
        return False

    try:
        return WINNABLE if won(state.clone()) else UNWINNABLE
    except TimeoutError:
        return UNKNOWN


def root_row(state: State) -> tuple[np.ndarray, int, int]:
    """``state`` as a kernel row (int8), with its level and its rules as the kernels' flags."""
    from castle_envs.castellion import kernel as K
    from castle_envs.castellion.vector import write_state

    rules = state.rule_options()
    root = np.zeros(K.WORDS, np.int8)
    write_state(root, state, state.level, rules)
    return root, state.level, K.rule_flags(rules)
