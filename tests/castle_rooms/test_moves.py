"""Castle Rooms' move view (castle_envs/castle_rooms/moves.py): the PettingZoo wrapper passes
api_test, the rows are exactly the legal moves, each row says what its move does, and a row
reads only what the player to act sees."""

import warnings

import numpy as np
import pytest
from castle_rooms_helpers import DRAGONS, KNIGHTS, build, rooms
from pettingzoo.test import api_test

from castle_envs.castle_rooms import actions as A
from castle_envs.castle_rooms.balance import greedy_policy
from castle_envs.castle_rooms.data import ENTRY, FIRST_DRAGON
from castle_envs.castle_rooms.moves import COLUMN, FEATURES, RoomsMoves, move_rows
from castle_envs.castle_rooms.rules import CastleRoomsState
from castle_envs.moves import feature_names, make_move_env, make_move_vec, move_view


def _row(state, action):
    return dict(zip(FEATURES, move_rows(state, [action])[0]))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_wrapped_env_passes_pettingzoo_api_test(players):
    env = make_move_env("castle-rooms", num_players=players)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=200)


def test_only_the_seat_to_act_sees_rows_and_they_match_its_mask():
    env = make_move_env("castle-rooms", num_players=3)
    env.reset(seed=4)
    space = env.observation_space("player_0")
    for agent in env.agent_iter(max_iter=300):
        obs, _, term, trunc, _ = env.last()
        assert space.contains(obs)
        for other in env.agents:
            seen = env.observe(other)
            if other != agent or term or trunc:
                assert not seen["move_mask"].any() and not seen["move_features"].any()
        if term or trunc:
            env.step(None)
            continue
        rows = obs["move_mask"] == 1
        assert sorted(obs["move_ids"][rows]) == np.flatnonzero(obs["action_mask"]).tolist()
        env.step(int(obs["move_ids"][rows][-1]))


def test_rows_are_the_legal_moves_in_every_position_of_many_games():
    view = move_view("castle-rooms")
    assert view.capacity == A.NUM_ACTIONS and feature_names("castle-rooms") == FEATURES
    rng = np.random.default_rng(20_000_000)
    positions = 0
    for players in (2, 3, 4):
        for _ in range(15):
            state = CastleRoomsState.deal(players, rng)
            while not state.is_terminal():
                out, n = view.from_state(state)
                legal = np.flatnonzero(state.legal_action_mask())
                assert n == len(legal) and out["move_mask"].sum() == n
                assert out["move_ids"][:n].tolist() == legal.tolist()
                feats = out["move_features"][:n]
                assert feats.min() >= 0 and feats.max() <= 1
                kinds = feats[:, :6]  # exactly one kind per row
                assert (kinds.sum(1) == 1).all()
                assert not out["move_features"][n:].any()
                state.apply_action(greedy_policy(state, rng))
                positions += 1
    assert positions > 1000
    out, n = view.from_state(state)  # the game is over: an empty view
    assert n == 0 and not out["move_mask"].any()


def test_a_room_that_completes_ten_says_it_wins():
    row9 = rooms("HH>HH")[:9]
    last = rooms("HH>HH")[9]
    state = build(hands=[[last, rooms("LL>LL")[0]], []], rows=[[(row9, "up", None)], []])
    r = _row(state, A.play_id(0, 0))
    assert r["play_room"] == r["card_room"] == r["target_own"] == 1
    assert r["target_length/10"] == pytest.approx(0.9) and r["target_is_longest"] == 1
    assert r["wins_now"] == 1 and r["length_after/10"] == 1 and r["my_longest/10"] == 1
    assert r["laid_entry_HH"] == r["laid_exit_HH"] == 1 and r["laid_helmet_down"] == 0
    assert r["ahead"] == 1 and r["behind"] == r["tied"] == 0


def test_a_dragon_row_names_the_opponents_row_and_what_blocking_it_leaves():
    long_row, short_row = rooms("HH>HH")[:5], rooms("LL>LL")[:2]
    state = build(
        hands=[[DRAGONS[0], rooms("HH>LL")[0]], []],
        rows=[
            [(rooms("HH>HH")[5:8], "up", None)],
            [(long_row, "up", None), (short_row, "down", None)],
        ],
    )
    on_long, on_short = _row(state, A.dragon_id(1, 0)), _row(state, A.dragon_id(1, 1))
    for r in (on_long, on_short):
        assert r["dragon"] == r["card_dragon"] == r["target_opponent_1"] == 1
        assert r["target_own"] == 0 and r["hand_dragons/4"] == 0
        assert r["opp_longest/10"] == pytest.approx(0.5)  # blocked rows still count
    assert on_long["target_length/10"] == pytest.approx(0.5) and on_long["target_is_longest"]
    assert on_long["opp_longest_open/10"] == pytest.approx(0.2)
    assert on_short["target_is_longest"] == 0
    assert on_short["opp_longest_open/10"] == pytest.approx(0.5)
    assert on_long["opp_open_rows/12"] == on_short["opp_open_rows/12"] == pytest.approx(1 / 12)
    assert on_long["behind"] == 1  # 3 against 5


def test_a_knight_frees_a_blocked_row_and_a_new_row_starts_one():
    blocked = rooms("HH>HH")[:4]
    fits = rooms("HH>LL")[0]  # entry HH fits the freed row's HH exit
    state = build(
        hands=[[fits, KNIGHTS[0], rooms("LL>LL")[0]], []],
        rows=[[(blocked, "up", DRAGONS[0])], [(rooms("LL>HH")[:1], "up", None)]],
    )
    knight = _row(state, A.knight_id(0))
    assert knight["knight"] == knight["card_knight"] == knight["target_blocked"] == 1
    assert knight["my_open_rows/12"] == pytest.approx(1 / 12)
    assert knight["my_longest_open/10"] == pytest.approx(0.4)
    assert knight["exit_fits_hand_after/3"] == pytest.approx(1 / 3)  # the HH>LL in hand
    assert knight["hand_rooms_fitting/4"] == pytest.approx(1 / 4)
    # nothing fits an open row (the only row is blocked): new rows are legal, facing down
    legal = np.flatnonzero(state.legal_action_mask())
    new = [a for a in legal if A.NEW_ROW_BASE <= a < A.DRAGON_BASE]
    assert new and all((a - A.NEW_ROW_BASE) % 2 == 1 for a in new)
    r = _row(state, new[0])
    assert r["new_row"] == r["card_room"] == r["laid_helmet_down"] == 1
    assert r["rows_after/12"] == pytest.approx(2 / 12) and r["length_after/10"] == 0.1
    assert r["target_own"] == 0 and r["my_open_rows/12"] == pytest.approx(1 / 12)


def test_end_turn_keeps_the_hand_and_counts_fit_the_unseen_cards():
    state = CastleRoomsState.deal(2, np.random.default_rng(20_000_007))
    while A.END_TURN not in np.flatnonzero(state.legal_action_mask()) or not state.rows[0]:
        state.apply_action(greedy_policy(state, np.random.default_rng(0)))
    me = state.player
    r = _row(state, A.END_TURN)
    assert r["end_turn"] == 1 and r["card_room"] == r["card_dragon"] == r["card_knight"] == 0
    assert r["hand_after/4"] == len(state.hands[me]) / 4 and r["may_end_turn"] == 1
    assert r["deck/64"] == pytest.approx(len(state.deck) / 64)
    # fits of a Room laid now count the deck and the other hands (what the player cannot see)
    hidden = set(state.deck) | {c for s in range(2) if s != me for c in state.hands[s]}
    legal = np.flatnonzero(state.legal_action_mask())
    for a in legal[legal < A.NEW_ROW_BASE]:
        slot, row = divmod(int(a), A.MAX_ROWS)
        target = state.rows[me][row]
        card = state.hands[me][slot]
        from castle_envs.castle_rooms.data import EXIT

        side = EXIT[target.helmet][card]
        expect = sum(1 for c in hidden if c < FIRST_DRAGON and ENTRY[target.helmet][c] == side)
        assert _row(state, int(a))["exit_fits_unseen_after/26"] == pytest.approx(expect / 26)


def test_rows_read_only_what_the_player_to_act_sees():
    view = RoomsMoves()
    rng = np.random.default_rng(20_000_011)
    checked = 0
    for _ in range(10):
        state = CastleRoomsState.deal(3, rng)
        while not state.is_terminal():
            out, _ = view.from_state(state)
            for k in range(3):  # the deck order and the other hands re-dealt
                other, _ = view.from_state(
                    state.determinize(state.player, np.random.default_rng(k))
                )
                for key in out:
                    assert np.array_equal(out[key], other[key]), key
            checked += 1
            state.apply_action(greedy_policy(state, rng))
    assert checked > 200


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="no compiled env"):
        make_move_env("castle-rooms", compiled=True)
    with pytest.raises(ValueError, match="batched"):
        make_move_vec("castle-rooms", 2)
    with pytest.raises(ValueError, match="unknown game"):
        move_view("castles")
    with pytest.raises(ValueError, match="capacity"):
        RoomsMoves(0)
    state = CastleRoomsState.deal(2, np.random.default_rng(0))
    small, n = RoomsMoves(1).from_state(state)  # a capacity below the legal count: counted
    assert small["move_mask"].sum() == 1 and n == state.legal_action_mask().sum()
    assert COLUMN["end_turn"] == 5
