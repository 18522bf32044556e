"""Compare the n-tuple value's per-deal results with other agents' on the same deals: its win
rate with the 95% Wilson interval, and per other agent the paired difference with its 95%
interval (``castle_envs.experiments.stats``). Prints JSON.

Run from the repository root::

    python experiments/studies/castle_siege_ntuple/paired.py \
        docs/data/castle_siege_ntuple/ntuple-2000-deals.csv ntuple \
        docs/data/castle_siege_ntuple/heuristic-2000-deals.csv \
        > docs/data/castle_siege_ntuple/ntuple-2000-paired.json

``--vs NAME=CSV[:COLUMN]`` (repeatable) pairs with another n-tuple player's results as
well (a column of ``evaluate_in_kernel.py``'s output).
"""

import argparse
import csv
import glob
import json

import numpy as np
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

#: the other agents' per-deal files, from the repository root
EXIT_NET = "docs/data/castle_siege_exit_net/planned_r0/heldout/per_deal_{}_seed1000000_n2000.csv"
ISMCTS_DEALS = "docs/data/castle_siege_ismcts/vhw12c2-10*-deals.csv"
ISMCTS_SPEC = "ismcts:iterations=1000,width=12,temp=2,c=2,shaped=0.1,standing=0.2"


def per_deal(path: str, column: str, difficulty: str | None = None) -> dict[int, int]:
    """seed -> won (0/1) from a per-deal CSV, the rows of ``difficulty`` where it has that
    column."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if difficulty and r.get("difficulty") not in (None, difficulty):
                continue
            out[int(r["seed"])] = int(float(r[column]))
    return out


def others(heuristic_csv: str, difficulty: str) -> dict[str, dict[int, int]]:
    """The agents compared with, by name: seed -> won."""
    exit_net = EXIT_NET.format(difficulty)
    out = {
        "heuristic": per_deal(heuristic_csv, "heuristic", difficulty),
        "best network alone (exit net planned_r0)": per_deal(exit_net, "model_won"),
        "linear scorer alone": per_deal(exit_net, "linear_won"),
    }
    if difficulty == "very_hard":
        search: dict[int, int] = {}
        for path in sorted(glob.glob(ISMCTS_DEALS)):
            search.update(per_deal(path, ISMCTS_SPEC))
        out["ismcts w12c2 (search, no endgame planner)"] = search
    return out


def compare(mine: dict[int, int], theirs: dict[int, int]) -> dict | None:
    """The paired difference (mine - theirs) on the deals both played; None if none."""
    common = [s for s in sorted(mine) if s in theirs]
    if not common:
        return None
    x = np.array([mine[s] for s in common])
    y = np.array([theirs[s] for s in common])
    p = paired_proportion_difference(x, y)
    return {
        "n": len(common),
        "their_wins": int(y.sum()),
        "diff": p["mean"],
        "ci95": [p["low"], p["high"]],
        "mine_better": p["a_better"],
        "theirs_better": p["b_better"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mine", help="the n-tuple value's per-deal CSV")
    ap.add_argument("column", help="its result column (e.g. ntuple)")
    ap.add_argument("heuristic", help="the heuristic's per-deal CSV (column: heuristic)")
    ap.add_argument(
        "--vs",
        action="append",
        default=[],
        metavar="NAME=CSV[:COLUMN]",
        help="another n-tuple player's per-deal CSV (its column; default ntuple) to pair with",
    )
    args = ap.parse_args()
    extra = {}
    for item in args.vs:
        name, sep, path = item.partition("=")
        if not sep:
            ap.error(f"--vs: expected NAME=CSV[:COLUMN], got {item!r}")
        csv_path, _, column = path.partition(":")
        extra[name] = (csv_path, column or "ntuple")
    res = {}
    for difficulty in ("hard", "very_hard"):
        mine = per_deal(args.mine, args.column, difficulty)
        seeds = sorted(mine)
        a = np.array([mine[s] for s in seeds])
        lo, hi = wilson_interval(int(a.sum()), len(a))
        entry: dict = {
            "deals": [seeds[0], seeds[-1]],
            "n": len(a),
            "wins": int(a.sum()),
            "win_rate": a.mean(),
            "ci95": [lo, hi],
            "vs": {},
        }
        theirs_all = others(args.heuristic, difficulty)
        for name, (path, column) in extra.items():
            theirs_all[name] = per_deal(path, column, difficulty)
        for name, theirs in theirs_all.items():
            found = compare(mine, theirs)
            if found is not None:
                entry["vs"][name] = found
        res[difficulty] = entry
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
