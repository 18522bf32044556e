"""More Menace wins with every card known: the nested search (``castellion_nested``) with
its planner playing on a copy of the position whose face-down Assaults are turned up
(``see``), on the Menace deals of seeds 0-499 still undecided (``settled.json``). The search
reads the true deal either way (it is a perfect-information search, like the solver);
seeing, the planner plans for the Assault that will come instead of hedging over the four it
may be, where a player would build towers to find out. From the repository root:

    python experiments/studies/castellion_winnability/seeing_wins.py --top 4
    python experiments/studies/castellion_winnability/seeing_wins.py --top 8 --gap 8
    python experiments/studies/castellion_winnability/seeing_wins.py --nested-level 2 --seeds ...
    python experiments/studies/castellion_winnability/seeing_wins.py --planner w1=0.6,w2=0.3

One JSON line per deal and setting in ``seeing_wins.jsonl`` (seed, settings, won, the
Ordeals the best line passed, the line of a win, whether it replays in the Gymnasium env,
playouts, CPU seconds); deals already there with the same settings, or won, are skipped, so
a killed sweep resumes. A won line that does not replay stops the run. The repository keeps
the journal gzipped (``seeing_wins.jsonl.gz``, which the readers take where the plain file
is absent): a run unpacks it and appends; gzip it again (``gzip -f``) before committing.
"""

import argparse
import gzip
import json
import time
from pathlib import Path

from castle_envs.agents.solvers.castellion import deal, replay_wins
from castle_envs.agents.solvers.castellion_nested import NestedSearch, level_planner
from castle_envs.experiments.studies.records import journal

from castle_envs.castellion.data import MENACE

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_winnability"
RULES = {"foundation_exemption": "placed", "early_encounter": "any_time"}

p = argparse.ArgumentParser()
p.add_argument("--top", type=int, default=4, help="candidates a decision")
p.add_argument("--gap", type=float, default=4.0, help="planner units behind the best")
p.add_argument("--nested-level", type=int, default=1)
p.add_argument("--journal", default=str(HERE / "seeing_wins.jsonl"))
p.add_argument("--seeds", help="comma-separated seeds instead of the undecided ones")
p.add_argument(
    "--planner",
    default="",
    help="the playout planner's options over its Menace defaults, e.g. w1=0.6,w2=0.3",
)
p.add_argument(
    "--score",
    default="moves",
    choices=("moves", "value"),
    help="how lines that fail at the same Ordeal are compared (castellion_nested)",
)
args = p.parse_args()

if args.seeds:
    seeds = [int(x) for x in args.seeds.split(",")]
else:
    settled = json.load(open(HERE / "settled.json"))
    seeds = next(s for s in settled if s["level"] == "menace")["undecided_seeds"]
settings = {"top": args.top, "gap": args.gap, "level": args.nested_level, "see": True}
options = {
    k: (float(v) if "." in v else int(v))
    for k, v in (x.split("=") for x in args.planner.split(",") if x)
}
if options:
    settings["planner"] = options
if args.score != "moves":
    settings["score"] = args.score
journal_path = Path(args.journal)
packed = journal_path.with_name(journal_path.name + ".gz")
if not journal_path.exists() and packed.exists():
    # the repository keeps the journal gzipped: appends go to its unpacked copy
    journal_path.write_bytes(gzip.decompress(packed.read_bytes()))
done = {
    r["seed"]
    for r in journal(journal_path, "--journal", ("seed", "settings", "won"))
    if r["settings"] == settings or r["won"]
}

wins = 0
for seed in seeds:
    if seed in done:
        continue
    t = time.process_time()
    planner = level_planner(MENACE, **options)
    search = NestedSearch(
        args.nested_level, args.top, args.gap, planner=planner, see=True, score=args.score
    )
    found = search.search(deal(seed, "menace", **RULES))
    replays = found.won and replay_wins(seed, "menace", found.line, **RULES)
    if found.won and not replays:
        raise SystemExit(f"menace deal {seed}: a won line that does not replay")
    wins += found.won
    record = {
        "level": "menace",
        "seed": seed,
        "settings": settings,
        "won": bool(found.won),
        "ordeals_passed": found.passed,
        "replays": bool(replays),
        "line": found.line if found.won else [],
        "playouts": found.playouts,
        "cpu_s": round(time.process_time() - t, 2),
    }
    with open(journal_path, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(seed, "WON" if found.won else found.passed, found.playouts, record["cpu_s"], flush=True)
print(f"menace: {wins} won this run")
