"""Tables for docs/castellion_winnability.md from the solver's records (solve_*.jsonl) and the
heuristic's games: per level and per Ordeal card, deals proven winnable and where the beams
got stuck. Run from the repository root:

    python experiments/studies/castellion_winnability/analyze.py docs/data/castellion_winnability/solve_500k.jsonl
"""

import sys
from collections import Counter, defaultdict

from castle_envs.agents.solvers.castellion import deal
from castle_envs.experiments.stats import wilson_interval
from castle_envs.experiments.studies.records import read_records

from castle_envs.castellion.data import ORDEALS

records = read_records(sys.argv[1], "records")
by_card = defaultdict(Counter)
stuck = defaultdict(Counter)
for r in records:
    cards = deal(r["seed"], r["level"]).ordeals
    for slot in range(3):
        key = (r["level"], slot, ORDEALS[cards[slot]].title)
        by_card[key]["deals"] += 1
        by_card[key][r["verdict"]] += 1
    if r["verdict"] != "winnable":
        ordeal = min(r["reached"], 2)
        stuck[r["level"]][(ordeal, ORDEALS[cards[ordeal]].title)] += 1
print("| level | slot | card | deals | proven winnable | share (95% interval) |")
print("|---|---|---|---|---|---|")
for (level, slot, title), c in sorted(
    by_card.items(),
    key=lambda kv: (["school", "academy", "menace"].index(kv[0][0]), kv[0][1], kv[0][2]),
):
    lo, hi = wilson_interval(c["winnable"], c["deals"])
    print(
        f"| {level} | {slot + 1} | {title} | {c['deals']} | {c['winnable']} | "
        f"{c['winnable'] / c['deals']:.1%} [{lo:.1%}, {hi:.1%}] |"
    )
print()
print("| level | deals not proven winnable | the beams got no further than |")
print("|---|---|---|")
for level in ("school", "academy", "menace"):
    if level in stuck:
        total = sum(stuck[level].values())
        parts = ", ".join(
            f"{title} {n} ({n / total:.0%})"
            for (o, title), n in sorted(stuck[level].items(), key=lambda kv: -kv[1])
        )
        print(f"| {level} | {total} | {parts} |")
