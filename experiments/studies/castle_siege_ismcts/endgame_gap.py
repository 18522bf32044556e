"""What the scorer's playouts miss in the endgame. From the start of each deal, the ISMCTS
agent's playout (the linear scorer, greedy) is played until no unseen card is left; from
there the player knows every card and the agent's endgame planner plays the solver's line
where it finds one. Counts the playouts the scorer wins, and of those it loses, how many
the compiled solver (probes, then depth-first search) proves won from the known position,
by the castles the scorer's own finish left standing and by the solver's node budget.

    python experiments/studies/castle_siege_ismcts/endgame_gap.py hard 300 200,2000,20000
"""

import collections
import sys
import time

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.search import castle_siege_ismcts_kernel as M
from castle_envs.agents.solvers import castle_siege_kernel as S
from castle_envs.agents.solvers import castle_siege_nested_kernel as N
from castle_envs.agents.solvers.castle_siege_compiled import shared_memo

from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege.rules import State
from castle_envs.castle_siege.vector import write_state

diff, n, budgets = sys.argv[1], int(sys.argv[2]), [int(a) for a in sys.argv[3].split(",")]
start = int(sys.argv[4]) if len(sys.argv) > 4 else 20_000_100
weights = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json").vector()
x, memo = N.new_scratch(), shared_memo()
works = {k: S.new_work(max(10, min(22, (2 * k).bit_length()))) for k in budgets}
line = np.zeros(S.MAX_DEPTH, np.int64)
wins = known = 0
lost = collections.Counter()
solved = collections.Counter()
seconds = collections.Counter()
for seed in range(start, start + n):
    st = State.new_game(np.random.default_rng(seed), difficulty=diff)
    b, v = x.B[0], x.V[0]
    write_state(b, v, st, st.rows, {"attack": st.attack, "defeated": st.defeated})
    _, end = N.playout(x, works[budgets[0]], memo, 0, False, False, weights, 12, 0.0, line, 0, True)
    if v[K.OUTCOME] == 0 and K.unseen(b, v) == 0:
        known += 1
        x.B[1][:], x.V[1][:] = b, v
        N.playout(x, works[budgets[0]], memo, 0, False, False, weights, 12, 0.0, line, end, False)
        if v[K.OUTCOME] != 1:
            left = 4 - int(K.captured_and_standing(b, v)[0])
            lost[left] += 1
            for k in budgets:
                t = time.perf_counter()
                won = M.endgame_solved(works[k], memo, x.B[1], x.V[1], False, False, k, weights)
                seconds[k] += time.perf_counter() - t
                solved[left, k] += bool(won)
    wins += v[K.OUTCOME] == 1
print(f"# {diff}, deals {start}-{start + n - 1}: the scorer's playout from the start")
print(f"won by the scorer: {wins} of {n}; reached a known deck with the game on: {known}")
print("lost known endgames by castles the scorer's finish left standing: solver wins by budget")
for left in sorted(lost):
    row = ", ".join(f"{k} nodes: {solved[left, k]}" for k in budgets)
    print(f"  {left} standing: {lost[left]} lost; {row}")
total = sum(lost.values())
for k in budgets:
    got = sum(solved[left, k] for left in lost)
    ms = 1000 * seconds[k] / max(total, 1)
    print(
        f"{k} nodes: {got} of {total} won ({wins + got} of {n} with the scorer's), {ms:.2f} ms a solve"
    )
