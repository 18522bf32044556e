"""Play an n-tuple value model 1-ply on the 2,000 held-out deals of Hard and of Very Hard
(seeds 1,000,000-1,001,999, the deals ``castle-envs evaluate --seed 1000000`` deals) in the
compiled kernel, and write one row a deal.

Run from the repository root::

    python experiments/studies/castle_siege_ntuple/evaluate_in_kernel.py \
        models/castle_siege_ntuple_value docs/data/castle_siege_ntuple/ntuple-2000-deals.csv
"""

import argparse
import csv
import time

import numpy as np
from castle_envs.agents.learned import castle_siege_ntuple_kernel as M
from castle_envs.agents.learned.castle_siege_ntuple import NTupleValue
from castle_envs.agents.learned.saved import read_card
from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch
from castle_envs.experiments.train_ntuple import deals

FIRST_SEED = 1_000_000
DEALS = 2000
#: difficulty -> defender rows a castle starts with
ROWS = {"hard": 3, "very_hard": 4}


def play(value: NTupleValue, rows: int) -> np.ndarray:
    """Whether each held-out deal was won by the value's greedy play (no learning)."""
    won = np.zeros(DEALS, np.bool_)
    M.play_games(
        deals(FIRST_SEED, DEALS),
        np.full(DEALS, rows),
        value.weights,
        False,  # learn
        0.0,  # lr
        0.0,  # lam
        0.0,  # eps
        value.shaped,
        value.prune,
        0,  # seed
        0.0,  # guide
        np.zeros(40),  # guide weights (unused)
        new_scratch(),
        won,
        np.zeros(3),
    )
    return won


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="an ntuple_value model directory")
    ap.add_argument("out", help="the per-deal CSV to write (difficulty, seed, ntuple)")
    args = ap.parse_args()
    value = NTupleValue.load(args.model, read_card(args.model))
    rows = []
    for difficulty, n_rows in ROWS.items():
        start = time.process_time()
        won = play(value, n_rows)
        cpu = (time.process_time() - start) / DEALS
        print(difficulty, int(won.sum()), "wins of", DEALS, f"{cpu:.4f} CPU-s a game")
        rows += [(difficulty, FIRST_SEED + i, float(won[i])) for i in range(DEALS)]
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["difficulty", "seed", "ntuple"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
