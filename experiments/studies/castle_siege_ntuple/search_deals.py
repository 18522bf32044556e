"""Play one agent spec on held-out Castle Siege deals, one deal at a time, appending
``seed,won,cpu_s`` to a CSV (resumable: deals already in the file are skipped), and pair
the results with a reference's stored per-deal results from the labelled deal set
(``experiments/deals.py``; ``best`` by default), so the reference need not be played again.

Each deal is played exactly as ``castle-envs evaluate --seed 1000000`` plays it
(``episodes.play_episode``: deal ``default_rng(seed)``, the agent reset with ``[0, seed,
0]``). ``cpu_s`` is the process's CPU time (user + system) over that game (kernels compiled
before the first timed one).

Run from the repository root (``--first``/``--deals`` pick the deals; ``--pair-only``
plays nothing and prints the pairing of what the file holds)::

    python experiments/studies/castle_siege_ntuple/search_deals.py \
        "ismcts:iterations=1000,..." docs/data/castle_siege_ntuple/search/vh-x.csv \
        --first 1000000 --deals 300
"""

import argparse
import csv
import json
import os
import time

import numpy as np
from castle_envs.experiments.deals import load_deals
from castle_envs.experiments.episodes import play_episode
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval
from castle_envs.experiments.studies.records import csv_with, out_file, refuse

#: the untimed warm-up game's deal (a training seed: no study deal)
WARM_UP = 20_000_000


def done_rows(path: str) -> dict[int, tuple[int, float]]:
    """seed -> (won, cpu_s) of the deals ``path`` already holds."""
    if not os.path.exists(path) or not os.path.getsize(path):
        return {}
    try:
        with open(path, newline="") as f:
            return {int(r["seed"]): (int(r["won"]), float(r["cpu_s"])) for r in csv.DictReader(f)}
    except (KeyError, ValueError, TypeError, csv.Error) as err:
        refuse(f"{path}: a damaged row ({err})")


def play(spec: str, difficulty: str, seeds: list[int], path: str) -> None:
    """Play ``spec`` on each seed not yet in ``path``, appending a row after each game."""
    have = done_rows(path)
    if all(seed in have for seed in seeds):
        return
    # one untimed game on a deal outside the study ranges first, so that compiling the
    # kernels (numba) counts in no deal's CPU time
    play_episode("castle-siege", (("difficulty", difficulty),), (), (spec,), WARM_UP, 0)
    new = not os.path.exists(path) or not os.path.getsize(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["seed", "won", "cpu_s"])
        for seed in seeds:
            if seed in have:
                continue
            t0 = time.process_time()
            out = play_episode("castle-siege", (("difficulty", difficulty),), (), (spec,), seed, 0)
            cpu = time.process_time() - t0
            w.writerow([seed, int(out["returns"][0] > 0), f"{cpu:.3f}"])
            f.flush()


def pair(path: str, difficulty: str, seeds: list[int], reference: str) -> dict:
    """The file's win rate, the reference's on the same deals, and their paired difference."""
    rows = done_rows(path)
    seeds = [s for s in seeds if s in rows]
    if not seeds:
        raise SystemExit(f"{path}: none of the chosen deals played yet")
    deals = load_deals("castle-siege", difficulty, "heldout")
    ref = {r.seed: r.results.get(reference) for r in deals.rows}
    if any(ref.get(s) is None for s in seeds):
        raise SystemExit(f"reference {reference!r} has no stored result on some of these deals")
    x = np.array([rows[s][0] for s in seeds])
    y = np.array([int(ref[s]) for s in seeds])
    cpu = np.array([rows[s][1] for s in seeds])
    p = paired_proportion_difference(x, y)

    def summary(wins: np.ndarray) -> dict:
        lo, hi = wilson_interval(int(wins.sum()), len(wins))
        return {"wins": int(wins.sum()), "win_rate": float(wins.mean()), "ci95": [lo, hi]}

    return {
        "deals": [seeds[0], seeds[-1]],
        "n": len(seeds),
        "agent": {**summary(x), "cpu_s_mean": float(cpu.mean()), "cpu_s_max": float(cpu.max())},
        reference: summary(y),
        "paired_agent_minus_reference": {
            "diff": p["mean"],
            "ci95": [p["low"], p["high"]],
            "agent_better": p["a_better"],
            "reference_better": p["b_better"],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agent", help="the agent spec to play (castle-envs evaluate --agent)")
    ap.add_argument("csv", help="the per-deal CSV to append to")
    ap.add_argument("--difficulty", default="very_hard")
    ap.add_argument("--first", type=int, default=1_000_000)
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--reference", default="best", help="the deal set's stored results to pair")
    ap.add_argument("--pair-only", action="store_true")
    args = ap.parse_args()
    out_file(args.csv, "CSV", csv_with("seed", "won", "cpu_s"), "a per-deal table")
    seeds = list(range(args.first, args.first + args.deals))
    if not args.pair_only:
        play(args.agent, args.difficulty, seeds, args.csv)
    print(json.dumps(pair(args.csv, args.difficulty, seeds, args.reference), indent=1))


if __name__ == "__main__":
    main()
