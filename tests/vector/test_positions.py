"""Rare and unreachable-by-random-play positions: every legal action from each one, on the
batched env and on ``rules.State``, gives the same next observation, mask and reward."""

import numpy as np
import pytest

from castle_envs.castle_siege.cards import parse_card
from castle_envs.castle_siege.observation import encode
from castle_envs.castle_siege.rules import State
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv

from .helpers import assert_row_is


def C(*names):
    return [parse_card(n) for n in names]


def position(
    hand,
    columns,
    castles,
    phase="battle",
    discard=(),
    captured=(False,) * 4,
    rules=None,
    difficulty="very_hard",
    regroup_used=False,
    deck=None,
):
    """Cards not placed go to the deck, or, when ``deck`` is given, to the discard pile."""
    placed = list(hand) + [c for col in columns for c in col] + list(castles) + list(discard)
    rest = [c for c in range(52) if c not in placed and c not in (deck or ())]
    deck, discard = (rest, list(discard)) if deck is None else (list(deck), list(discard) + rest)
    return State.from_dict(
        {
            "game": "castle_siege",
            "difficulty": difficulty,
            "rules": rules or {"attack": "any", "defeated": "discard"},
            "deck": deck,
            "hand": sorted(hand),
            "columns": [list(c) for c in columns],
            "castles": list(castles),
            "captured": list(captured),
            "discard": sorted(discard),
            "out_of_game": [],
            "recycled": [],
            "phase": phase,
            "regroup_used": regroup_used,
            "turn": 3,
            "outcome": 0,
        }
    )


POSITIONS = {
    # six cards in hand: the end-of-turn discard (provably unreachable in play)
    "discard phase": position(
        C("AS", "2S", "3C", "4H", "5D", "6D"),
        [C("7S"), [], [], []],
        C("10S", "10C", "10H", "10D"),
        phase="discard",
    ),
    # J, Q, K of three suits: Royal Assault, then a castle with defenders swept out of the game
    "royal assault, leave_game": position(
        C("JS", "QC", "KH", "2D"),
        [C("9S", "8S"), C("9C"), [], C("9D")],
        C("10S", "10C", "10H", "10D"),
        rules={"attack": "any", "defeated": "leave_game"},
    ),
    "royal assault, most recent": position(
        C("JS", "QC", "KH", "AD", "2H"),
        [C("9S", "8S"), C("9C"), [], C("3D")],
        C("10S", "10C", "10H", "10D"),
        rules={"attack": "most_recent", "defeated": "discard"},
    ),
    # exact sums, flushes and the last castle: capture to victory
    "captures and victory": position(
        C("4H", "6H", "3S", "7C", "AD"),
        [[], [], [], []],
        C("10S", "10C", "10H", "10D"),
        captured=(True, True, True, False),
    ),
    "regroup": position(
        C("AS", "2S", "3S", "4S", "6D"),
        [[], [], [], []],
        C("KS", "KC", "KH", "KD"),
        discard=C("QS"),
    ),
    "precision strike pending": position(
        C("2S"),
        [C("9C"), [], [], []],
        C("10S", "10C", "10H", "10D"),
        phase="precision_strike",
        discard=C("5H", "4H", "9H"),
    ),
}
# the last card of the deck: a Flush Siege (some with a Precision Strike), a Regroup or the
# end-of-turn deal takes it; under victory="deck_left" that loses at once
for _victory in ("any_time", "deck_left"):
    _rules = {"attack": "any", "defeated": "discard", "victory": _victory}
    POSITIONS[f"last deck card, {_victory}"] = position(
        C("3H", "4H", "5H", "9S", "KC"),
        [C("7D"), C("QD"), [], []],
        C("10S", "10C", "10H", "10D"),
        rules=_rules,
        deck=C("KS"),
    )
    POSITIONS[f"last castle, last deck cards, {_victory}"] = position(
        C("2S", "3S"),
        [[], [], [], []],
        C("KS", "KC", "KH", "KD"),
        captured=(False, True, True, True),
        rules=_rules,
        deck=C("AH", "6S"),
    )


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_every_legal_action_matches(name):
    start = POSITIONS[name]
    legal = np.flatnonzero(start.legal_action_mask())
    assert len(legal) > 0
    envs = CastleSiegeVectorEnv(
        len(legal), difficulty=start_difficulty(start), **start.rule_options(), reward="shaped"
    )
    envs.reset(seed=0)
    for i in range(len(legal)):
        envs.set_state(i, start)
    assert np.array_equal(envs.action_masks()[0], start.legal_action_mask())
    obs, rewards, terminated, truncated, info = envs.step(legal)
    for i, action in enumerate(legal):
        after = start.clone()
        after.apply_action(int(action))
        assert terminated[i] == after.is_terminal()
        assert_row_is(envs, i, after, obs, info, encode, (name, action))


def start_difficulty(state):
    return {1: "easy", 2: "medium", 3: "hard", 4: "very_hard"}[state.rows]


def test_positions_cover_the_rare_rules():
    # the scenarios above really exercise what they are named after
    from castle_envs.castle_siege.actions import DISCARD_BASE, ROYAL_BASE, play_action
    from castle_envs.castle_siege.rules import ROYAL

    assert POSITIONS["discard phase"].legal_action_mask()[DISCARD_BASE : DISCARD_BASE + 6].all()
    royal = POSITIONS["royal assault, leave_game"].clone()
    hand = royal.hand_cards()
    slots = [hand.index(c) for c in C("JS", "QC", "KH")]
    royal.apply_action(play_action(slots, C("9C")[0]))
    assert royal.phase == ROYAL
    royal.apply_action(ROYAL_BASE + 0)  # castle 0 still has 9S and 8S: swept out of the game
    assert set(C("9S", "8S")) <= set(np.flatnonzero(royal.out_of_game).tolist())
