"""Measure Castell: AEC steps per second of random masked play, and random-play scores.

    python -m castle_envs.castell.measure --players 4 --games 200 --seed 0

Random play picks uniformly among the legal actions (``EndTurn`` included), through the
wrapped AEC env (``castell_v0.env``) with ``env.last()`` every step, as an agent would.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from .env import env as make_env
from .rules import CATEGORIES


def random_games(num_players: int, games: int, seed: int, advanced: bool = False):
    e = make_env(num_players=num_players, advanced=advanced)
    rng = np.random.default_rng(seed)
    steps = 0
    totals = {c: [] for c in CATEGORIES + ("total",)}
    start = time.perf_counter()
    for g in range(games):
        e.reset(seed=seed + g)
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                if "scores" in info:
                    for c, v in info["scores"].items():
                        totals[c].append(v)
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    elapsed = time.perf_counter() - start
    return steps, elapsed, {c: float(np.mean(v)) for c, v in totals.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--advanced", action="store_true")
    args = parser.parse_args(argv)
    for n in args.players:
        steps, elapsed, means = random_games(n, args.games, args.seed, args.advanced)
        print(f"{n} players, {args.games} games: {steps} steps in {elapsed:.1f} s = "
              f"{steps / elapsed:,.0f} steps/s; {steps / args.games:.0f} steps/game")
        print("  mean final score per category (per player): "
              + ", ".join(f"{c} {v:.2f}" for c, v in means.items()))


if __name__ == "__main__":
    main()
