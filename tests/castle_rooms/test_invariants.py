"""Invariants over seeded random games: cards conserved, the mask is exactly what apply
accepts, hands within limits, every game ends, JSON round trips, determinism."""

import json

import numpy as np
import pytest

from castle_envs.castle_rooms import actions as A
from castle_envs.castle_rooms.data import cards_in_play
from castle_envs.castle_rooms.observation import encode
from castle_envs.castle_rooms.rules import CastleRoomsState
from castle_envs.core import IllegalActionError

# a move can only shrink the hand or end a turn; turns are bounded by the deck
MAX_STEPS = 400


def all_cards(state):
    cards = list(state.deck) + list(state.discard) + [c for h in state.hands for c in h]
    for rows in state.rows:
        for row in rows:
            cards += row.cards + ([row.dragon] if row.dragon >= 0 else [])
    return cards


def random_game(n, seed, rules=None, visit=None):
    rng = np.random.default_rng(seed)
    state = CastleRoomsState.deal(n, rng, rules)
    steps = 0
    while not state.is_terminal():
        if visit:
            visit(state, steps)
        legal = np.flatnonzero(state.legal_action_mask())
        assert len(legal) > 0, "a live position always has a legal move"
        state.apply_action(int(legal[rng.integers(len(legal))]))
        steps += 1
        assert steps < MAX_STEPS
    return state, steps


RULE_SETS = [
    None,
    {"new_row": "any_time", "later_rows": "free"},
    {"new_row": "forced", "later_rows": "opposite_first"},
]


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("rules", RULE_SETS, ids=["default", "any_time-free", "forced-first"])
def test_cards_conserved_hands_bounded_and_games_end(n, rules):
    expected = sorted(cards_in_play(n))

    def visit(state, _):
        assert sorted(all_cards(state)) == expected
        for seat, hand in enumerate(state.hands):
            assert len(hand) <= (A.HAND_SLOTS if seat == state.player else 2)
        for rows in state.rows:
            assert len(rows) <= A.MAX_ROWS and all(len(r.cards) < 10 for r in rows)

    for seed in range(1000):
        state, _ = random_game(n, 1000 * n + seed, rules, visit)
        assert sorted(all_cards(state)) == expected
        assert state.winners and state.end_reason in ("row", "deck")
        if state.end_reason == "row":
            assert max(len(r.cards) for r in state.rows[state.winners[0]]) == 10
        else:
            assert state.deck == []


@pytest.mark.parametrize("n", [2, 3, 4])
def test_mask_is_exactly_what_apply_accepts(n):
    checked = 0

    def visit(state, step):
        nonlocal checked
        if step % 5:
            return
        mask = state.legal_action_mask()
        for a in range(A.NUM_ACTIONS):
            trial = state.clone()
            try:
                trial.apply_action(a)
                accepted = True
            except IllegalActionError as err:
                accepted = False
                assert str(a) in str(err)
            assert accepted == bool(mask[a]), (a, state.describe_action(a))
        checked += 1

    for seed in range(36):
        random_game(n, 7 + seed, {"new_row": ["when_stuck", "any_time", "forced"][seed % 3]}, visit)
    assert checked > 400


@pytest.mark.parametrize("n", [2, 3, 4])
def test_json_round_trip_and_clone_independence(n):
    def visit(state, step):
        for seat in range(n):
            encode(state, seat)  # fill the encoder's caches, so later steps test them
        if step % 3:
            return
        text = state.to_json()
        back = CastleRoomsState.from_json(text)
        assert back == state and json.loads(back.to_json()) == json.loads(text)
        assert np.array_equal(back.legal_action_mask(), state.legal_action_mask())
        for seat in range(n):  # the cached row blocks equal a fresh encoding
            assert np.array_equal(encode(state, seat), encode(back, seat))
        twin = state.clone()
        legal = np.flatnonzero(twin.legal_action_mask())
        twin.apply_action(int(legal[-1]))
        assert CastleRoomsState.from_json(text) == state  # the original is untouched

    for seed in range(20):
        final, _ = random_game(n, 99 + seed, visit=visit)
        assert CastleRoomsState.from_dict(final.to_dict()) == final


def test_same_seed_same_game_different_seed_different_deal():
    a, steps_a = random_game(3, 5)
    b, steps_b = random_game(3, 5)
    c, _ = random_game(3, 6)
    assert a.to_dict() == b.to_dict() and steps_a == steps_b
    assert a.to_dict() != c.to_dict()
