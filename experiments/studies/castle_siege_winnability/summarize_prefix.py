"""Summarize the first N deals of solver --out files (the Very Hard 10^6-node run was stopped
after its first 100 deals to free the machine). Run from the repo root:
    python experiments/studies/castle_siege_winnability/summarize_prefix.py 100
"""

import gzip
import json
import sys

from castle_envs.experiments.stats import wilson_interval

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
D = "docs/data/castle_siege_winnability/compiled/"


def rows(name):
    for path, op in ((D + name, open), (D + name + ".gz", gzip.open)):
        try:
            with op(path, "rt") as f:
                return {r["seed"]: r for r in map(json.loads, f)}
        except FileNotFoundError:
            continue
    raise FileNotFoundError(name)


for name in ("very_hard_10000.jsonl", "very_hard_100000.jsonl", "very_hard_1000000.jsonl"):
    r = rows(name)
    sel = [r[s] for s in range(N)]
    won = sum(x["verdict"] == "winnable" for x in sel)
    lost = sum(x["verdict"] == "unwinnable" for x in sel)
    unk = N - won - lost
    lo = wilson_interval(won, N)[0]
    hi = wilson_interval(won + unk, N)[1]
    sec = sum(x["seconds"] for x in sel) / N
    print(
        f"{name}: seeds 0-{N - 1}: winnable {won}, unwinnable {lost}, unknown {unk}, "
        f"95% [{100 * lo:.1f}%, {100 * hi:.1f}%], mean {sec:.2f} s/deal"
    )
