"""The three tower rules, the five skills (each limited by its value), taking towers apart."""

import pytest

from castle_envs.castell.rules import tower_legal, tower_meets, width_resolutions

from .helpers import AddLevel, D, Dismantle, act, build, clear_hand, deal, give, legal, round_trip

B, BA, MI, ST, WI = D.BALANCE, D.BASE, D.MIX, D.STRENGTH, D.WIDTH


@pytest.fixture
def s():
    state = deal(2, seed=1)
    clear_hand(state, 0)
    give(state, 0, *[n for n in range(1, 11) for _ in range(6)])  # six of every number
    return state


def test_a_plain_tower_3_2_1(s):
    build(s, (3, 9), (2, 7), (1, 4))
    assert s.towers[0] == [(3, 8, 0), (2, 6, 0), (1, 3, 0)]
    assert s.in_tower[0].sum() == 6
    assert tower_legal(s.towers[0], s.skills[0])


def test_rule_same_number_per_level_without_mix(s):
    assert not legal(s, AddLevel(2, 5, 1))
    s.skills[0, MI] = 1
    s._mask = None
    assert legal(s, AddLevel(2, 5, 1))  # a 5 and a 6 side by side
    act(s, AddLevel(3, 5, 1))
    assert not legal(s, AddLevel(2, 2, 1))  # Mix 1: used once in this tower already


def test_rule_smaller_numbers_above(s):
    build(s, (3, 6))
    assert not legal(s, AddLevel(2, 6, 0)) and not legal(s, AddLevel(2, 7, 0))
    assert legal(s, AddLevel(2, 5, 0))


def test_strength_lets_equal_numbers_stand_on_each_other(s):
    build(s, (3, 6))
    s.skills[0, ST] = 1
    s._mask = None
    assert legal(s, AddLevel(2, 6, 0)) and not legal(s, AddLevel(2, 7, 0))
    act(s, AddLevel(2, 6, 0))
    assert not legal(s, AddLevel(1, 6, 0))  # one use per point of Strength
    assert legal(s, AddLevel(1, 5, 0))


def test_mixed_level_compares_its_numbers_with_the_level_below(s):
    s.skills[0, MI] = 1
    build(s, (3, 6))
    s._mask = None
    assert not legal(s, AddLevel(2, 5, 1))  # a 6 on a 6 needs Strength
    assert legal(s, AddLevel(2, 4, 1))


def test_rule_narrower_above_and_balance(s):
    build(s, (2, 8))
    assert not legal(s, AddLevel(2, 5, 0)) and not legal(s, AddLevel(3, 5, 0))
    s.skills[0, B] = 2
    s._mask = None
    build(s, (2, 6), (2, 4))  # Balance twice
    assert not legal(s, AddLevel(2, 2, 0))  # a third use needs Balance 3
    assert not legal(s, AddLevel(3, 2, 0))  # never wider than below
    assert legal(s, AddLevel(1, 2, 0))


def test_rule_at_most_three_wide_and_width(s):
    assert not legal(s, AddLevel(4, 9, 0))
    s.skills[0, WI] = 1
    s._mask = None
    build(s, (4, 9))
    assert not legal(s, AddLevel(5, 9, 0))
    s.skills[0, WI] = 2
    s._mask = None
    dismantle_and_build = [(5, 10), (4, 8)]
    act(s, Dismantle(True))
    build(s, *dismantle_and_build)  # Width 2: the whole tower may be 5 wide


def test_base_lets_one_level_be_unlimited(s):
    s.skills[0, BA] = 1
    s._mask = None
    assert legal(s, AddLevel(6, 9, 0))
    build(s, (6, 9))
    assert not legal(s, AddLevel(4, 7, 0))  # levels above keep the width limit
    assert legal(s, AddLevel(3, 7, 0))
    s.skills[0, BA] = 2
    s._mask = None
    assert legal(s, AddLevel(4, 7, 0))  # a second Base level


def test_width_and_base_resolution():
    assert width_resolutions([5, 4, 3], base_val=1, width_val=1) == [(1, 1)]
    assert width_resolutions([4, 3], base_val=1, width_val=1) == [(0, 1), (1, 0)]
    assert width_resolutions([5, 4], base_val=0, width_val=1) == []


def test_four_levels_need_a_skill(s):
    build(s, (3, 10), (2, 9), (1, 8))
    assert not any(legal(s, AddLevel(1, n, 0)) for n in range(1, 11))
    s.skills[0, B] = 1
    s._mask = None
    assert legal(s, AddLevel(1, 5, 0))


def test_castellers_must_be_free(s):
    clear_hand(s, 0)
    give(s, 0, 7, 7, 5)
    assert legal(s, AddLevel(2, 7, 0)) and not legal(s, AddLevel(3, 7, 0))
    build(s, (2, 7))
    assert not legal(s, AddLevel(1, 7, 0)) and legal(s, AddLevel(1, 5, 0))


def test_dismantle_top_and_whole(s):
    build(s, (3, 9), (2, 7), (1, 4))
    act(s, Dismantle(False))
    assert s.towers[0] == [(3, 8, 0), (2, 6, 0)] and s.in_tower[0].sum() == 5
    act(s, Dismantle(True))
    assert s.towers[0] == [] and s.in_tower[0].sum() == 0
    assert not legal(s, Dismantle(False)) and not legal(s, Dismantle(True))


def test_tower_edits_are_limited_per_turn():
    s = deal(2, tower_edits_per_turn=3)
    clear_hand(s, 0)
    give(s, 0, 9, 9, 9, 5, 5, 2)
    build(s, (3, 9), (2, 5), (1, 2))
    assert not legal(s, Dismantle(True)) and not legal(s, AddLevel(1, 2, 0))


def test_the_tower_stands_between_turns(s):
    build(s, (3, 9), (2, 7))
    t = round_trip(s)
    act(s, __import__("castle_envs.castell.actions", fromlist=["EndTurn"]).EndTurn())
    assert s.towers[0] == t.towers[0] == [(3, 8, 0), (2, 6, 0)]


def test_shape_and_exhibition_tiles():
    shape = D.LocalPerformance("shape", 3, (2, 2, 1))
    skills = [1, 0, 0, 0, 0]
    assert tower_meets([(2, 8, 0), (2, 6, 0), (1, 2, 0)], skills, shape)
    assert not tower_meets([(2, 8, 0), (1, 6, 0)], skills, shape)
    assert not tower_meets([(3, 8, 0), (2, 6, 0), (1, 2, 0)], skills, shape)
    exhibit = D.LocalPerformance("exhibition", 3, (), (D.MIX, D.STRENGTH))
    both = [2, 0, 1, 1, 0]
    # 9,9,10 / 9,9 (Strength) / 3
    assert tower_meets([(3, 8, 1), (2, 8, 0), (1, 2, 0)], both, exhibit)
    assert not tower_meets([(3, 8, 1), (2, 7, 0), (1, 2, 0)], both, exhibit)  # no Strength
    assert not tower_meets([(3, 8, 1), (2, 8, 0)], both, exhibit)  # 2 levels, not 3
    wide = D.LocalPerformance("exhibition", 2, (), (D.WIDTH,))
    assert tower_meets([(4, 8, 0), (1, 2, 0)], [0, 0, 0, 0, 1], wide)
    assert not tower_meets([(4, 8, 0), (1, 2, 0)], [0, 1, 0, 0, 0], wide)  # Base did it
    assert not tower_meets([(3, 8, 0), (1, 2, 0)], [0, 0, 0, 0, 1], wide)  # no width used


def test_illegal_levels_name_the_rule_and_the_skill(s):
    from castle_envs.core.errors import IllegalActionError

    for level, why in [((4, 9, 0), "width limit 3 needs Width or a Base"), ((2, 5, 1), "need Mix")]:
        with pytest.raises(IllegalActionError, match=why):
            act(s, AddLevel(*level))
    build(s, (2, 8))
    for level, why in [
        ((3, 5, 0), "wider than the level below"),
        ((1, 9, 0), "smaller than the level below"),
        ((2, 5, 0), "needs Balance"),
        ((1, 8, 0), "needs Strength"),
    ]:
        with pytest.raises(IllegalActionError, match=why):
            act(s, AddLevel(*level))
