"""Can the first ordeal be passed at all? The loss search's first stage alone (depth-first
search from the deal, every legal move, ``castellion_loss``'s bounds pruning, the
mirror-canonical table, success once ordeal I is passed: ``castellion_solver.dfs`` with
``goal=1``) on the deals the study's beams left at ordeal I, or on the seeds named. Prints
per deal PASS (a line passes ordeal I), LOST (proven: none does) or unk (budget spent), and
the counts. From the repository root:

    python experiments/studies/castellion_winnability/pass_first_ordeal.py --level school \\
        --study docs/data/castellion_winnability/solve_500k_probe.jsonl --nodes 1000000
    python experiments/studies/castellion_winnability/pass_first_ordeal.py --level school \\
        --seeds 2,14 --nodes 1000000 --order
"""

import argparse
import collections
import json

import numpy as np
from castle_envs.agents.solvers import castellion_kernel as C
from castle_envs.agents.solvers.castellion import deal, replay_wins
from castle_envs.experiments.studies.records import journal, read_records

from castle_envs.castellion import kernel as K
from castle_envs.castellion.vector import write_state

p = argparse.ArgumentParser()
p.add_argument("--level", default="school")
p.add_argument(
    "--study",
    help="the study's records: take the deals not proven winnable "
    "whose beams got no further than ordeal I",
)
p.add_argument(
    "--all",
    action="store_true",
    help="with --study: every deal not proven winnable, wherever its beams stopped",
)
p.add_argument("--seeds", help="comma-separated seeds instead")
p.add_argument("--nodes", type=int, default=1_000_000)
p.add_argument("--order", action="store_true", help="children ordered by the evaluation")
p.add_argument("--table-bits", type=int, default=22)
p.add_argument("--quiet", action="store_true", help="the counts only")
p.add_argument(
    "--journal",
    help="JSON Lines file: one record per deal (seed, level, goal, nodes, "
    "verdict, the line of a win); deals already in it are skipped, so a "
    "killed sweep resumes",
)
p.add_argument(
    "--goal",
    type=int,
    default=1,
    help="ordeals to pass (3: win the game; a won line is replayed in the Gymnasium env)",
)
args = p.parse_args()

if args.seeds:
    seeds = [int(x) for x in args.seeds.split(",")]
else:
    seeds = [
        r["seed"]
        for r in read_records(args.study, "--study", ("level", "seed", "verdict", "reached"))
        if r["level"] == args.level
        and r["verdict"] != "winnable"
        and (args.all or r["reached"] == 0)
    ]
rules = {"foundation_exemption": "placed", "early_encounter": "any_time"}
done = set()
if args.journal:
    done = {
        r["seed"]
        for r in journal(args.journal, "--journal", ("seed", "level", "goal", "nodes"))
        if r["level"] == args.level and r["goal"] == args.goal and r["nodes"] == args.nodes
    }
w = C.new_work(args.table_bits)
counts = collections.Counter()
for seed in seeds:
    if seed in done:
        continue
    s = deal(seed, args.level)
    root = np.zeros(K.WORDS, np.int8)
    write_state(root, s, s.level, rules)
    w.table[:] = 0
    w.stats[:] = 0
    w.S[0, :] = root
    out = C.dfs(
        w, C.ZOBRIST, s.level, K.rule_flags(rules), args.nodes, 2, True, args.order, args.goal, True
    )
    verdict = {C.WIN: "PASS", C.LOSS: "LOST"}.get(out, "unk")
    line = []
    if out == C.WIN and args.goal == 3:
        line = [int(w.moves[k, w.idx[k] - 1]) for k in range(int(w.stats[2]))]
        verdict = "WON, replays" if replay_wins(seed, args.level, line, **rules) else "BAD LINE"
    counts[verdict] += 1
    if not args.quiet:
        print(seed, verdict, int(w.stats[0]), "nodes", flush=True)
    if args.journal:
        with open(args.journal, "a") as f:
            f.write(
                json.dumps(
                    {
                        "seed": seed,
                        "level": args.level,
                        "goal": args.goal,
                        "nodes": args.nodes,
                        "order": args.order,
                        "verdict": verdict,
                        "searched": int(w.stats[0]),
                        "line": line,
                    }
                )
                + "\n"
            )
print(dict(counts))
