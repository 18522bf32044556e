"""Paired comparison of the ntuple model's per-deal results with other agents' on the same deals."""

import csv
import glob
import json
import sys

import numpy as np
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

ROOT = ""  # run from the repository root
mine_csv = sys.argv[1]
mine_col = sys.argv[2]
heur_csv = sys.argv[3]


def per_deal(path, col, diff=None):
    out = {}
    for r in csv.DictReader(open(path)):
        if diff and r.get("difficulty") not in (None, diff):
            continue
        out[int(r["seed"])] = int(float(r[col]))
    return out


res = {}
for diff, _tag in (("hard", "hard"), ("very_hard", "very_hard")):
    mine = per_deal(mine_csv, mine_col, diff)
    seeds = sorted(mine)
    a = np.array([mine[s] for s in seeds])
    lo, hi = wilson_interval(int(a.sum()), len(a))
    entry = {
        "deals": [seeds[0], seeds[-1]],
        "n": len(a),
        "wins": int(a.sum()),
        "win_rate": a.mean(),
        "ci95": [lo, hi],
        "vs": {},
    }
    others = {"heuristic": per_deal(heur_csv, "heuristic", diff)}
    pr = (
        ROOT
        + f"docs/data/castle_siege_exit_net/planned_r0/heldout/per_deal_{diff}_seed1000000_n2000.csv"
    )
    others["best network alone (exit net planned_r0)"] = per_deal(pr, "model_won")
    others["linear scorer alone"] = per_deal(pr, "linear_won")
    if diff == "very_hard":
        d = {}
        for f in glob.glob(ROOT + "docs/data/castle_siege_ismcts/vhw12c2-10*-deals.csv"):
            d.update(
                per_deal(f, "ismcts:iterations=1000,width=12,temp=2,c=2,shaped=0.1,standing=0.2")
            )
        others["ismcts w12c2 (search, no endgame planner)"] = d
    for name, d in others.items():
        common = [s for s in seeds if s in d]
        if not common:
            continue
        x = np.array([mine[s] for s in common])
        y = np.array([d[s] for s in common])
        p = paired_proportion_difference(x, y)
        entry["vs"][name] = {
            "n": len(common),
            "their_wins": int(y.sum()),
            "diff": p["mean"],
            "ci95": [p["low"], p["high"]],
            "mine_better": p["a_better"],
            "theirs_better": p["b_better"],
        }
    res[diff] = entry
print(json.dumps(res, indent=1))
