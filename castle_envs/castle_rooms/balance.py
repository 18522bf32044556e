"""Measure play balance over seeded games: how games end, and first-player advantage.

    python -m castle_envs.castle_rooms.balance --games 10000 --players 2 3 4 --policy random

Policies: ``random`` (uniform over legal moves) and ``greedy`` (play fitting Rooms on the
longest open row, free a blocked row, drop a Dragon on the opponents' longest row, start rows
only when needed, end the turn when nothing helps). Used to tune the reconstructed connectors.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from . import actions as A
from .rules import CastleRoomsState


def random_policy(state: CastleRoomsState, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(state.legal_action_mask())
    return int(legal[rng.integers(len(legal))])


def greedy_policy(state: CastleRoomsState, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(state.legal_action_mask())
    me, n = state.player, state.num_players
    best, best_value = A.END_TURN if A.END_TURN in legal else int(legal[0]), -1e9
    for legal_action in legal:
        a = int(legal_action)
        value: float
        if a < A.NEW_ROW_BASE:
            value = 100 + len(state.rows[me][(a - A.PLAY_BASE) % A.MAX_ROWS].cards)
        elif a < A.DRAGON_BASE:
            value = 1 if a not in (A.END_TURN,) else 0
        elif a < A.KNIGHT_BASE:
            k, r = divmod(a - A.DRAGON_BASE, A.MAX_ROWS)
            value = 50 + len(state.rows[(me + k + 1) % n][r].cards) * 5
        elif a < A.DISCARD_BASE:
            value = 90 + len(state.rows[me][a - A.KNIGHT_BASE].cards)
        elif a < A.END_TURN:
            value = 0.5
        else:
            value = 0
        value += rng.random() * 1e-3
        if value > best_value:
            best, best_value = a, value
    return best


POLICIES = {"random": random_policy, "greedy": greedy_policy}


def measure(
    players: int,
    games: int,
    policy: Callable[[CastleRoomsState, np.random.Generator], int],
    seed: int = 0,
    rules: dict | None = None,
) -> dict:
    rng = np.random.default_rng(seed)
    by_row = first_wins = shared = steps = capped = 0
    lengths = []
    for _g in range(games):
        state = CastleRoomsState.deal(players, rng, rules)
        while not state.is_terminal():
            state.apply_legal(policy(state, rng))
            steps += 1
        by_row += state.end_reason == "row"
        first_wins += 0 in state.winners  # type: ignore[operator]  # set: the game is over
        shared += len(state.winners) > 1  # type: ignore[arg-type]
        capped += any(len(rows) >= A.MAX_ROWS for rows in state.rows)
        lengths.append(max(len(r.cards) for rows in state.rows for r in rows))
    return {
        "players": players,
        "games": games,
        "row_win_share": by_row / games,
        "first_player_win_rate": first_wins / games,
        "shared_win_share": shared / games,
        "mean_longest_row": float(np.mean(lengths)),
        "steps_per_game": steps / games,
        "row_cap_share": capped / games,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--policy", choices=sorted(POLICIES), default="random")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for n in args.players:
        t = time.perf_counter()
        result = measure(n, args.games, POLICIES[args.policy], args.seed)
        result["seconds"] = round(time.perf_counter() - t, 1)
        print({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()})


if __name__ == "__main__":
    main()
