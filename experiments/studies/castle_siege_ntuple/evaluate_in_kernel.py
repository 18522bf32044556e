"""Play an n-tuple value model 1-ply on the 2,000 held-out deals of Hard and of Very Hard
(seeds 1,000,000-1,001,999, the deals ``castle-envs evaluate --seed 1000000`` deals) in the
compiled kernel, and write one row a deal (``--column``: the result's column; an existing
CSV of the same deals gets it as one more column). ``--two-ply`` plays the kernel's two-ply player
instead (``best_move2``: a small search; so does a model whose card sets ``two_ply``),
``--first``/``--deals`` pick other deals.

Run from the repository root::

    python experiments/studies/castle_siege_ntuple/evaluate_in_kernel.py \
        models/castle_siege_ntuple_value docs/data/castle_siege_ntuple/ntuple-2000-deals.csv
"""

import argparse
import csv
import os
import time

import numpy as np
from castle_envs.agents.learned import castle_siege_ntuple_kernel as M
from castle_envs.agents.learned.castle_siege_ntuple import NTupleValue
from castle_envs.agents.learned.saved import read_card
from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch
from castle_envs.experiments.studies.records import csv_with, out_file, refuse
from castle_envs.experiments.train_ntuple import deals

FIRST_SEED = 1_000_000
DEALS = 2000
#: difficulty -> defender rows a castle starts with
ROWS = {"hard": 3, "very_hard": 4}


def play(
    value: NTupleValue, rows: int, first: int = FIRST_SEED, n: int = DEALS, two_ply: bool = False
) -> np.ndarray:
    """Whether each deal was won by the value's greedy play (no learning)."""
    won = np.zeros(n, np.bool_)
    if two_ply:
        M.play_games2(
            deals(first, n), np.full(n, rows), value.weights, value.prune, value.shaped, won
        )
        return won
    M.play_games(
        deals(first, n),
        np.full(n, rows),
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


def write_column(path: str, column: str, results: list[tuple[str, int, int]]) -> None:
    """Write ``results`` (difficulty, seed, won) as ``column`` of the per-deal CSV ``path``:
    a new file, or one more column (or a column replaced) of a file with the same deals."""
    table = {(d, seed): {"difficulty": d, "seed": str(seed)} for d, seed, _ in results}
    names = ["difficulty", "seed"]
    if os.path.exists(path):
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                old = {(r["difficulty"], int(r["seed"])): r for r in reader}
                names = list(reader.fieldnames or names)
        except (KeyError, ValueError, TypeError, csv.Error) as err:
            refuse(f"{path}: not a per-deal table this script wrote ({err})")
        if set(old) != set(table):
            refuse(f"{path}: holds other deals; write {column} to another file")
        table = old
    for d, seed, won in results:
        table[(d, seed)][column] = str(won)
    names += [] if column in names else [column]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, names)
        w.writeheader()
        w.writerows(table.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="an ntuple_value model directory")
    ap.add_argument("out", help="the per-deal CSV to write (difficulty, seed, COLUMN)")
    ap.add_argument("--column", default="ntuple", help="the result's column in OUT")
    ap.add_argument("--two-ply", action="store_true", help="the two-ply player (a search)")
    ap.add_argument("--first", type=int, default=FIRST_SEED, help="the first deal's seed")
    ap.add_argument("--deals", type=int, default=DEALS, help="deals a difficulty")
    ap.add_argument("--levels", default="hard,very_hard", help="difficulties, comma-separated")
    args = ap.parse_args()
    out_file(args.out, "OUT", csv_with("difficulty", "seed"), "a per-deal table")
    value = NTupleValue.load(args.model, read_card(args.model))
    results = []
    for difficulty in args.levels.split(","):
        start = time.process_time()
        won = play(value, ROWS[difficulty], args.first, args.deals, args.two_ply or value.two_ply)
        cpu = (time.process_time() - start) / args.deals
        print(difficulty, int(won.sum()), "wins of", args.deals, f"{cpu:.4f} CPU-s a game")
        results += [(difficulty, args.first + i, int(won[i])) for i in range(args.deals)]
    write_column(args.out, args.column, results)


if __name__ == "__main__":
    main()
