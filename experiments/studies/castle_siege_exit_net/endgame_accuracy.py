"""How often does a network's move keep a proven-won endgame won? A diagnostic for the
endgame labels (``exit_siege_net collect --teacher endgame:NODES``): at every labelled
decision of an endgame journal (the planner proved the position won), the network's move
is the label, or the position after it is solved again (``--nodes``); a move that ends
the game won counts as kept.

    python experiments/studies/castle_siege_exit_net/endgame_accuracy.py JOURNAL NET [--positions N] [--nodes NODES]

prints one JSON line: the labelled positions read, how many the network answers with the
label, how many its move keeps won (the label's included), proven lost and undecided after
its move, and the same for each game's first labelled decision.
"""

import argparse
import json

import numpy as np
from castle_envs.agents import make_agent
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.registry import shipped_models_dir
from castle_envs.agents.solvers.castle_siege import UNWINNABLE, WINNABLE
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

from castle_envs.castle_siege.rules import State

p = argparse.ArgumentParser()
p.add_argument("journal")
p.add_argument("net", help="a move_policy model directory")
p.add_argument("--positions", type=int, default=600, help="stop after this many positions")
p.add_argument("--nodes", type=int, default=1_000_000)
args = p.parse_args()

agent = make_agent(f"model:{args.net}", "castle-siege", seed=0)
scorer = shipped_models_dir() / "castle_siege_very_hard_ismcts_wide" / "policy.json"
solver = CompiledSolver(max_nodes=args.nodes, probe_weights=LinearPolicy.load(scorer).vector())
counts = dict(positions=0, same_as_label=0, kept_won=0, lost=0, undecided=0)
first = dict(positions=0, kept_won=0)
with open(args.journal) as f:
    for line in f:
        game = json.loads(line)
        labels = dict(game["planned"])
        if not labels:
            continue
        first_step = min(labels)
        state = State.new_game(np.random.default_rng(game["seed"]), difficulty=game["difficulty"])
        agent.reset([2, game["seed"], 0])
        for step, action in enumerate(game["actions"]):
            if step in labels:
                mine = int(agent.act(None, None, state=state.player_view()))
                verdict = WINNABLE
                if mine == labels[step]:
                    counts["same_as_label"] += 1
                else:
                    after = state.clone()
                    after.apply_action(mine)
                    if after.outcome == 0:
                        verdict = solver.solve(after).verdict
                    elif after.outcome != 1:
                        verdict = UNWINNABLE
                counts["positions"] += 1
                counts["kept_won"] += verdict == WINNABLE
                counts["lost"] += verdict == UNWINNABLE
                counts["undecided"] += verdict not in (WINNABLE, UNWINNABLE)
                if step == first_step:
                    first["positions"] += 1
                    first["kept_won"] += verdict == WINNABLE
            state.apply_action(action)
        if counts["positions"] >= args.positions:
            break
print(json.dumps({"journal": args.journal, "net": args.net, **counts, "first_labelled": first}))
