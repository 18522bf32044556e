"""Measurements of the Castellion rules core (run once; not part of the tests).

    python -m castle_envs.castellion.measure --games 10000

prints, per level, the win rate and mean ordeals passed of two random policies (uniform
over the legal moves; the same but never choosing an early encounter while another move
exists), and the core's random masked steps per second. ``--check`` also asserts tile
conservation and the JSON round trip after every step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .actions import ENCOUNTER_NOW
from .data import LEVELS, NUM_KINDS, TOTAL_COUNTS
from .rules import State


def _check(s: State) -> None:
    counts = s.tile_counts()
    totals = [sum(place[k] for place in counts.values()) for k in range(NUM_KINDS)]
    assert totals == list(TOTAL_COUNTS), (totals, s.to_dict())
    assert State.from_json(s.to_json()) == s


def play(level: str, games: int, seed: int, avoid_early: bool, check: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    wins = passed = steps = 0
    start = time.perf_counter()
    for _ in range(games):
        s = State.new_game(rng, level)
        while not s.is_terminal():
            legal = np.flatnonzero(s.legal_action_mask())
            if avoid_early and len(legal) > 1:
                legal = legal[legal != ENCOUNTER_NOW]
            s.apply_action(legal[rng.integers(len(legal))])
            steps += 1
            if check:
                _check(s)
        wins += s.won
        passed += s.current
    seconds = time.perf_counter() - start
    return {
        "win_rate": wins / games,
        "wins": wins,
        "mean_ordeals_passed": passed / games,
        "steps_per_game": steps / games,
        "steps_per_s": steps / seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--levels", nargs="*", default=list(LEVELS))
    parser.add_argument(
        "--check",
        action="store_true",
        help="after every step assert tile conservation and the JSON round "
        "trip (slower; speeds then include the checks)",
    )
    args = parser.parse_args(argv)
    for level in args.levels:
        for name, avoid in (("uniform", False), ("no-early", True)):
            r = play(level, args.games, args.seed, avoid, args.check)
            print(
                f"{level:8s} {name:9s} games {args.games}  wins {r['wins']} "
                f"({100 * r['win_rate']:.2f}%)  ordeals passed {r['mean_ordeals_passed']:.3f}"
                f"  steps/game {r['steps_per_game']:.1f}  {r['steps_per_s']:,.0f} steps/s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
