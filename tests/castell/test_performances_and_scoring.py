"""Local performances, festivals (scores, best marker, prizes, size tokens), end scoring."""

import numpy as np
import pytest

from .helpers import (
    D,
    Move,
    Special,
    act,
    build,
    clear_hand,
    deal,
    end_turns,
    give,
    legal,
    set_wheel,
)

B, BA, MI, ST, WI = D.BALANCE, D.BASE, D.MIX, D.STRENGTH, D.WIDTH
SHAPE_321 = D.LOCAL_PERFORMANCES.index(D.LocalPerformance("shape", 2, (3, 2, 1)))
EXHIBIT_BALANCE_4 = D.LOCAL_PERFORMANCES.index(
    D.LocalPerformance("exhibition", 4, (), (D.BALANCE,))
)


def _performance_position(**rules):
    s = deal(2, seed=2, **rules)
    clear_hand(s, 0)
    give(s, 0, 9, 9, 9, 7, 7, 3, 3)
    # put the shape tile in Valls' first slot (swapped with wherever it lies, if dealt)
    for where in np.argwhere(s.lp == SHAPE_321):
        s.lp[tuple(where)] = s.lp[1, 0]
    s.lp[1, 0] = SHAPE_321
    act(s, Move(1))
    return s


def test_performing_needs_the_tower_that_meets_the_tile():
    s = _performance_position()
    assert not legal(s, Special("token", "perform", 0))
    build(s, (3, 9), (2, 7))
    assert not legal(s, Special("token", "perform", 0))  # 2 levels, not 3-2-1
    build(s, (1, 3))
    assert legal(s, Special("token", "perform", 0))


def test_performing_takes_the_tile_and_the_lying_tokens():
    s = _performance_position()
    s.lp_tokens[1, 1] = 2  # player 1 spent two tokens here earlier
    s.tokens[1] = 5
    build(s, (3, 9), (2, 7), (1, 3))
    act(s, Special("token", "perform", 0))
    assert s.lp[1, 0] == -1 and s.performed[0] == [(SHAPE_321, 1)]
    assert s.collected[0, 1] == 2
    assert s.lp_tokens[1].tolist() == [1, 0]  # the performer's token waits for the next
    assert s.category_scores(0)["local_performances"] == 2 + 2
    assert s.towers[0]  # the tower still stands


def test_collect_own_token_option():
    s = _performance_position(collect_own_token=True)
    build(s, (3, 9), (2, 7), (1, 3))
    act(s, Special("token", "perform", 0))
    assert s.collected[0, 1] == 1 and s.lp_tokens.sum() == 0


def test_wheel_special_performance_places_no_token():
    s = _performance_position()
    set_wheel(s, [B, D.SPECIAL, BA, MI, ST, WI, D.SPECIAL, D.SPECIAL])  # Valls: special
    build(s, (3, 9), (2, 7), (1, 3))
    act(s, Special("wheel", "perform", 0))
    assert s.tokens[0] == 7 and s.lp_tokens.sum() == 0 and s.performed[0]


def test_a_performed_slot_stays_empty():
    s = _performance_position()
    build(s, (3, 9), (2, 7), (1, 3))
    act(s, Special("token", "perform", 0))
    end_turns(s, 2)
    assert not legal(s, Special("token", "perform", 0))


def test_exhibition_counts_levels_and_named_skills():
    s = _performance_position()
    s.lp[1, 1] = EXHIBIT_BALANCE_4
    s.skills[0, B] = 1
    give(s, 0, 2)
    build(s, (3, 9), (2, 7), (1, 3), (1, 2))  # four levels, Balance at the top
    assert legal(s, Special("token", "perform", 1))


# --- festivals ----------------------------------------------------------------------------
def _festival_position(players=3, sizes=(4,), **rules):
    """Round 3, the festival of round 3 in Valls with the given size tokens; pawns placed."""
    s = deal(players, seed=4, **rules)
    s.fest_region[0] = 1
    s.fest_sizes[0] = tuple(n - 1 for n in sizes)
    s.round = 3
    s.skills[:, B] = 2
    for p in range(players):
        clear_hand(s, p)
        s.pawn[p] = 1
    return s


def _tower(s, p, levels):
    """Give player p the castellers and stand the tower (width, number) levels."""
    for w, n in levels:
        give(s, p, *[n] * w)
        s.towers[p].append((w, n - 1, 0))
        s.in_tower[p, n - 1] += w


def test_festival_scores_levels_plus_matching_castellers_and_best_marker():
    s = _festival_position(sizes=(4,))
    _tower(s, 0, [(3, 9), (2, 7), (2, 4), (1, 2)])  # 4 levels + two 4s = 6
    _tower(s, 1, [(3, 9), (2, 6), (1, 4), (1, 2)])  # 4 levels + one 4 = 5
    _tower(s, 2, [(3, 9), (2, 6), (1, 2)])  # 3 levels: does not compete
    s.best[1] = 9
    end_turns(s, 3)
    result = s.last_festivals[0]
    assert result["scores"] == {0: 6, 1: 5}
    assert s.best.tolist() == [6, 9, 0]  # the marker only moves up


def test_festival_requirements_region_and_size_tokens():
    s = _festival_position(sizes=(4, 8))
    s.fest_held[:] = True
    _tower(s, 0, [(3, 9), (2, 8), (2, 4), (1, 2)])  # has an 8 and a 4
    _tower(s, 1, [(3, 9), (2, 7), (2, 4), (1, 2)])  # no 8
    _tower(s, 2, [(3, 9), (2, 8), (2, 4), (1, 2)])
    s.pawn[2] = 0  # elsewhere
    end_turns(s, 3)
    assert s.last_festivals[0]["scores"] == {0: 4 + 2 + 2}  # two 8s, two 4s


def test_prizes_follow_the_chart_with_shared_places():
    s = _festival_position(players=4, sizes=(4,))
    _tower(s, 0, [(3, 9), (2, 7), (2, 4), (1, 2)])  # 6
    _tower(s, 1, [(3, 9), (2, 7), (2, 4), (1, 2)])  # 6: shares first place
    _tower(s, 2, [(3, 9), (2, 6), (1, 4), (1, 2)])  # 5: third place
    _tower(s, 3, [(3, 9), (2, 6), (1, 5), (1, 4)])  # 5: third place too
    end_turns(s, 4)
    assert s.last_festivals[0]["prizes"] == {0: "trophy", 1: "trophy", 2: "ribbon", 3: "ribbon"}
    assert s.prizes[:, 1].tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1]]
    assert [s.category_scores(p)["prizes"] for p in range(4)] == [5, 5, 1, 1]


def test_two_players_award_one_prize():
    s = _festival_position(players=2, sizes=(4,))
    _tower(s, 0, [(3, 9), (2, 7), (2, 4), (1, 2)])
    _tower(s, 1, [(3, 9), (2, 6), (1, 4), (1, 2)])
    end_turns(s, 2)
    assert s.last_festivals[0]["prizes"] == {0: "trophy"}


def test_size_token_goes_to_most_matching_castellers():
    s = _festival_position(sizes=(4,))
    _tower(s, 0, [(3, 9), (2, 6), (1, 4), (1, 2)])  # one 4, score 5
    _tower(s, 1, [(3, 9), (2, 7), (2, 4), (1, 2)])  # two 4s
    end_turns(s, 3)
    assert s.size_tokens[1, 1, 3] == 1 and s.size_tokens.sum() == 1


@pytest.mark.parametrize("ties,winner", [("tower_score", 0), ("none", None)])
def test_size_token_ties(ties, winner):
    s = _festival_position(sizes=(4,), size_token_ties=ties)
    _tower(s, 0, [(3, 9), (2, 7), (1, 4), (1, 2), (1, 1)][:4])  # 4 levels + one 4: 5
    _tower(s, 1, [(3, 9), (2, 7), (1, 4), (1, 2)])
    s.skills[0, B] = 2
    s.towers[0].append((1, 0, 0))  # a fifth level: score 6
    give(s, 0, 1)
    s.in_tower[0, 0] += 1
    end_turns(s, 3)
    if winner is None:
        assert s.size_tokens.sum() == 0
    else:
        assert s.size_tokens[winner, 1, 3] == 1 and s.size_tokens.sum() == 1


def test_only_held_festivals_happen_with_two_players():
    s = deal(2)
    held = [i for i, h in enumerate(s.fest_held) if h]
    assert len(held) == 8 and sorted(D.CALENDAR[i][0] for i in held) == list(range(3, 11))


# --- end scoring --------------------------------------------------------------------------
def test_variety_table():
    s = deal(2)
    for regions, points in enumerate(D.VARIETY_POINTS):
        s.size_tokens[0] = 0
        for r in range(regions):
            s.size_tokens[0, r, 0] = 1
        assert s.category_scores(0)["variety"] == points
    assert D.VARIETY_POINTS == (0, 0, 1, 3, 5, 7, 10, 14)


def test_variety_counts_option():
    both = []
    for mode in ("all", "board"):
        s = deal(2, variety_counts=mode)
        s.collected[0, 0] = 1
        s.tokens[0] -= 1
        s.prizes[0, 1, 2] = 1
        s.performed[0] = [(int(s.lp[2, 0]), 2)]
        s.lp[2, 0] = -1
        both.append(s.category_scores(0)["variety"])
    assert both == [3, 0]


def test_size_tokens_two_per_unique_one_per_duplicate():
    s = deal(2)
    s.size_tokens[0, 0, 3] = 1
    s.size_tokens[0, 1, 3] = 1  # a duplicate 4
    s.size_tokens[0, 2, 7] = 1
    assert s.category_scores(0)["size_tokens"] == 2 + 1 + 2


def test_prize_points_and_best_tower():
    s = deal(2)
    s.prizes[1, 0] = [1, 2, 3]
    s.best[1] = 11
    scores = s.category_scores(1)
    assert scores["prizes"] == 5 + 6 + 3 and scores["best_tower"] == 11


def test_local_performance_points_plus_collected_tokens():
    s = deal(2)
    tile = int(s.lp[0, 0])
    s.performed[0] = [(tile, 0)]
    s.lp[0, 0] = -1
    s.collected[0, 0] = 3
    s.tokens[0] -= 3
    assert s.category_scores(0)["local_performances"] == D.LOCAL_PERFORMANCES[tile].points + 3


def test_returns_winner_and_ties():
    s = deal(3)
    end_turns(s, 30)
    s.best[:] = [4, 9, 2]
    assert s.returns().tolist() == [-1, 1, -1]
    s.best[:] = [9, 9, 2]
    assert s.returns().tolist() == [0, 0, -1]
