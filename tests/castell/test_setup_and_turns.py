"""Setup and the four turn actions, one scenario per rule sentence."""

import numpy as np
import pytest

from castle_envs.core.errors import IllegalActionError

from .helpers import (
    ACTIONS,
    D,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
    act,
    clear_hand,
    deal,
    end_turns,
    legal,
    set_wheel,
)

S = D.SPECIAL
B, BA, MI, ST, WI = D.BALANCE, D.BASE, D.MIX, D.STRENGTH, D.WIDTH


@pytest.mark.parametrize("players,per_region", [(2, 3), (3, 4), (4, 5)])
def test_setup_counts(players, per_region):
    s = deal(players, seed=3)
    assert (s.regions.sum(axis=1) == per_region).all()
    assert (s.hand.sum(axis=1) == 7).all()
    assert (s.tokens == 7).all()
    assert (s.lp >= 0).all() and len(set(s.lp.ravel().tolist())) == 14  # 18 back to the box
    assert sorted(s.wheel) == sorted(D.WHEEL_TILES)
    assert len(s.bag) == 150 - 7 * per_region - 7 * players
    phase_regions = {1: [], 2: []}
    for i, (_, phase) in enumerate(D.CALENDAR):
        phase_regions[phase].append(int(s.fest_region[i]))
        assert len(s.fest_sizes[i]) == D.SIZE_TOKENS_PER_SPACE[phase]
    assert sorted(phase_regions[1]) == sorted(phase_regions[2]) == list(range(7))
    assert s.current_player == 0 and s.round == 1 and (s.pawn == -1).all()


def test_one_size_token_per_festival_option():
    s = deal(3, seed=3, festival_size_tokens="one")
    assert [len(x) for x in s.fest_sizes] == [1] * 14
    assert [len(x) for x in deal(3, seed=3).fest_sizes] == [1] * 7 + [2] * 7


def test_deal_is_seeded():
    assert deal(3, seed=5) == deal(3, seed=5)
    assert deal(3, seed=5) != deal(3, seed=6)


def test_first_move_anywhere_then_adjacent_only():
    s = deal()
    assert all(legal(s, Move(r)) for r in range(7))
    act(s, Move(0))
    assert not any(legal(s, Move(r)) for r in range(7))  # once per turn
    end_turns(s, 2)
    assert [r for r in range(7) if legal(s, Move(r))] == list(D.ADJACENT[0])
    with pytest.raises(IllegalActionError, match="not adjacent"):
        act(s, Move(6))


def test_adjacency_is_symmetric_and_connected():
    for r, adj in enumerate(D.ADJACENT):
        assert r not in adj and all(r in D.ADJACENT[a] for a in adj)
    seen, todo = {0}, [0]
    while todo:
        for a in D.ADJACENT[todo.pop()]:
            if a not in seen:
                seen.add(a)
                todo.append(a)
    assert seen == set(range(7))


def _region_with(s, count=2):
    return next(r for r in range(7) if s.regions[r].sum() >= count)


def test_recruit_up_to_two_in_a_row():
    s = deal()
    r = _region_with(s, 3)
    act(s, Move(r))
    before = int(s.hand[0].sum())
    size = int(np.flatnonzero(s.regions[r])[0]) + 1
    act(s, Recruit(size))
    size = int(np.flatnonzero(s.regions[r])[0]) + 1
    act(s, Recruit(size))
    assert s.hand[0].sum() == before + 2
    assert not any(legal(s, Recruit(n)) for n in range(1, 11))  # no third casteller


def test_recruit_second_casteller_only_right_after_the_first():
    s = deal()
    r = _region_with(s, 3)
    act(s, Move(r))
    act(s, Recruit(int(np.flatnonzero(s.regions[r])[0]) + 1))
    # another action in between closes the Recruit action
    act(s, Special("token", "move", D.ADJACENT[r][0]))
    assert not any(legal(s, Recruit(n)) for n in range(1, 11))


def test_recruit_needs_the_pawn_and_the_number():
    s = deal()
    assert not any(legal(s, Recruit(n)) for n in range(1, 11))  # pawn off the board
    act(s, Move(0))
    for n in range(1, 11):
        assert legal(s, Recruit(n)) == bool(s.regions[0, n - 1] > 0)


def test_train_offers_region_window_and_all_regions_window():
    s = deal()
    set_wheel(s, [B, BA, MI, ST, WI, S, S, S])  # region 0 Balance ... All Regions: Special
    act(s, Move(1))  # Valls shows Base
    assert [k for k in range(5) if legal(s, Train(k))] == [BA]
    set_wheel(s, [B, BA, S, ST, S, S, MI, WI])  # All Regions: Width
    assert [k for k in range(5) if legal(s, Train(k))] == [BA, WI]
    act(s, Train(WI))
    assert s.skills[0, WI] == 1
    assert not any(legal(s, Train(k)) for k in range(5))  # once per turn


def test_advanced_side_offers_only_the_region_window():
    s = deal(advanced=True)
    set_wheel(s, [B, BA, S, ST, S, S, MI, WI])
    assert not any(legal(s, Train(k)) for k in range(5))  # pawn off the board
    act(s, Move(3))
    assert [k for k in range(5) if legal(s, Train(k))] == [ST]


def test_train_stops_at_the_track_maximum():
    s = deal(max_skill=2)
    set_wheel(s, [B, BA, S, ST, S, S, MI, WI])
    s.skills[0, WI] = 2
    assert not legal(s, Train(WI))
    with pytest.raises(IllegalActionError, match="maximum"):
        act(s, Train(WI))


def test_wheel_special_is_free_and_is_the_train_action():
    s = deal()
    set_wheel(s, [B, BA, MI, ST, WI, S, S, S])  # All Regions shows Special
    act(s, Move(0))
    assert legal(s, Special("wheel", "move", 1))
    act(s, Special("wheel", "move", 1))
    assert s.pawn[0] == 1 and s.tokens[0] == 7 and s.lp_tokens.sum() == 0
    assert not any(legal(s, Train(k)) for k in range(5))
    assert not legal(s, Special("wheel", "move", 0))


def test_token_special_spends_a_token_and_places_it_in_the_region():
    s = deal()
    act(s, Move(0))
    act(s, Special("token", "move", 5))  # the dotted line Lleida - Terrassa
    assert s.pawn[0] == 5 and s.tokens[0] == 6 and s.lp_tokens[5, 0] == 1
    assert not legal(s, Special("token", "move", 3))  # once per turn
    end_turns(s, 2)
    size = int(np.flatnonzero(s.regions[5])[0]) + 1
    act(s, Special("token", "recruit", size))
    assert s.tokens[0] == 5 and s.lp_tokens[5, 0] == 2


def test_no_token_left_no_special():
    s = deal()
    s.tokens[0] = 0
    s.collected[0, 2] = 7  # keep the 7 tokens accounted for
    act(s, Move(0))
    assert not any(legal(s, Special("token", k, a)) for k, a in [("move", 1), ("move", 5)])


def test_end_turn_passes_clockwise_and_resets_actions():
    s = deal(3, first_player=1)
    assert s.current_player == 1
    act(s, Move(0))
    act(s, EndTurn())
    assert s.current_player == 2
    act(s, EndTurn())
    assert s.current_player == 0 and s.round == 1
    act(s, EndTurn())
    assert s.current_player == 1 and s.round == 2
    assert legal(s, Move(1)) and not legal(s, Move(6))


def test_wheel_turns_every_round_and_regions_refill_every_other_round():
    s = deal(2)
    act(s, Move(0))
    act(s, Recruit(int(np.flatnonzero(s.regions[0])[0]) + 1))
    shown = [s.window_kind(w) for w in range(8)]
    end_turns(s, 2)  # end of round 1: no refill
    assert [s.window_kind(w) for w in range(8)] == shown[1:] + shown[:1]
    assert s.regions[0].sum() == 2
    end_turns(s, 2)  # end of round 2: refill to 3
    assert (s.regions.sum(axis=1) == 3).all()


def test_game_ends_after_round_ten():
    s = deal(2)
    end_turns(s, 19)
    assert s.round == 10 and not s.is_terminal()
    act(s, EndTurn())
    assert s.is_terminal() and s.current_player == -1
    assert not s.legal_action_mask().any()
    with pytest.raises(IllegalActionError, match="over"):
        s.apply_action(ACTIONS.encode(EndTurn()))


def test_refill_stops_when_the_bag_is_empty():
    s = deal(4)
    clear_hand(s, 1)
    moved = list(s.bag)
    s.bag = []
    s.hand[1] = np.bincount(np.array(moved), minlength=10)
    s.regions[:] = 0
    end_turns(s, 8)
    assert s.round == 3 and s.regions.sum() == 0
