"""Menace encounters by face (up or down when encountered) and result (passed or failed),
over the planner's games on training deals 20,200,000 and up.

    python encounters_face_down.py INFO GAMES     # e.g. 30 200
"""

import collections
import sys

import numpy as np
from castle_envs.agents.search.castellion_planner import PlannerPolicy

from castle_envs.castellion.rules import REVEAL_ORDEAL_PHASE, State

policy = PlannerPolicy(info=float(sys.argv[1]))
encounters, tower_reveals = collections.Counter(), 0
for seed in range(20_200_000, 20_200_000 + int(sys.argv[2])):
    s = State.new_game(np.random.default_rng(seed), "menace")
    while not s.is_terminal():
        action = policy(s, None)
        tower_reveals += s.phase == REVEAL_ORDEAL_PHASE
        slot, down = s.current, s.face_down[s.current]
        s.apply_action(action)
        if s.current != slot or s.is_terminal() and s.outcome < 0:
            encounters[
                (slot, "down" if down else "up", "pass" if s.current != slot else "fail")
            ] += 1
print(sorted(encounters.items()))
print("tower reveals", tower_reveals)
