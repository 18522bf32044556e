"""Is the relaxed game (the solver's bound 4) winnable at the root of deals 0-999?
And in a variant of it with no Royal Assault at all? Run from the repo root:
    python experiments/studies/castle_siege_winnability/relaxed_roots.py
Output (2026-12-01): relaxed_roots.txt. The relaxed game is the Python reference solver's
(tests/reference/castle_siege_solver.py; agents/solvers/castle_siege.py until the solver
was written once), which this script reads for its helpers."""

import sys
from functools import cache

sys.path.insert(0, ".")  # the repo root: tests/reference
from castle_envs.castle_siege.rules import State  # noqa: E402
from tests.reference import castle_siege_solver as S  # noqa: E402

HAND_SLOTS = 5


@cache
def rw_noroyal(columns, phi, plays, regroup):
    rest = columns
    left = plays
    if not rest:
        return True
    if phi >= len(rest) and (sum(rest) + len(rest) <= left or (regroup and sum(rest) <= left)):
        return True
    for captured in S.capture_sets(len(rest)):
        cost = sum(rest[i] + 1 for i in captured)
        if cost > left or phi < len(captured):
            continue
        others = [rest[i] for i in range(len(rest)) if i not in captured]
        after = phi - len(captured)
        if not others or after <= len(others):
            continue
        for cols in S.spread(tuple(others), left - cost):
            nxt = after - len(others)
            if rw_noroyal(
                tuple(sorted((c + 1 for c in cols), reverse=True)), nxt, min(HAND_SLOTS, nxt), True
            ):
                return True
    return False


for diff in ("hard", "very_hard"):
    w = wn = 0
    for seed in range(1000):
        s = State.new_game(difficulty=diff, deck=S.deal_deck(seed))
        cols = tuple(sorted(s.col_len[~s.captured].tolist(), reverse=True))
        phi = s.deck_size + s.hand_size
        w += S.relaxed_winnable(cols, phi, s.hand_size, True, S.royal_in_reach(s))
        wn += rw_noroyal(cols, phi, s.hand_size, True)
    print(diff, "roots 0-999: relaxed game winnable", w, "; without any Royal Assault", wn)
