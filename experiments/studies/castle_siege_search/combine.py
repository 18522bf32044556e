"""Pool the search agent's runs (Very Hard or Hard) on consecutive deal ranges into one paired result.

    python experiments/studies/castle_siege_search/combine.py docs/data/castle_siege_search/evaluate-castle-siege-very_hard-seed1000000-n1000.json docs/data/castle_siege_search/evaluate-castle-siege-very_hard-seed1001000-n1000.json

Each run's JSON gives both agents' wins and the deals only one of them won, which fixes the
2 x 2 table of each run; the tables add up, and the pooled win rates get Wilson intervals and
the pooled difference Newcombe's paired interval (``castle-envs evaluate``'s own).
"""

import json
import sys

import numpy as np
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

search = linear = only_search = only_linear = n = 0
for path in sys.argv[1:]:
    run = json.load(open(path))
    wins = {r["agent"]: r["wins"] for r in run["results"]}
    pair = run["paired"][0]
    assert pair["baseline"] == "search" and pair["agent"].endswith("very_hard_linear")
    n += pair["win_diff"]["n"]
    search += wins["search"]
    linear += wins[pair["agent"]]
    only_linear += pair["win_diff"]["a_better"]
    only_search += pair["win_diff"]["b_better"]
both = search - only_search
a = np.array(
    [1] * both
    + [1] * only_search
    + [0] * only_linear
    + [0] * (n - both - only_search - only_linear)
)
b = np.array(
    [1] * both
    + [0] * only_search
    + [1] * only_linear
    + [0] * (n - both - only_search - only_linear)
)
d = paired_proportion_difference(a, b)
lo, hi = wilson_interval(search, n)
llo, lhi = wilson_interval(linear, n)
print(
    f"{n} deals: search {search} ({search / n:.2%} [{lo:.2%}, {hi:.2%}]), linear {linear} "
    f"({linear / n:.2%} [{llo:.2%}, {lhi:.2%}]), search - linear {d['mean']:+.2%} "
    f"[{d['low']:+.2%}, {d['high']:+.2%}] (better on {d['a_better']}, worse on {d['b_better']})"
)
