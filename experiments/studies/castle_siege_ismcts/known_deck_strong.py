"""Are the undecided known-deck positions of lost games winnable at all? A much stronger
nested search on a sample of them.

    python experiments/studies/castle_siege_ismcts/known_deck_strong.py POSITIONS.json.gz N

POSITIONS: the first known-deck positions of a screen's lost games (``known_deck_losses.py
--save``). In a random order (generator seed 7), each position goes to the depth-first
solver with 2,000,000 nodes; the ones it leaves undecided, up to N, to level-2 nested search
far beyond the agent's (width 16, 128 runs with seeds from 1,000, the solver's 100,000 nodes
checked along each line). Prints one line a position: the prover, its verdict, and for the
nested search its nodes and CPU-seconds.
"""

import gzip
import json
import sys
import time

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver
from castle_envs.agents.solvers.castle_siege_nested import NestedSearch

from castle_envs.castle_siege.rules import State

with gzip.open(sys.argv[1], "rt") as f:
    positions = json.load(f)
wanted = int(sys.argv[2])
deals = sorted(positions)
np.random.default_rng(7).shuffle(deals)
weights = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json").vector()
solver = CompiledSolver(max_nodes=2_000_000)
strong = NestedSearch(level=2, width=16, runs=128, check=100_000, weights=weights, seed=1000)
searched = 0
for deal in deals:
    state = State.from_dict(positions[deal])
    verdict = solver.solve(state.clone()).verdict
    if verdict != "unknown":
        print(deal, "solver", verdict, flush=True)
        continue
    t = time.process_time()
    result = strong.solve(state.clone())
    cpu = time.process_time() - t
    print(deal, "nested", result.verdict, result.nodes, f"{cpu:.1f}", flush=True)
    searched += 1
    if searched >= wanted:
        break
