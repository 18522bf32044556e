"""Where the planner loses the Menace: per Assault card, how often the planner (defaults,
``agents/search/castellion_planner.py``, or the options given as in its spec) meets it and passes
it, on training deals. From the repository root:

    python experiments/studies/castellion_winnability/menace_where.py 20010000 1000
    python experiments/studies/castellion_winnability/menace_where.py 20010000 1000 scout=0,grow=8

(the second: the planner before its ``scout`` option, which the study's first table used)
"""

import collections
import sys

from castle_envs.agents.options import parse_options
from castle_envs.agents.search.castellion_planner import OPTION_TYPES, PlannerPolicy
from castle_envs.agents.solvers.castellion import deal

from castle_envs.castellion.data import ORDEALS

start, n = int(sys.argv[1]), int(sys.argv[2])
options = parse_options(sys.argv[3], OPTION_TYPES, "planner") if len(sys.argv) > 3 else {}
policy = PlannerPolicy(**options)
passed = collections.Counter()
met, failed = collections.Counter(), collections.Counter()
for seed in range(start, start + n):
    s = deal(seed, "menace")
    while not s.outcome:
        s.apply_action(policy(s))
    passed[s.current] += 1
    for k in range(min(s.current + 1, 3)):
        title = ORDEALS[s.ordeals[k]].title
        met[title] += 1
        failed[title] += k == s.current
print("Ordeals passed:", dict(sorted(passed.items())))
print("| Assault | met | passed | share passed |")
print("|---|---|---|---|")
for title in sorted(met):
    print(
        f"| {title} | {met[title]} | {met[title] - failed[title]} | {1 - failed[title] / met[title]:.0%} |"
    )
