"""How much of the network's gap to the search is the endgame? The shipped network plays, but
once no unseen card is left in the deck the search agent's endgame planner (the compiled
solver, ``endgame`` nodes, playing a proven line) takes over, as it does inside the ISMCTS
agent. A diagnostic, not an agent: the issue's network goal is the network alone.

    python experiments/studies/castle_siege_exit_net/net_endgame.py NAME START N [DIFFICULTY] [--net DIR] [--endgame NODES]

plays deals START..START+N-1, agent seed [0, deal, 0] as screen.py does, and keeps per-deal
wins (network alone, and with the endgame planner) in docs/data/castle_siege_exit_net/diagnostics/NAME.json (resumed).
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import EndgamePlanner, LinearPolicy
from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

from castle_envs.castle_siege.rules import State

p = argparse.ArgumentParser()
p.add_argument("name")
p.add_argument("start", type=int)
p.add_argument("n", type=int)
p.add_argument("difficulty", nargs="?", default="very_hard")
p.add_argument("--net", default="models/castle_siege_very_hard_exit_net")
p.add_argument("--endgame", type=int, default=20000)
p.add_argument(
    "--scorer",
    default="models/castle_siege_very_hard_ismcts_wide/policy.json",
    help="the solver's probe ordering, as the best agent's endgame uses it",
)
args = p.parse_args()
path = (
    Path(__file__).resolve().parents[3]
    / "docs/data/castle_siege_exit_net"
    / "diagnostics"
    / f"{args.name}.json"
)
res = (
    json.loads(path.read_text())
    if path.exists()
    else {
        "net": args.net,
        "endgame": args.endgame,
        "difficulty": args.difficulty,
        "alone": {},
        "with_endgame": {},
        "planner_moves": {},
    }
)


def play(seed: int, planner: EndgamePlanner | None) -> tuple[int, int]:
    agent = make_agent(f"model:{args.net}", "castle-siege", seed=0)
    agent.reset([0, seed, 0])
    st = State.new_game(np.random.default_rng(seed), difficulty=args.difficulty)
    used = 0
    while not st.outcome:
        view = st.player_view()
        action = None
        if planner is not None and view.deck_size == int(view.recycled.sum()):
            action = planner.move(view)
        if action is None:
            action = agent.act(None, None, state=view)
        else:
            used += 1
        st.apply_action(int(action))
    return int(st.outcome == 1), used


probe = LinearPolicy.load(args.scorer).vector()
t0 = time.process_time()
for seed in range(args.start, args.start + args.n):
    if str(seed) in res["with_endgame"]:
        continue
    res["alone"][str(seed)] = play(seed, None)[0]
    planner = EndgamePlanner(CompiledSolver(max_nodes=args.endgame, probe_weights=probe))
    won, used = play(seed, planner)
    res["with_endgame"][str(seed)] = won
    res["planner_moves"][str(seed)] = used
    path.write_text(json.dumps(res))
a, e = res["alone"], res["with_endgame"]
print(
    args.name,
    "alone",
    sum(a.values()),
    "with endgame",
    sum(e.values()),
    "/",
    len(e),
    f"cpu {time.process_time() - t0:.0f}s",
)
