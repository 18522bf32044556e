"""Measure Castell: AEC steps per second of random masked play, and random-play scores.

    python -m castle_envs.castell.measure --players 4 --games 200 --seed 0

Random play picks uniformly among the legal actions (``EndTurn`` included), through the
wrapped AEC env (``castell_v0.env``) with ``env.last()`` every step, as an agent would.
``--agent heuristic`` plays a simple festival seeker instead (``heuristic_action``), a
baseline that reaches festivals and local performances, so the scores say something.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from . import data as D
from .actions import (
    DISMANTLE_ALL,
    END_TURN,
    LEVEL0,
    LEVEL_TUPLES,
    MOVE0,
    RECRUIT0,
    SP_PERFORM,
    TOKEN0,
    TRAIN0,
    WHEEL0,
)
from .env import SCORE_KEYS
from .env import env as make_env
from .rules import CATEGORIES, State

_TRAIN_ORDER = (D.BALANCE, D.WIDTH, D.STRENGTH, D.BASE, D.MIX)


def _next_hop(start: int, goal: int) -> int:
    """First region on a shortest path from start to goal."""
    parent = {goal: goal}
    todo = [goal]
    while todo:
        r = todo.pop(0)
        for a in D.ADJACENT[r]:
            if a not in parent:
                parent[a] = r
                todo.append(a)
    return parent[start]


def heuristic_action(s: State) -> int:
    """Perform when possible; walk to the next festival; train; recruit; stack big numbers
    wide at the bottom; take a tower down that cannot enter the festival; then end the turn."""
    m = s.legal_action_mask()
    p = s.current_player
    for base in (WHEEL0, TOKEN0):
        for j in range(D.LP_PER_ROW):
            if m[base + SP_PERFORM + j]:
                return base + SP_PERFORM + j
    upcoming = [i for i, (rnd, _) in enumerate(D.CALENDAR) if rnd >= s.round and s.fest_held[i]]
    target = int(s.fest_region[upcoming[0]]) if upcoming else -1
    sizes = s.fest_sizes[upcoming[0]] if upcoming else ()
    pawn = int(s.pawn[p])
    if target >= 0 and pawn != target:
        goal = target if pawn < 0 else _next_hop(pawn, target)
        if m[MOVE0 + goal]:
            return MOVE0 + goal
    for k in _TRAIN_ORDER:
        if m[TRAIN0 + k]:
            return TRAIN0 + k
    for size in list(sizes) + list(range(D.SIZES - 1, -1, -1)):
        if m[RECRUIT0 + size]:
            return RECRUIT0 + size
    tower = s.towers[p]
    if (
        len(tower) >= 3
        and any(s.in_tower[p, z] == 0 for z in sizes)
        and m[DISMANTLE_ALL]
        and s.edits == 0
    ):
        return DISMANTLE_ALL
    levels = np.flatnonzero(m[LEVEL0 : LEVEL0 + len(LEVEL_TUPLES)])
    if len(levels):
        # widest first, then the biggest numbers (so smaller ones fit above)
        best = max(
            levels,
            key=lambda i: (
                LEVEL_TUPLES[i][0] if len(tower) == 0 else -LEVEL_TUPLES[i][0],
                LEVEL_TUPLES[i][1],
            ),
        )
        if len(tower) == 0 or LEVEL_TUPLES[best][0] <= tower[-1][0]:
            return LEVEL0 + int(best)
    return END_TURN


def heuristic_policy(state: State, rng: np.random.Generator | None = None) -> int:
    """``heuristic_action`` as an agent's ``policy(state, rng)`` (the rng is unused)."""
    return heuristic_action(state)


def random_games(
    num_players: int, games: int, seed: int, advanced: bool = False, agent: str = "random"
) -> tuple[int, float, dict[str, float]]:
    """Play ``games`` games; return (steps, seconds, mean final score per category)."""
    e = make_env(num_players=num_players, advanced=advanced)
    rng = np.random.default_rng(seed)
    steps = 0
    totals: dict[str, list] = {c: [] for c in CATEGORIES + ("total",)}
    start = time.perf_counter()
    for g in range(games):
        e.reset(seed=seed + g)
        for _ in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                if term and "category_scores" in info:
                    for c, v in zip(SCORE_KEYS, info["category_scores"].tolist()):
                        totals[c].append(v)
                e.step(None)
                continue
            if agent == "heuristic":
                e.step(heuristic_action(e.unwrapped.game_state))
            else:
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    elapsed = time.perf_counter() - start
    return steps, elapsed, {c: float(np.mean(v)) for c, v in totals.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--advanced", action="store_true")
    parser.add_argument("--agent", choices=("random", "heuristic"), default="random")
    args = parser.parse_args(argv)
    for n in args.players:
        steps, elapsed, means = random_games(n, args.games, args.seed, args.advanced, args.agent)
        print(
            f"{n} players, {args.games} games: {steps} steps in {elapsed:.1f} s = "
            f"{steps / elapsed:,.0f} steps/s; {steps / args.games:.0f} steps/game"
        )
        print(
            "  mean final score per category (per player): "
            + ", ".join(f"{c} {v:.2f}" for c, v in means.items())
        )


if __name__ == "__main__":
    main()
