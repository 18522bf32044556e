"""Where are the best agent's lost games lost? Replays lost deals of a screen with the agent
(deterministic: the same moves) and, at the first decision with at most 12, 8, 6, 4, 2, 0
unseen cards in the deck, asks the compiled solver (300,000 nodes, every card known) whether
the true position can still be won.

    python experiments/studies/castle_siege_ismcts/lost_late.py hard hard_w12c2 25
"""

import json
import sys

import numpy as np
from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

from castle_envs.castle_siege.rules import State

diff, screen = sys.argv[1], sys.argv[2]
w = json.load(open(f"docs/data/castle_siege_ismcts/screens/{screen}.json"))["wins"]
lost = [int(k) for k, v in w.items() if not v][: int(sys.argv[3])]
agent = make_agent(
    "ismcts:iterations=1000,width=12,temp=2,c=2,shaped=0.1,standing=0.2", "castle-siege", seed=0
)
solver = CompiledSolver(max_nodes=300000)
marks = (12, 8, 6, 4, 2, 0)
tally = {m: [0, 0] for m in marks}
for seed in lost:
    st = State.new_game(np.random.default_rng(seed), difficulty=diff)
    agent.reset([0, seed, 0])
    seen: set = set()
    row = []
    while not st.outcome:
        v = st.player_view()
        unseen = int(v.deck_size - v.recycled.sum())
        for m in marks:
            if unseen <= m and m not in seen:
                seen.add(m)
                r = solver.solve(st.clone())
                row.append((m, r.verdict))
                tally[m][0] += r.verdict == "winnable"
                tally[m][1] += 1
        st.apply_action(agent.act(None, None, state=v))
    print(seed, row, flush=True)
print({m: f"{a}/{b} winnable" for m, (a, b) in tally.items()})
