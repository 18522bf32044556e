"""Screen a Castellion agent spec on training deals by how far it gets: the Ordeals passed
in each game (3 and a win: ``won``), which separates Menace settings on a few hundred deals
where the win rate alone (about 2%) cannot. From the repository root:

    python docs/data/castellion_pimc/screen.py NAME SPEC LEVEL START N

plays deals START..START+N-1 with agent seed [0, deal, 0], the player's view handed to the
agent, and keeps per-deal results in screens/NAME.json (resumed).
"""

import collections
import json
import sys
import time
from pathlib import Path

from castle_envs.agents.registry import make_agent
from castle_envs.vector.solve_castellion import deal

name, spec, level = sys.argv[1], sys.argv[2], sys.argv[3]
start, n = int(sys.argv[4]), int(sys.argv[5])
path = Path(__file__).resolve().parent / "screens" / f"{name}.json"
path.parent.mkdir(exist_ok=True)
res = json.loads(path.read_text()) if path.exists() else {"spec": spec, "level": level, "deals": {}}
agent = make_agent(spec, "castellion", seed=0)
t0 = time.process_time()
played = 0
for seed in range(start, start + n):
    if str(seed) in res["deals"]:
        continue
    s = deal(seed, level)
    agent.reset([0, seed, 0])
    while not s.outcome:
        s.apply_action(agent.act(None, None, state=s.player_view()))
    res["deals"][str(seed)] = {"passed": int(s.current), "won": bool(s.outcome > 0)}
    path.write_text(json.dumps(res))
    played += 1
d = res["deals"].values()
passed = collections.Counter(r["passed"] for r in d)
cpu = (time.process_time() - t0) / max(1, played)
print(
    f"{name}: {sum(r['won'] for r in d)} won of {len(d)}; Ordeals passed {dict(sorted(passed.items()))}; "
    f"{cpu:.1f} CPU-s a game this run"
)
