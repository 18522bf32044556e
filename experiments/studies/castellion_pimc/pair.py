"""Paired win rates of two agents from ``castle-envs evaluate`` episode files (JSON Lines):
deals keyed by the run's first seed plus the episode index, so several runs of one agent on
parts of a seed range combine (a deal played twice must agree).

    python experiments/studies/castellion_pimc/pair.py "docs/data/castellion_pimc/heldout/pimc-school-*-episodes.jsonl" docs/data/castellion_pimc/heldout/planner-school-1000000-n1000-episodes.jsonl
"""

import glob
import json
import sys

from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval


def load(pattern):
    out = {}
    for f in glob.glob(pattern):
        seed0 = None
        for line in open(f):
            d = json.loads(line)
            if "settings" in d:
                seed0 = d["settings"]["seed"]
                continue
            if "episode" in d:
                seed, won = seed0 + d["episode"]["index"], int(d["episode"]["returns"][0] > 0)
                if out.get(seed, won) != won:
                    raise SystemExit(f"deal {seed} played twice with different results")
                out[seed] = won
    return out


a, b = load(sys.argv[1]), load(sys.argv[2])
ks = sorted(set(a) & set(b))
wa, wb = sum(a[k] for k in ks), sum(b[k] for k in ks)
print(len(ks), "deals", ks[0], "-", ks[-1] if ks else None)
print("A", wa, [round(x * 100, 2) for x in wilson_interval(wa, len(ks))])
print("B", wb, [round(x * 100, 2) for x in wilson_interval(wb, len(ks))])
r = paired_proportion_difference([a[k] for k in ks], [b[k] for k in ks])
print({k: (round(v * 100, 2) if isinstance(v, float) else v) for k, v in r.items()})
