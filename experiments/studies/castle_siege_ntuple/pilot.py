"""Short pilots of training settings for the n-tuple value: each variant starts at a model's
tables, learns by TD(lambda) self-play for some games on training deals (seeds from
``--seed``, 20,000,000 or more), then plays 1-ply on study deals (Hard and Very Hard from
1,005,000, away from the 1,000,000-1,001,999 figures); one CSV row a variant and difficulty.

Run from the repository root (variants: ``name:levels:lr[:lam[:shaped]]``, levels as
``h1v1`` = one Hard game then one Very Hard game a cycle)::

    python experiments/studies/castle_siege_ntuple/pilot.py --games 50000 \
        --out docs/data/castle_siege_ntuple/pilots.csv models/castle_siege_ntuple_value \
        same:h1v1:1.0 low:h1v1:0.25 vh:v1:0.25 vh3:h1v3:0.25

A ``start`` row (the model's own tables, no training) comes first.
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
from castle_envs.experiments.stats import win_record
from castle_envs.experiments.studies.records import csv_with, out_file
from castle_envs.experiments.train_ntuple import deals

STUDY_SEED = 1_005_000
ROWS = {"h": 3, "v": 4}
NAMES = {3: "hard", 4: "very_hard"}
CHUNK = 10_000


def parse_variant(text: str) -> dict:
    """``name:levels:lr[:lam[:shaped]]`` as the settings ``train`` reads."""
    parts = text.split(":")
    levels = [
        ROWS[parts[1][i]] for i in range(0, len(parts[1]), 2) for _ in range(int(parts[1][i + 1]))
    ]
    return {
        "name": parts[0],
        "cycle": levels,
        "lr": float(parts[2]),
        "lam": float(parts[3]) if len(parts) > 3 else 0.5,
        "shaped": float(parts[4]) if len(parts) > 4 else 0.1,
    }


def train(w: np.ndarray, var: dict, games: int, seed: int, lr_end: float | None) -> float:
    """TD(lambda) self-play on ``w`` in place; returns CPU seconds."""
    x = new_scratch()
    cpu = time.process_time()
    done = 0
    while done < games:
        n = min(CHUNK, games - done)
        rows = np.array([var["cycle"][(done + i) % len(var["cycle"])] for i in range(n)])
        frac = done / games
        lr = var["lr"] * (lr_end / var["lr"]) ** frac if lr_end else var["lr"]
        M.play_games(
            deals(seed + done, n), rows, w, True, lr, var["lam"], 0.01, var["shaped"],
            True, seed + done, 0.0, np.zeros(40), x, np.zeros(n, np.bool_), np.zeros(3),
        )  # fmt: skip
        done += n
    return time.process_time() - cpu


def evaluate(w: np.ndarray, rows: int, n: int) -> np.ndarray:
    """Which of ``n`` study deals from ``STUDY_SEED`` the greedy policy wins."""
    won = np.zeros(n, np.bool_)
    M.play_games(
        deals(STUDY_SEED, n), np.full(n, rows), w, False, 0.0, 0.0, 0.0, 0.1, True, 0,
        0.0, np.zeros(40), new_scratch(), won, np.zeros(3),
    )  # fmt: skip
    return won


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("variants", nargs="*")
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=22_000_000)
    ap.add_argument("--hard-deals", type=int, default=2000)
    ap.add_argument("--vh-deals", type=int, default=4000)
    ap.add_argument("--lr-end", type=float, default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--save", default="", help="folder for each variant's weights (.npy)")
    args = ap.parse_args()
    if args.seed < 20_000_000:
        ap.error("--seed: training deals are 20,000,000 and up")
    out_file(args.out, "--out", csv_with("variant", "games"), "a table of pilots")
    base = NTupleValue.load(args.model, read_card(args.model)).weights
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        out = csv.writer(f)
        if new:
            out.writerow(
                [
                    "variant",
                    "games",
                    "lr_end",
                    "cpu_seconds",
                    "difficulty",
                    "deals",
                    "wins",
                    "win_rate",
                    "ci95",
                ]
            )
        for text in ["start:h1:1.0", *args.variants]:
            var = parse_variant(text)
            w = base.astype(np.float32).copy()
            games = 0 if var["name"] == "start" else args.games
            cpu = train(w, var, games, args.seed, args.lr_end) if games else 0.0
            if args.save and games:
                np.save(os.path.join(args.save, var["name"] + ".npy"), w)
            for rows, n in ((3, args.hard_deals), (4, args.vh_deals)):
                won = evaluate(w, rows, n)
                rec = win_record(int(won.sum()), n, "ci95")
                lo, hi = rec["ci95"]
                row = [
                    text,
                    games,
                    args.lr_end or "",
                    f"{cpu:.0f}",
                    NAMES[rows],
                    n,
                    rec["wins"],
                    f"{rec['win_rate']:.4f}",
                    f"{lo:.4f} {hi:.4f}",
                ]
                out.writerow(row)
                f.flush()
                print(*row, flush=True)


if __name__ == "__main__":
    main()
