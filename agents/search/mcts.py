"""Information-set Monte Carlo tree search (single-observer ISMCTS, Cowling et al. 2012).

Every simulation starts from ``state.determinize(player, rng)``: a copy of the game whose
hidden cards/tiles are re-sampled consistently with what the acting player has seen. The
agent reads nothing else of the real state but its legal-action mask and whose turn it is
(both public), so it cannot cheat: permuting the hidden part of the state in a way the
player cannot tell apart leaves its choices unchanged (tested).

One tree is shared by all determinizations. A node's children are keyed by action id;
selection considers only the actions legal in the current determinization and scores each
child by UCB1 over its *availability* count (how often it was selectable), which is the
ISMCTS correction for moves that exist only in some sampled worlds. Nodes store every
seat's summed return, and a node is scored for the seat that chose it, so the same code
plays solitaire and multi-player games (max^n backup).

Progressive widening (``widening``, default 2: a node visited v times has at most
2·sqrt(v) children) keeps small budgets from being spent on one visit per move when a
position has hundreds of moves. With ``rollout=heuristic`` a node's first expansion is the heuristic's move (then the
others, uniformly), so small budgets refine the heuristic rather than sample blindly among
hundreds of moves.

Budget: ``sims`` simulations per move, or ``time`` seconds (a time budget makes results
depend on machine speed: use ``sims`` for reproducible numbers). Rollouts: ``random``
(uniform legal moves) or ``heuristic`` (the game's heuristic baseline).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np
from castle_envs.agents.base import Agent


class _Node:
    __slots__ = ("children", "visits", "value", "avail")

    def __init__(self, num_players: int):
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.value = [0.0] * num_players
        self.avail = 1


class MCTSAgent(Agent):
    needs_state = True

    def __init__(
        self,
        seed: int | None = None,
        sims: int = 200,
        time: float | None = None,
        c: float = 1.0,
        rollout: str = "random",
        rollout_policy=None,
        max_rollout_steps: int | None = None,
        widening: float = 2.0,
    ):
        super().__init__(seed)
        if sims < 1:
            raise ValueError(f"mcts: sims must be at least 1, got {sims}")
        if time is not None and time <= 0:
            raise ValueError(f"mcts: time must be positive, got {time}")
        if rollout not in ("random", "heuristic"):
            raise ValueError(f"mcts: rollout must be 'random' or 'heuristic', got {rollout!r}")
        if rollout == "heuristic" and rollout_policy is None:
            raise ValueError("mcts: rollout=heuristic needs a heuristic for this game")
        self.sims, self.time, self.c = int(sims), time, float(c)
        self.rollout = rollout
        self.rollout_policy = rollout_policy
        self.max_rollout_steps = max_rollout_steps
        if widening <= 0:
            raise ValueError(f"mcts: widening must be positive, got {widening}")
        self.widening = float(widening)
        self.name = f"mcts:sims={sims}" + (f",rollout={rollout}" if rollout != "random" else "")

    def act(self, observation, action_mask, state=None) -> int:
        if state is None:
            raise ValueError("the mcts agent needs the game state (a clone) to search")
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        player = state.current_player
        n = state.num_players
        root = _Node(n)
        rng = self.rng
        deadline = None if self.time is None else _time.perf_counter() + self.time
        sims = 0
        while True:
            self._simulate(root, _determinize(state, player, rng), n, rng)
            sims += 1
            if deadline is None:
                if sims >= self.sims:
                    break
            elif _time.perf_counter() >= deadline:
                break
        # the most visited root move (ties: the better mean for the mover, then the lower id)
        best, key = int(legal[0]), None
        for a in legal.tolist():
            child = root.children.get(a)
            if child is None:
                continue
            k = (child.visits, child.value[player] / child.visits)
            if key is None or k > key:
                best, key = a, k
        return best

    def _simulate(self, root: _Node, s, n: int, rng) -> None:
        path = [root]
        node = root
        c = self.c
        while not s.is_terminal():
            p = s.current_player
            legal = np.flatnonzero(s.legal_action_mask()).tolist()
            children = node.children
            untried = []
            best = None
            best_ucb = -math.inf
            for a in legal:
                child = children.get(a)
                if child is None:
                    untried.append(a)
                    continue
                child.avail += 1
                ucb = child.value[p] / child.visits + c * math.sqrt(
                    math.log(child.avail) / child.visits
                )
                if ucb > best_ucb:
                    best, best_ucb = a, ucb
            # progressive widening: a node visited v times has at most pw·sqrt(v) children
            if untried and (
                best is None
                or len(legal) - len(untried) < self.widening * math.sqrt(node.visits + 1)
            ):
                a = -1
                if self.rollout_policy is not None and self.rollout == "heuristic":
                    a = self.rollout_policy(s, rng)  # the heuristic's move is tried first
                if a not in untried:
                    a = untried[int(rng.integers(len(untried)))]
                child = _Node(n)
                children[a] = child
                s.apply_legal(a)  # legal in this determinization
                path.append(child)
                break
            node = children[best]  # type: ignore[index]  # a tried move when none is untried
            s.apply_legal(best)
            path.append(node)
        returns = self._rollout(s, rng).tolist()
        for node in path:
            node.visits += 1
            v = node.value
            for i in range(n):
                v[i] += returns[i]

    def _rollout(self, s, rng) -> np.ndarray:
        steps = 0
        limit = self.max_rollout_steps
        policy = self.rollout_policy if self.rollout == "heuristic" else None
        while not s.is_terminal():
            if limit is not None and steps >= limit:
                break
            if policy is not None:
                a = policy(s, rng)
            else:
                legal = np.flatnonzero(s.legal_action_mask())
                a = legal[rng.integers(len(legal))]
            s.apply_legal(int(a))
            steps += 1
        return s.returns()


def _determinize(state, player: int, rng):
    try:
        return state.determinize(player, rng)
    except NotImplementedError:
        kind = f"{type(state).__module__}.{type(state).__qualname__}"
        raise ValueError(
            f"mcts needs {kind}.determinize(), which this game does not implement"
        ) from None


#: ``mcts:`` options and their types
MCTS_OPTIONS = {
    "sims": int,
    "time": float,
    "c": float,
    "rollout": str,
    "max_rollout_steps": int,
    "widening": float,
}


def build_agent(name: str, rest: str, game: str, seed: int | None) -> MCTSAgent:
    """``mcts:sims=200,rollout=heuristic`` (the agent registry's entry)."""
    from castle_envs.agents.options import parse_options
    from castle_envs.agents.registry import heuristic_policy

    options: dict = parse_options(rest, MCTS_OPTIONS, "mcts")
    if options.get("rollout") == "heuristic":
        options["rollout_policy"] = heuristic_policy(game, "heuristic")
    agent = MCTSAgent(seed, **options)
    agent.name = "mcts" + (":" + rest if rest else "")
    return agent
