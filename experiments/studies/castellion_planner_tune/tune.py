"""Tune the Castellion planner's options per level on training deals (coordinate search).

    python experiments/studies/castellion_planner_tune/tune.py LEVEL START N [--rounds R] [--out FILE]

plays the planner (``agents/search/castellion_planner.py``, compiled) on deals START..START+N-1 of
LEVEL (``solve_castellion.deal``; training seeds, 20,000,000 and up) for every setting it
tries, all on the same deals, and keeps the setting with the most wins (ties: the most
Ordeals passed). Each round tries each option at its current value times 0.5, 0.75, 1.33
and 2 (``pyro`` and ``reveal`` flipped); moves to the best and goes on. Every setting's
result is appended to FILE (JSON Lines), so a run resumes and the search is on record.
"""

import argparse
import json
import time
from pathlib import Path

from castle_envs.agents.search.castellion_planner import DEFAULTS, PlannerPolicy
from castle_envs.agents.solvers.castellion import deal
from castle_envs.experiments.studies.records import journal

ap = argparse.ArgumentParser()
ap.add_argument("level")
ap.add_argument("start", type=int)
ap.add_argument("n", type=int)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--out", default=None)
ap.add_argument("--options", default="w1,w2,useful,pressure,grow,info")
args = ap.parse_args()
out = Path(
    args.out
    or Path(__file__).resolve().parents[3]
    / "docs/data/castellion_planner_tune"
    / f"{args.level}-{args.start}-n{args.n}.jsonl"
)
done = {
    json.dumps(r["options"], sort_keys=True): r
    for r in journal(out, "--out", ("options", "level", "wins", "passed"))
}


def play(options):
    key = json.dumps(options, sort_keys=True)
    if key in done:
        return done[key]
    policy = PlannerPolicy(**options)
    t = time.process_time()
    wins, passed = [], 0
    for seed in range(args.start, args.start + args.n):
        s = deal(seed, args.level)
        while not s.outcome:
            s.apply_action(policy(s))
        wins.append(int(s.outcome > 0))
        passed += s.current
    r = {
        "options": options,
        "level": args.level,
        "start": args.start,
        "n": args.n,
        "wins": sum(wins),
        "passed": passed,
        "per_deal": "".join(map(str, wins)),
        "cpu_s": round(time.process_time() - t, 1),
    }
    with open(out, "a") as f:
        f.write(json.dumps(r) + "\n")
    done[key] = r
    print(r["wins"], r["passed"], options, flush=True)
    return r


def better(a, b):
    return (a["wins"], a["passed"]) > (b["wins"], b["passed"])


current = dict(DEFAULTS)
best = play(current)
names = args.options.split(",")
for _ in range(args.rounds):
    moved = False
    for name in names:
        if name in ("pyro", "reveal"):
            tries = [1 - current[name]]
        else:
            tries = [round(current[name] * f, 4) for f in (0.5, 0.75, 1.33, 2.0)]
        for v in tries:
            if not 0 <= v <= 100:
                continue
            r = play(dict(current, **{name: v}))
            if better(r, best):
                best, moved = r, True
        current = dict(best["options"])
    if not moved:
        break
print("best", best["wins"], best["passed"], best["options"])
