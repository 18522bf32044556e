"""The incremental level mask against a brute-force reading of the tower rules.

The oracle tries every set of Base levels (not just the lowest ones) and every Width value,
so it checks the shortcut the rules core takes (Base levels = the widest, lowest ones).
"""

from itertools import combinations

import numpy as np

from castle_envs.castell.actions import LEVEL0, LEVEL_TUPLES
from castle_envs.castell.rules import State, tower_legal


def oracle_legal(levels, skills) -> bool:
    bal_v, base_v, mix_v, str_v, wid_v = (int(x) for x in skills)
    bal = strength = mix = 0
    for i, (w, lo, m) in enumerate(levels):
        if m:
            mix += 1
        if i:
            bw, blo, _ = levels[i - 1]
            hi = lo + (m > 0)
            if w > bw or hi > blo:
                return False
            bal += w == bw
            strength += hi == blo
    if bal > bal_v or strength > str_v or mix > mix_v:
        return False
    n = len(levels)
    for b in range(0, min(base_v, n) + 1):
        for base in combinations(range(n), b):
            rest = [levels[i][0] for i in range(n) if i not in base]
            if max(rest, default=0) <= 3 + wid_v:
                return True
    return False


def test_mask_and_tower_legal_agree_with_the_oracle():
    rng = np.random.default_rng(0)
    s = State.deal(rng, 2)
    checked = 0
    for _ in range(300):
        skills = rng.integers(0, 3, size=5)
        # a random legal tower, grown with the oracle
        tower = []
        for _ in range(int(rng.integers(0, 6))):
            options = [lv for lv in LEVEL_TUPLES if oracle_legal(tower + [lv], skills)]
            if not options:
                break
            tower.append(options[int(rng.integers(len(options)))])
        assert tower_legal(tower, skills)
        s.towers[0] = tower
        s.skills[0] = skills
        counts = np.zeros(10, dtype=np.int64)
        for w, lo, m in tower:
            counts[lo] += w - m
            if m:
                counts[lo + 1] += m
        s.in_tower[0] = counts
        s.hand[0] = counts + rng.integers(0, 5, size=10)  # free castellers at random
        free = s.hand[0] - counts
        s._mask = None
        mask = s.legal_action_mask()
        for i, (w, lo, m) in enumerate(LEVEL_TUPLES):
            enough = free[lo] >= w - m and (m == 0 or free[lo + 1] >= m)
            expected = enough and oracle_legal(tower + [(w, lo, m)], skills)
            assert mask[LEVEL0 + i] == expected, (tower, skills.tolist(), (w, lo, m))
            assert tower_legal(tower + [(w, lo, m)], skills) == oracle_legal(
                tower + [(w, lo, m)], skills
            )
            checked += 1
    assert checked == 300 * len(LEVEL_TUPLES)
