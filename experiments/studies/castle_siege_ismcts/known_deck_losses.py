"""Where the agent loses with every card known. Replays the lost deals of a screen
(``screens/NAME.json``, its spec and deals, agent seed ``[0, deal, 0]``), keeps the first
position of each at which no unseen card is left (the player knows the whole deck from
there), and asks which provers find a win from it: the depth-first solver with each node
budget (the agent's endgame planner uses 20,000), and nested Monte Carlo search at level 2
with each setting (``width``, ``runs``, ``check``: the solver's nodes along its line).

    python experiments/studies/castle_siege_ismcts/known_deck_losses.py hard_w12c2 hard 20000,2000000 "12,16,0;12,16,20000;16,16,20000" [--save POSITIONS.json.gz]

``--save`` keeps those first positions (``State.to_dict``, by deal) for ``known_deck_strong.py``.
"""

import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castle_siege import WINNABLE
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver
from castle_envs.agents.solvers.castle_siege_nested import NestedSearch

from castle_envs.castle_siege.rules import State

save = None
if "--save" in sys.argv:
    save = sys.argv.pop(sys.argv.index("--save") + 1)
    sys.argv.remove("--save")
name, difficulty = sys.argv[1], sys.argv[2]
budgets = [int(b) for b in sys.argv[3].split(",")]
settings = [tuple(int(v) for v in s.split(",")) for s in sys.argv[4].split(";")]
screen = json.loads(
    (
        Path(__file__).resolve().parents[3]
        / "docs/data/castle_siege_ismcts"
        / "screens"
        / f"{name}.json"
    ).read_text()
)
agent = make_agent(screen["spec"], "castle-siege", seed=0)
firsts = {}
for deal in sorted(int(d) for d, won in screen["wins"].items() if not won):
    state = State.new_game(np.random.default_rng(deal), difficulty=difficulty)
    agent.reset([0, deal, 0])
    while not state.outcome:
        if deal not in firsts and state.deck_size == int(state.recycled.sum()):
            firsts[deal] = state.clone()
        state.apply_action(agent.act(None, None, state=state.player_view()))
    assert state.outcome != 1, f"deal {deal}: won on replay, lost in the screen"
if save:
    with gzip.open(save, "wt") as f:
        json.dump({str(d): s.to_dict() for d, s in firsts.items()}, f)
turns = sorted(s.turn for s in firsts.values())
print(
    f"{name}: {len(screen['wins'])} deals, lost {sum(1 for w in screen['wins'].values() if not w)},"
)
print(f"  of them {len(firsts)} reach a known deck with the game on (turn {turns[0]}-{turns[-1]})")
for nodes in budgets:
    solver, verdicts, t = CompiledSolver(max_nodes=nodes), [], time.process_time()
    for state in firsts.values():
        verdicts.append(solver.solve(state.clone()).verdict)
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    print(f"  depth-first solver, {nodes:,} nodes: {counts}, {time.process_time() - t:.1f} CPU-s")
weights = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json").vector()
for width, runs, check in settings:
    search = NestedSearch(level=2, width=width, runs=runs, check=check, weights=weights)
    t = time.process_time()
    won = [d for d, s in firsts.items() if search.solve(s.clone()).verdict == WINNABLE]
    print(
        f"  nested level 2, width {width}, runs {runs}, check {check:,}: {len(won)} won,"
        f" {time.process_time() - t:.1f} CPU-s: {won}"
    )
