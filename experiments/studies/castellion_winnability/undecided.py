"""The study's undecided deals, named: for every deal of seeds 0-499 a level that is neither
proven winnable (the study, the bounded win search) nor proven lost (the proofs of loss),
what the searches and the bounds say about it. Issue 27 section 3 asks for this where a
level's 95% interval cannot be brought under 15 points. From the repository root:

    python experiments/studies/castellion_winnability/undecided.py --nodes 200000 \\
        --out docs/data/castellion_winnability/undecided.csv

One row a deal (seed, level, the three Ordeal cards, then):

- ``beams_passed``: Ordeals passed on the study's furthest beam (perfect information,
  ``solve_500k_probe.jsonl``'s ``reached``);
- ``planner_passed``: Ordeals the planner passed playing the deal from the player's seat
  (``agents_0_499.jsonl``; at the Menace today's planner, ``info=30``);
- ``stage1``, ``stage2``: the loss search's stages (the compiled depth-first search, every
  legal move, ``castellion_loss``'s bounds pruning, the mirror-canonical table;
  ``Solver.loss_stages``, which ``Solver.prove_loss`` runs; ``--nodes`` for both stages
  together: stage 2 gets what stage 1 left): ``pass`` (a line
  passes that many Ordeals), ``lost`` (no line does: would be a proof of loss; none is
  expected, as the proofs-of-loss run used the same search), ``unk`` (budget spent),
  ``-`` (not run: the stage before did not pass);
- ``win_search``: the bounded search aimed at winning (``win_search_500k.jsonl``, 500,000
  nodes): ``unk`` on every deal here;
- ``known_passed``: the most Ordeals any of these lines passes, so the Ordeal every known
  line fails at is ``known_passed + 1`` (3: today's Menace planner won the deal, a win the
  study's counts do not include; see the study's note on ``info=30``).

Root bounds: no bound of ``castellion_loss`` fires at the root of any deal listed (those
that do are proven lost and not listed). The summary table printed at the end is the one in
``docs/castellion_winnability.md``.
"""

import argparse
import collections
import csv
import json
from pathlib import Path

from castle_envs.agents.solvers.castellion import PASSED, Solver, deal
from castle_envs.experiments.studies.records import csv_with, open_record, out_file

from castle_envs.castellion.data import ORDEALS

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_winnability"
LEVELS = ("school", "academy", "menace")
RULES = {"foundation_exemption": "placed", "early_encounter": "any_time"}

p = argparse.ArgumentParser()
p.add_argument(
    "--nodes", type=int, default=200_000, help="the loss search's budget, both stages together"
)
p.add_argument("--levels", default=",".join(LEVELS))
p.add_argument("--out", default=str(HERE / "undecided.csv"))
args = p.parse_args()
out_file(args.out, "--out", csv_with("level", "seed", "ordeals"), "a table of undecided deals")


def jsonl(name):
    return [json.loads(line) for line in open_record(HERE / name)]


study = {(r["level"], r["seed"]): r for r in jsonl("solve_500k_probe.jsonl")}
lost = {(r["level"], r["seed"]) for r in jsonl("loss_proofs_200k.jsonl") if r["proof"]}
win_search = {(r["level"], r["seed"]): r for r in jsonl("win_search_500k.jsonl")}
planner = {
    (r["level"], r["seed"]): r["ordeals_passed"]
    for r in jsonl("agents_0_499.jsonl")
    if r["agent"] == "planner" and r["level"] != "menace"
}
planner.update(
    {
        ("menace", r["seed"]): r["ordeals_passed"]
        for r in jsonl("agents_0_499_menace_planner_info30.jsonl")
    }
)

solver = Solver(max_nodes=1, loss_nodes=args.nodes)
rows = []
for level in args.levels.split(","):
    for seed in range(500):
        key = (level, seed)
        won_search = win_search.get(key, {}).get("verdict", "")
        if study[key]["verdict"] == "winnable" or key in lost or won_search.startswith("WON"):
            continue
        s = deal(seed, level, **RULES)
        stages = [stage.verdict for stage in solver.loss_stages(s)]
        passed = stages.count(PASSED)
        stages += ["-"] * (2 - len(stages))  # a stage not run: the one before did not pass
        known = max(study[key]["reached"], planner.get(key, 0), passed)
        rows.append(
            {
                "level": level,
                "seed": seed,
                "ordeals": " / ".join(ORDEALS[c].title for c in s.ordeals),
                "beams_passed": study[key]["reached"],
                "planner_passed": planner.get(key, ""),
                "stage1": stages[0],
                "stage2": stages[1],
                "win_search": won_search or "not run",
                "known_passed": known,
            }
        )
        print(level, seed, stages, known, flush=True)

with open(args.out, "w", newline="") as f:
    out = csv.DictWriter(f, fieldnames=list(rows[0]))
    out.writeheader()
    out.writerows(rows)

print()
print(
    "| level | undecided | every known line fails at: Ordeal 1 | Ordeal 2 | Ordeal 3 "
    "| won by today's planner | loss search: stage 1 unk / stage 2 unk | proven lost by it |"
)
print("|---|---|---|---|---|---|---|---|")
for level in args.levels.split(","):
    mine = [r for r in rows if r["level"] == level]
    at = collections.Counter(r["known_passed"] for r in mine)
    unk1 = sum(r["stage1"] == "unk" for r in mine)
    unk2 = sum(r["stage2"] == "unk" for r in mine)
    lost_now = sum("lost" in (r["stage1"], r["stage2"]) for r in mine)
    print(
        f"| {level} | {len(mine)} | {at[0]} | {at[1]} | {at[2]} | {at[3]} "
        f"| {unk1} / {unk2} | {lost_now} |"
    )
