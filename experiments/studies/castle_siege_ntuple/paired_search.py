"""Two agents' per-deal results on the same deals (``castle-envs evaluate ... --out DIR
--name NAME`` writes ``NAME-deals.csv``): each win rate with its 95% Wilson interval and the
paired difference (first - second) with Newcombe's 95% interval
(``castle_envs.experiments.stats``). Prints JSON.

Run from the repository root::

    python experiments/studies/castle_siege_ntuple/paired_search.py \
        docs/data/castle_siege_ntuple/search/vh-mix05-1000000-n50-deals.csv \
        docs/data/castle_siege_ntuple/search/vh-base-1000000-n50-deals.csv
"""

import argparse
import csv
import json

import numpy as np
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval


def per_deal(path: str) -> tuple[str, dict[int, int]]:
    """(the agent's spec, seed -> won) from a one-agent ``*-deals.csv``."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    specs = [k for k in rows[0] if k not in ("difficulty", "seed")]
    if len(specs) != 1:
        raise SystemExit(f"{path}: expected one agent's column, got {specs}")
    return specs[0], {int(r["seed"]): int(float(r[specs[0]])) for r in rows}


def summary(wins: np.ndarray) -> dict:
    lo, hi = wilson_interval(int(wins.sum()), len(wins))
    return {"wins": int(wins.sum()), "n": len(wins), "win_rate": wins.mean(), "ci95": [lo, hi]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", help="the first agent's NAME-deals.csv")
    ap.add_argument("second", help="the second agent's NAME-deals.csv (the same deals)")
    args = ap.parse_args()
    (spec_a, a), (spec_b, b) = per_deal(args.first), per_deal(args.second)
    if sorted(a) != sorted(b):
        raise SystemExit("the two files hold different deals")
    seeds = sorted(a)
    x = np.array([a[s] for s in seeds])
    y = np.array([b[s] for s in seeds])
    p = paired_proportion_difference(x, y)
    out = {
        "deals": [seeds[0], seeds[-1]],
        "first": {"agent": spec_a, **summary(x)},
        "second": {"agent": spec_b, **summary(y)},
        "paired_first_minus_second": {
            "diff": p["mean"],
            "ci95": [p["low"], p["high"]],
            "first_better": p["a_better"],
            "second_better": p["b_better"],
        },
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
