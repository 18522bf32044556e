"""What a known Assault is worth to the planner at the Menace: the planner's games on
training deals with chosen face-down cards turned up at the deal (no player can do this;
it measures the information, not an agent).

    python experiments/studies/castellion_planner_tune/faceup.py START N MASK [MASK ...]

A MASK gives slots I, II, III: ``d`` face down as dealt, ``u`` turned up (``ddd`` is the
game as dealt, ``uuu`` every card known). Prints, per mask, the games ended at each number
of Ordeals passed (the last entry: won) and how many games met each Assault face up.
"""

import sys

from castle_envs.agents.options import parse_options
from castle_envs.agents.search.castellion_planner import OPTION_TYPES, PlannerPolicy
from castle_envs.agents.solvers.castellion import deal

start, n, masks = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
options = {}
if "--planner" in masks:  # e.g. --planner scout=0,grow=8
    i = masks.index("--planner")
    options = parse_options(masks[i + 1], OPTION_TYPES, "planner")
    masks = masks[:i] + masks[i + 2 :]
policy = PlannerPolicy(**options)
for mask in masks:
    ended = [0, 0, 0, 0]
    face_up = [0, 0, 0]
    for seed in range(start, start + n):
        s = deal(seed, "menace")
        s.face_down[:] = [c == "d" for c in mask]
        while not s.outcome:
            slot, up = s.current, not s.face_down[s.current]
            s.apply_action(policy(s))
            if s.current > slot or s.outcome:
                face_up[slot] += up
        ended[3 if s.outcome > 0 else s.current] += 1
    print(f"{mask}: ended after 0/1/2 Ordeals, won {ended}; met face up {face_up}", flush=True)
