"""Proofs of loss on the study's deals: the bounds at the root and the loss search
(``castle_envs.castellion.solver.Solver.prove_loss``, ``castle_envs.agents.solvers.castellion_loss``)
on every deal of seeds SEED..SEED+DEALS-1 at each level, the won ones included (a proof on a
deal the study proved winnable would show a bound unsound: the script stops). Writes one
JSON line per deal and prints the table of docs/castellion_winnability.md. From the
repository root:

    python experiments/studies/castellion_winnability/loss_proofs.py --deals 500 --loss-budget 200000 \\
        --study docs/data/castellion_winnability/solve_500k_probe.jsonl \\
        --out docs/data/castellion_winnability/loss_proofs_200k.jsonl
"""

import argparse
import json
import time

from castle_envs.agents.solvers.castellion import Solver, deal
from castle_envs.experiments.stats import wilson_interval
from castle_envs.experiments.studies.records import jsonl_with, out_file, read_records

LEVELS = ("school", "academy", "menace")

p = argparse.ArgumentParser()
p.add_argument("--deals", type=int, default=500)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--loss-budget", type=int, default=200_000)
p.add_argument("--levels", default=",".join(LEVELS))
p.add_argument("--study", required=True, help="the study's solver records (JSON lines)")
p.add_argument("--out", required=True)
args = p.parse_args()
out_file(args.out, "--out", jsonl_with("level", "seed", "proof"), "loss-proof records")

study = {
    (r["level"], r["seed"]): r
    for r in read_records(args.study, "--study", ("level", "seed", "verdict"))
}
solver = Solver(max_nodes=1, loss_nodes=args.loss_budget)
rows = []
with open(args.out, "w") as out:
    for level in args.levels.split(","):
        counts = {"bound": 0, "loss-search": 0}
        won = unknown = 0
        seconds = 0.0
        for seed in range(args.seed, args.seed + args.deals):
            verdict = study[(level, seed)]["verdict"]
            won += verdict == "winnable"
            unknown += verdict == "unknown"
            start = time.perf_counter()
            proof, how, nodes = solver.prove_loss(deal(seed, level))
            dt = time.perf_counter() - start
            seconds += dt
            out.write(
                json.dumps(
                    {
                        "level": level,
                        "seed": seed,
                        "study_verdict": verdict,
                        "proof": proof,
                        "found_by": how,
                        "loss_nodes": nodes,
                        "seconds": round(dt, 4),
                    }
                )
                + "\n"
            )
            out.flush()
            if proof:
                if verdict == "winnable":
                    raise SystemExit(
                        f"UNSOUND: {level} deal {seed} is proven winnable, yet: {proof}"
                    )
                counts[how] += 1
        n = args.deals
        lost = counts["bound"] + counts["loss-search"]
        before = wilson_interval(won + unknown, n)[1]
        after = wilson_interval(won + unknown - lost, n)[1]
        rows.append((level, n, won, lost, counts, before, after, seconds))

print(
    "| level | deals | proven winnable (study) | proven lost: root bounds | loss search "
    "| upper end of the 95% interval: before | after | seconds |"
)
print("|---|---|---|---|---|---|---|---|")
for level, n, won, _lost, counts, before, after, seconds in rows:
    print(
        f"| {level} | {n} | {won} | {counts['bound']} | {counts['loss-search']} | "
        f"{before:.1%} | {after:.1%} | {seconds:.0f} |"
    )
