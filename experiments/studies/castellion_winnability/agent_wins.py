"""More proofs of wins from the player's seat: the ``pimc`` agent (``--agent best``) plays
each study deal that nothing has proven winnable or lost yet (``undecided.csv``), with agent
seeds 0..K-1 until it wins; a won game is a winning line, replayed in the Gymnasium env
before it counts. From the repository root:

    python experiments/studies/castellion_winnability/agent_wins.py --level academy --tries 1 \\
        --journal docs/data/castellion_winnability/agent_wins.jsonl

One JSON line per game (level, seed, agent spec, agent seed, won, Ordeals passed, the line
of a win, whether it replays, CPU seconds); games already in the journal are skipped, so a
killed sweep resumes. The agent never reads a face-down card or the piles' order (its
twin-deal test), so its wins are lines a player could have found; each is still a
perfect-information proof that the deal is winnable, like the solver's.
"""

import argparse
import csv
import json
import time
from pathlib import Path

from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castellion import deal, replay_wins
from castle_envs.experiments.studies.records import journal

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_winnability"
RULES = {"foundation_exemption": "placed", "early_encounter": "any_time"}

p = argparse.ArgumentParser()
p.add_argument("--level", required=True)
p.add_argument("--agent", default="pimc")
p.add_argument("--tries", type=int, default=1, help="agent seeds 0..tries-1 until a win")
p.add_argument("--journal", default=str(HERE / "agent_wins.jsonl"))
p.add_argument("--seeds", help="comma-separated seeds instead of undecided.csv's")
args = p.parse_args()

if args.seeds:
    seeds = [int(x) for x in args.seeds.split(",")]
else:
    seeds = [
        int(r["seed"])
        for r in csv.DictReader(open(HERE / "undecided.csv"))
        if r["level"] == args.level and r["known_passed"] != "3"
    ]
journal_path = Path(args.journal)
done, won = set(), set()
for r in journal(args.journal, "--journal", ("level", "agent", "seed", "agent_seed", "won")):
    if r["level"] == args.level and r["agent"] == args.agent:
        done.add((r["seed"], r["agent_seed"]))
        if r["won"] and r.get("replays"):
            won.add(r["seed"])

agent = make_agent(args.agent, "castellion", seed=0)
for seed in seeds:
    for k in range(args.tries):
        if seed in won:
            break
        if (seed, k) in done:
            continue
        t = time.process_time()
        s = deal(seed, args.level)
        agent.reset([0, seed, k])
        line = []
        while not s.outcome:
            action = agent.act(None, None, state=s.player_view())
            line.append(int(action))
            s.apply_action(action)
        win = s.outcome > 0
        replays = win and replay_wins(seed, args.level, line, **RULES)
        if win and not replays:
            raise SystemExit(f"{args.level} deal {seed}: a won game whose line does not replay")
        record = {
            "level": args.level,
            "seed": seed,
            "agent": args.agent,
            "agent_seed": k,
            "won": bool(win),
            "ordeals_passed": int(s.current),
            "replays": bool(replays),
            "line": line if win else [],
            "cpu_s": round(time.process_time() - t, 2),
        }
        with open(journal_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if win:
            won.add(seed)
        print(seed, k, "WON" if win else s.current, record["cpu_s"], flush=True)
print(f"{args.level}: {len(won)} of {len(seeds)} undecided deals won by {args.agent}")
