"""In-kernel evaluation of a model dir on deals 1,000,000-1,001,999 (same deals as castle-envs evaluate)."""

import csv
import sys
import time

import numpy as np
from castle_envs.agents.learned import castle_siege_ntuple_kernel as M
from castle_envs.agents.learned.castle_siege_ntuple import NTupleValue
from castle_envs.agents.learned.saved import read_card
from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch
from castle_envs.experiments.train_ntuple import deals

d = sys.argv[1]
out = sys.argv[2]
v = NTupleValue.load(d, read_card(d))
rows = []
for diff, r in (("hard", 3), ("very_hard", 4)):
    won = np.zeros(2000, np.bool_)
    t = time.process_time()
    M.play_games(
        deals(1_000_000, 2000),
        np.full(2000, r),
        v.weights,
        False,
        0,
        0,
        0,
        v.shaped,
        v.prune,
        0,
        0.0,
        np.zeros(40),
        new_scratch(),
        won,
        np.zeros(3),
    )
    print(diff, won.sum(), "cpu-s/game", (time.process_time() - t) / 2000)
    rows += [(diff, 1_000_000 + i, float(won[i])) for i in range(2000)]
with open(out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["difficulty", "seed", "ntuple"])
    w.writerows(rows)
