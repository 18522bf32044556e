"""Paired check of planner settings on other deals than the search's.

    python experiments/studies/castellion_planner_tune/check.py LEVEL START N SPEC [SPEC ...]

plays each ``planner`` spec on deals START..START+N-1 of LEVEL and prints wins, Ordeals passed,
CPU seconds, and each spec's paired difference in wins with the first (95% interval).
"""

import sys
import time

from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castellion import deal
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

level, start, n, specs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
results = []
for spec in specs:
    agent = make_agent(spec, "castellion", seed=0)
    t = time.process_time()
    wins, passed = [], 0
    for seed in range(start, start + n):
        s = deal(seed, level)
        agent.reset([0, seed, 0])
        while not s.outcome:
            s.apply_action(agent.act(None, None, state=s.player_view()))
        wins.append(int(s.outcome > 0))
        passed += s.current
    lo, hi = wilson_interval(sum(wins), n)
    print(
        f"{spec}: {sum(wins)} / {n} ({100 * sum(wins) / n:.1f}% [{100 * lo:.1f}, "
        f"{100 * hi:.1f}]), Ordeals passed {passed}, {time.process_time() - t:.1f} CPU-s",
        flush=True,
    )
    results.append(wins)
for spec, wins in zip(specs[1:], results[1:]):
    d = paired_proportion_difference(wins, results[0])
    print(f"{spec} - {specs[0]}: {d}")
