"""One scenario per rule sentence (RULES.md), built with from_dict, acted on, asserted."""

import numpy as np
import pytest
from castle_rooms_helpers import DRAGONS, KNIGHTS, build, legal, rooms, slot_of

from castle_envs.castle_rooms import actions as A
from castle_envs.castle_rooms.data import DOWN, ENTRY, EXIT, FLIP, ROOM_SIDES, UP
from castle_envs.castle_rooms.rules import CastleRoomsState
from castle_envs.core import IllegalActionError

HHHH, HHLL, LLHH, LLLL = rooms("HH>HH"), rooms("HH>LL"), rooms("LL>HH"), rooms("LL>LL")


# --- preparation ----------------------------------------------------------------------------
@pytest.mark.parametrize("n,total", [(2, 60), (3, 60), (4, 64)])
def test_deck_size_and_removed_cards(n, total):
    state = CastleRoomsState.deal(n, np.random.default_rng(0))
    in_play = state.deck + [c for h in state.hands for c in h]
    assert len(in_play) == len(set(in_play)) == total
    kinds = [sum(1 for c in in_play if c in group) for group in (DRAGONS, KNIGHTS)]
    assert kinds == ([6, 4] if n == 4 else [4, 2])
    assert sum(1 for c in in_play if c < 54) == 54


@pytest.mark.parametrize("n", [2, 3, 4])
def test_deal_two_each_and_first_player_draws_two(n):
    state = CastleRoomsState.deal(n, np.random.default_rng(1), first_player=n - 1)
    assert state.current_player == n - 1
    assert [len(h) for h in state.hands] == [2] * (n - 1) + [4]
    assert len(state.deck) == (64 if n == 4 else 60) - 2 * n - 2


def test_each_turn_draws_two_and_passes_clockwise():
    state = build(3, hands=[[HHHH[0]], [HHHH[1]], []], deck=[LLLL[0], LLLL[1], LLLL[2]])
    state.apply_action(A.END_TURN)
    assert state.current_player == 1
    assert state.hands[1] == sorted([HHHH[1], LLLL[0], LLLL[1]])
    assert state.deck == [LLLL[2]]


def test_last_single_card_is_drawn_alone():
    state = build(2, hands=[[], []], deck=[LLLL[0]])
    state.apply_action(A.END_TURN)
    assert state.hands[1] == [LLLL[0]] and state.deck == []


# --- turn end and hand limit ------------------------------------------------------------------
def test_turn_may_not_end_with_more_than_two_cards():
    state = build(2, hands=[[HHHH[0], HHHH[1], HHHH[2]], []], rows=[[([HHHH[3]], "up", None)], []])
    assert A.END_TURN not in legal(state)
    with pytest.raises(IllegalActionError, match="more than 2 cards"):
        state.apply_action(A.END_TURN)
    state.apply_action(A.play_id(0, 0))
    assert A.END_TURN in legal(state)


def test_any_number_of_cards_may_be_played_in_a_turn():
    hand = [HHHH[0], HHHH[1], HHHH[2], HHHH[3]]
    state = build(2, hands=[hand, []], rows=[[([HHHH[4]], "up", None)], []])
    for _ in range(4):
        state.apply_action(A.play_id(0, 0))
    assert len(state.rows[0][0].cards) == 5 and state.hands[0] == []
    assert state.current_player == 0


def test_stuck_with_three_cards_must_start_a_new_row():
    # row 0 (helmet up) ends LL; HH-entry rooms do not fit it
    state = build(2, hands=[[HHHH[0], HHHH[1], HHLL[0]], []], rows=[[([HHLL[1]], "up", None)], []])
    moves = legal(state)
    assert A.END_TURN not in moves
    assert not any(a < A.NEW_ROW_BASE for a in moves)
    # the new row faces the other way to the first row
    assert moves == {A.new_row_id(i, DOWN) for i in range(3)}


# --- rows ---------------------------------------------------------------------------------------
def test_entry_must_match_exit_of_card_on_left_helmet_up():
    state = build(
        2, hands=[[HHLL[0], LLHH[0], LLLL[0]], []], rows=[[([HHLL[1]], "up", None)], []]
    )  # exit LL
    moves = legal(state)
    fits = {c for c in state.hands[0] if A.play_id(slot_of(state, c), 0) in moves}
    assert fits == {LLHH[0], LLLL[0]}
    with pytest.raises(IllegalActionError, match="does not match"):
        state.apply_action(A.play_id(slot_of(state, HHLL[0]), 0))


def test_helmet_down_turns_the_card_180_degrees():
    # helmet down: entry = flip(exit_up), exit = flip(entry_up)
    for card in (HHLL[0], rooms("HH>HL")[0], rooms("LH>LL")[0]):
        a, b = ROOM_SIDES[card]
        assert ENTRY[DOWN][card] == FLIP[b] and EXIT[DOWN][card] == FLIP[a]
        assert ENTRY[UP][card] == a and EXIT[UP][card] == b
    # a helmet-down row of LL>HH (lies as LL>HH too) ending HH takes HH>LL turned: entry flip(LL)=HH
    state = build(
        2,
        hands=[[HHLL[0], LLLL[0], HHHH[0]], []],
        rows=[[([LLHH[0]], "up", None), ([LLHH[1]], "down", None)], []],
    )
    moves = legal(state)
    assert A.play_id(slot_of(state, HHLL[0]), 1) in moves  # turned: HH>LL
    assert A.play_id(slot_of(state, LLLL[0]), 1) in moves  # turned: HH>HH
    assert A.play_id(slot_of(state, HHHH[0]), 1) not in moves  # turned: LL>LL


def test_rows_grow_only_to_the_right():
    state = build(2, hands=[[LLHH[0], LLLL[0]], []], rows=[[([HHLL[1]], "up", None)], []])
    state.apply_action(A.play_id(slot_of(state, LLHH[0]), 0))
    assert state.rows[0][0].cards == [HHLL[1], LLHH[0]]
    assert state.rows[0][0].exit == ROOM_SIDES[LLHH[0]][1]
    # LL>LL no longer fits: the row's right end now shows HH, and nothing goes on the left
    assert A.play_id(slot_of(state, LLLL[0]), 0) not in legal(state)


def test_first_row_may_face_either_way():
    state = build(2, hands=[[HHHH[0], HHHH[1], HHHH[2]], []])
    assert legal(state) == {A.new_row_id(i, h) for i in range(3) for h in (UP, DOWN)}


def new_row_helmets(state):
    """Helmets offered for a new row started with hand slot 0."""
    return {h for h in (UP, DOWN) if A.new_row_id(0, h) in legal(state)}


@pytest.mark.parametrize(
    "rule,third", [("alternate", {UP}), ("opposite_first", {DOWN}), ("free", {UP, DOWN})]
)
def test_later_rows_helmet_rule(rule, third):
    # row 0 up ends LL; row 1 down holds LL>LL turned (lies HH>HH), ends HH. HH>HH in hand
    # enters HH (up) or LL (down): it fits neither, so a third row may start
    state = build(
        2,
        hands=[[HHHH[0], HHHH[1], HHHH[2]], []],
        rules={"later_rows": rule},
        rows=[[([HHLL[0]], "up", None), ([LLLL[0]], "down", None)], []],
    )
    assert new_row_helmets(state) == third
    second_only = build(
        2,
        hands=[[HHHH[0], HHHH[1], HHHH[2]], []],
        rules={"later_rows": rule},
        rows=[[([HHLL[0]], "up", None)], []],
    )
    assert new_row_helmets(second_only) == {DOWN}


def test_new_row_when_stuck_is_not_allowed_while_a_room_fits():
    state = build(2, hands=[[LLLL[0], HHHH[0], HHHH[1]], []], rows=[[([HHLL[0]], "up", None)], []])
    moves = legal(state)
    assert not any(A.NEW_ROW_BASE <= a < A.DRAGON_BASE for a in moves)
    with pytest.raises(IllegalActionError, match="new row may not be started"):
        state.apply_action(A.new_row_id(1, DOWN))


@pytest.mark.parametrize(
    "mode,hand_size,allowed",
    [("when_stuck", 2, True), ("forced", 2, False), ("forced", 3, True), ("any_time", 2, True)],
)
def test_new_row_modes_when_nothing_fits(mode, hand_size, allowed):
    state = build(
        2,
        hands=[HHHH[:hand_size], []],
        rows=[[([HHLL[0]], "up", None)], []],
        rules={"new_row": mode},
    )
    assert (A.new_row_id(0, DOWN) in legal(state)) == allowed


def test_any_time_mode_allows_a_new_row_even_when_a_room_fits():
    state = build(
        2,
        hands=[[LLLL[0]], []],
        rows=[[([HHLL[0]], "up", None)], []],
        rules={"new_row": "any_time"},
    )
    assert {A.play_id(0, 0), A.new_row_id(0, DOWN)} <= legal(state)


def _stuck_rows(count):
    # up rows of HH>LL end LL; down rows of LL>LL (turned: HH>HH) end HH; an HH>HH from the
    # hand enters HH up / LL down, so it fits none of them
    return [
        ([HHLL[i // 2]], "up", None) if i % 2 == 0 else ([LLLL[i // 2]], "down", None)
        for i in range(count)
    ]


def test_there_is_no_limit_on_rows_short_of_the_table_cap():
    state = build(
        2, hands=[[HHHH[0], HHHH[1], HHHH[2]], []], rows=[_stuck_rows(A.MAX_ROWS - 1), []]
    )
    state.apply_action(A.new_row_id(0, (A.MAX_ROWS - 1) % 2))
    assert len(state.rows[0]) == A.MAX_ROWS


def test_at_the_table_cap_unusable_rooms_may_be_discarded():
    state = build(2, hands=[[HHHH[0], HHHH[1], HHHH[2]], []], rows=[_stuck_rows(A.MAX_ROWS), []])
    assert legal(state) == {A.discard_id(0), A.discard_id(1), A.discard_id(2)}
    with pytest.raises(IllegalActionError, match="at most 12 rows"):
        state.apply_action(A.new_row_id(0, UP))


# --- dragons and knights ------------------------------------------------------------------------
def test_dragon_blocks_an_opponents_row():
    state = build(
        2,
        hands=[[DRAGONS[0]], [LLLL[0]]],
        rows=[[], [([HHLL[0]], "up", None)]],
        deck=[HHHH[0], HHHH[1]],
    )
    assert legal(state) == {A.dragon_id(1, 0), A.END_TURN}
    state.apply_action(A.dragon_id(1, 0))
    assert state.rows[1][0].dragon == DRAGONS[0]
    state.apply_action(A.END_TURN)
    # the opponent may not add Rooms to that row; nothing fits, so a new row may start
    assert A.play_id(slot_of(state, LLLL[0]), 0) not in legal(state)
    with pytest.raises(IllegalActionError, match="blocked"):
        state.apply_action(A.play_id(slot_of(state, LLLL[0]), 0))


def test_dragon_not_on_own_row_nor_on_an_already_blocked_row():
    state = build(
        3,
        hands=[[DRAGONS[0]], [], []],
        rows=[
            [([HHLL[0]], "up", None)],
            [([HHLL[1]], "up", DRAGONS[1])],
            [([HHLL[2]], "up", None), ([HHHH[0]], "down", None)],
        ],
    )
    assert legal(state) == {A.dragon_id(2, 0), A.dragon_id(2, 1), A.END_TURN}
    with pytest.raises(IllegalActionError, match="already blocked"):
        state.apply_action(A.dragon_id(1, 0))
    with pytest.raises(IllegalActionError, match="no opponent"):
        state.apply_action(A.dragon_id(3, 0))


def test_knight_removes_the_dragon_and_both_leave_the_game():
    state = build(
        2,
        hands=[[KNIGHTS[0], LLLL[0]], []],
        rows=[[([HHLL[0]], "up", DRAGONS[0]), ([HHHH[0]], "down", None)], []],
    )
    assert A.knight_id(0) in legal(state) and A.knight_id(1) not in legal(state)
    state.apply_action(A.knight_id(0))
    assert state.rows[0][0].dragon == -1
    assert {DRAGONS[0], KNIGHTS[0]} <= set(state.discard)
    assert A.play_id(0, 0) in legal(state)  # building resumes on that row


def test_knight_only_on_own_blocked_row():
    state = build(
        2,
        hands=[[KNIGHTS[0]], []],
        rows=[[([HHLL[0]], "up", None)], [([HHLL[1]], "up", DRAGONS[0])]],
    )
    assert legal(state) == {A.END_TURN}
    with pytest.raises(IllegalActionError, match="not blocked"):
        state.apply_action(A.knight_id(0))


def test_three_unusable_dragons_and_knights_are_discarded_down_to_two():
    # 4 players: all Knights exist; nobody has a row, so no Dragon or Knight has a use
    state = build(4, hands=[[DRAGONS[0], KNIGHTS[0], KNIGHTS[1], KNIGHTS[2]], [], [], []])
    assert legal(state) == {A.discard_id(i) for i in range(4)}
    state.apply_action(A.discard_id(0))
    assert legal(state) == {A.discard_id(i) for i in range(3)}
    state.apply_action(A.discard_id(2))
    assert legal(state) == {A.END_TURN}  # never below 2 by this rule
    assert DRAGONS[0] in state.discard and len(state.hands[0]) == 2


def test_two_unusable_specials_and_a_room_are_not_discarded():
    state = build(2, hands=[[KNIGHTS[0], KNIGHTS[1], HHHH[0]], []])
    room = slot_of(state, HHHH[0])
    assert legal(state) == {A.new_row_id(room, UP), A.new_row_id(room, DOWN)}
    with pytest.raises(IllegalActionError, match="only unusable cards"):
        state.apply_action(A.discard_id(slot_of(state, KNIGHTS[0])))


def test_a_usable_dragon_is_never_discarded():
    state = build(
        4,
        hands=[[DRAGONS[0], KNIGHTS[0], KNIGHTS[1], KNIGHTS[2]], [], [], []],
        rows=[[], [([HHLL[0]], "up", None)], [], []],
    )
    assert A.discard_id(0) not in legal(state)
    assert {A.discard_id(1), A.discard_id(2), A.discard_id(3), A.dragon_id(1, 0)} <= legal(state)


# --- winning --------------------------------------------------------------------------------------
def test_ten_rooms_in_a_row_win_at_once():
    row = [HHHH[i] for i in range(9)]
    state = build(
        3,
        hands=[[HHLL[0], HHHH[9], DRAGONS[0]], [], []],
        rows=[[(row, "up", None)], [([LLLL[0]] * 1, "up", None)], []],
    )
    state.apply_action(A.play_id(slot_of(state, HHLL[0]), 0))
    assert state.is_terminal() and state.winners == (0,) and state.end_reason == "row"
    assert list(state.returns()) == [1, -1, -1]
    assert state.current_player == -1 and not state.legal_action_mask().any()
    with pytest.raises(IllegalActionError, match="game is over"):
        state.apply_action(A.END_TURN)


def test_a_dragon_on_a_nine_room_row_stops_the_win():
    row = [HHHH[i] for i in range(9)]
    state = build(
        2, hands=[[DRAGONS[0]], [HHHH[9]]], rows=[[], [(row, "up", None)]], deck=[LLLL[0], LLLL[1]]
    )
    state.apply_action(A.dragon_id(1, 0))
    state.apply_action(A.END_TURN)
    assert A.play_id(slot_of(state, HHHH[9]), 0) not in legal(state)


def test_deck_out_longest_row_wins():
    state = build(
        3,
        hands=[[], [], []],
        deck=[],
        rows=[[(HHHH[:5], "up", None)], [(LLLL[:6], "up", None)], [(HHLL[:1], "up", None)]],
    )
    state.apply_action(A.END_TURN)
    assert state.is_terminal() and state.end_reason == "deck" and state.winners == (1,)


def test_deck_out_tie_broken_by_second_longest_row():
    state = build(
        2,
        hands=[[], []],
        deck=[],
        rows=[
            [(HHHH[:5], "up", None), ([HHLL[0]], "down", None)],
            [(LLLL[:5], "up", None), (HHHH[5:8], "down", None)],
        ],
    )
    state.apply_action(A.END_TURN)
    assert state.winners == (1,)
    assert list(state.returns()) == [-1, 1]


def test_deck_out_full_tie_shares_the_win():
    state = build(
        3,
        hands=[[], [], []],
        deck=[],
        rows=[[(HHHH[:4], "up", None)], [(LLLL[:4], "up", None)], [(HHHH[4:7], "up", None)]],
    )
    state.apply_action(A.END_TURN)
    assert state.winners == (0, 1) and list(state.returns()) == [1, 1, -1]


def test_the_player_who_draws_the_last_cards_plays_that_turn():
    state = build(2, hands=[[], []], deck=[HHHH[0], HHHH[1]])
    state.apply_action(A.END_TURN)
    assert not state.is_terminal() and state.current_player == 1 and len(state.hands[1]) == 2
    state.apply_action(A.new_row_id(0, UP))
    state.apply_action(A.END_TURN)
    assert state.is_terminal() and state.winners == (1,)


def test_a_blocking_dragon_is_not_a_room_at_deck_out():
    state = build(
        2,
        hands=[[], []],
        deck=[],
        rows=[[(HHHH[:3], "up", DRAGONS[0])], [(LLLL[:3], "up", None), ([HHLL[0]], "down", None)]],
    )
    state.apply_action(A.END_TURN)
    assert state.winners == (1,)


# --- naming moves -------------------------------------------------------------------------------
def test_describe_action_names_real_cards_and_players():
    state = build(
        3, hands=[[HHHH[0], DRAGONS[0]], [], []], rows=[[], [], [([HHLL[0]], "up", None)]]
    )
    assert f"R{HHHH[0]}" in state.describe_action(A.new_row_id(0, UP))
    assert "player_2" in state.describe_action(A.dragon_id(2, 0))
    assert state.describe_action(A.END_TURN) == "end turn"
    with pytest.raises(IllegalActionError, match=rf"R{HHHH[0]}"):
        state.apply_action(A.play_id(0, 0))


def test_dragon_opponents_are_counted_clockwise_from_the_actor():
    state = build(
        4,
        player=2,
        hands=[[], [], [DRAGONS[0]], []],
        rows=[[([HHLL[0]], "up", None)], [([HHLL[1]], "up", None)], [], [([HHLL[2]], "up", None)]],
    )
    assert legal(state) == {A.dragon_id(1, 0), A.dragon_id(2, 0), A.dragon_id(3, 0), A.END_TURN}
    assert "player_0" in state.describe_action(A.dragon_id(2, 0))
    state.apply_action(A.dragon_id(2, 0))  # +2 from seat 2 is seat 0
    assert state.rows[0][0].dragon == DRAGONS[0]
    assert state.rows[1][0].dragon == -1 and state.rows[3][0].dragon == -1
