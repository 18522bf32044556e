"""Screen an agent spec on training deals (the settings tables of the model cards).

    python experiments/studies/castle_siege_ismcts/screen.py NAME SPEC START N [DIFFICULTY]

plays deals START..START+N-1 (Very Hard by default) with agent seed [0, deal, 0], the
player's view handed to the agent, and keeps per-deal wins in screens/NAME.json (resumed).
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.registry import make_agent

from castle_envs.castle_siege.rules import State

name, spec, start, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
diff = sys.argv[5] if len(sys.argv) > 5 else "very_hard"
path = str(
    Path(__file__).resolve().parents[3]
    / "docs/data/castle_siege_ismcts"
    / "screens"
    / f"{name}.json"
)
try:
    res = json.load(open(path))
except FileNotFoundError:
    res = {"spec": spec, "wins": {}}
agent = make_agent(spec, "castle-siege", seed=0)
t0 = time.process_time()
for seed in range(start, start + n):
    if str(seed) in res["wins"]:
        continue
    st = State.new_game(np.random.default_rng(seed), difficulty=diff)
    agent.reset([0, seed, 0])
    while not st.outcome:
        st.apply_action(agent.act(None, None, state=st.player_view()))
    res["wins"][str(seed)] = int(st.outcome == 1)
    json.dump(res, open(path, "w"))
w = res["wins"]
print(name, sum(w.values()), "/", len(w), f"cpu {time.process_time() - t0:.0f}s")
