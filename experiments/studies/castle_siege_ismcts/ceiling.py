"""The ISMCTS agent's wins against the proven ceiling on the same deals.

    python experiments/studies/castle_siege_ismcts/ceiling.py very_hard docs/data/castle_siege_ismcts/vh-10*-episodes.jsonl
    python experiments/studies/castle_siege_ismcts/ceiling.py very_hard docs/data/castle_siege_ismcts/vhs-10*-episodes.jsonl --agent model:models/castle_siege_very_hard_ismcts_standing

Reads the nested-search verdicts of the agents' deals (``docs/data/castle_siege_search/
nested_<difficulty>.jsonl.gz``; the last record of a deal counts) and an agent's evaluate
journals; prints the deals played, the proven winnable among them and the agent's wins.
"""

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[3] / "docs/data/castle_siege_ismcts"
AGENT = "model:models/castle_siege_very_hard_ismcts"

args = sys.argv[1:]
if "--agent" in args:
    i = args.index("--agent")
    AGENT = args[i + 1]
    del args[i : i + 2]
difficulty, files = args[0], args[1:]
verdict = {}
with gzip.open(HERE.parent / "castle_siege_search" / f"nested_{difficulty}.jsonl.gz", "rt") as f:
    for line in f:
        record = json.loads(line)
        verdict[record["seed"]] = record["verdict"]
won = {}
for path in files:
    lines = [json.loads(x) for x in open(path) if x.strip()]
    if lines[0]["settings"].get("env_options"):
        continue
    seed = lines[0]["settings"]["seed"]
    for line in lines[1:]:
        if line["agent"] == AGENT:
            won[seed + line["episode"]["index"]] = line["episode"]["returns"][0] > 0
proven = [s for s in won if verdict.get(s) == "winnable"]
wins = sum(won.values())
print(
    f"{difficulty}: {len(won)} deals, {len(proven)} proven winnable, agent wins {wins} "
    f"({wins / max(1, len(proven)):.3f} of the proven; wins outside them: "
    f"{sum(1 for s, w in won.items() if w and verdict.get(s) != 'winnable')})"
)
