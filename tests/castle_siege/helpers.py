"""Building Castle Siege positions by card name for scenario tests."""

from __future__ import annotations

import numpy as np

from castle_envs.castle_siege.cards import parse_card
from castle_envs.castle_siege.rules import State


def C(*names: str) -> list[int]:
    """Card ids from names: C('7H', 'QS') -> [32, 11]."""
    return [parse_card(n) for n in names]


def deck_order(castles, rows, then=()) -> list[int]:
    """A full 52-card deck: castles, defender rows (left to right), then ``then``, then the
    remaining cards in id order."""
    top = list(castles) + [c for row in rows for c in row] + list(then)
    return top + [c for c in range(52) if c not in top]


def position(
    hand=(),
    columns=((), (), (), ()),
    castles=None,
    captured=(False,) * 4,
    deck=None,
    discard=(),
    out_of_game=(),
    phase="battle",
    difficulty="very_hard",
    rules=None,
    recycled=(),
    turn=1,
    regroup_used=False,
) -> State:
    """A state from its parts. Cards not placed go to the deck (when ``deck`` is None, in
    id order) or else to the discard pile."""
    castles = list(castles if castles is not None else C("10S", "10C", "10H", "10D"))
    placed = (
        list(hand)
        + [c for col in columns for c in col]
        + castles
        + list(discard)
        + list(out_of_game)
        + list(deck or [])
    )
    rest = [c for c in range(52) if c not in placed]
    if deck is None:
        deck, discard = rest, list(discard)
    else:
        deck, discard = list(deck), list(discard) + rest
    return State.from_dict(
        {
            "game": "castle_siege",
            "difficulty": difficulty,
            "rules": rules or {"attack": "any", "defeated": "discard"},
            "deck": deck,
            "hand": sorted(hand),
            "columns": [list(c) for c in columns],
            "castles": castles,
            "captured": list(captured),
            "discard": sorted(discard),
            "out_of_game": sorted(out_of_game),
            "recycled": list(recycled),
            "phase": phase,
            "regroup_used": regroup_used,
            "turn": turn,
            "outcome": 0,
            "events": {},
        }
    )


def slots(state: State, *names: str) -> tuple[int, ...]:
    hand = state.hand_cards()
    return tuple(hand.index(c) for c in C(*names))


def conserved(state: State) -> bool:
    """All 52 cards present exactly once across deck, hand, columns, castles, discard, out."""
    cards = (
        state.deck_cards()
        + state.hand_cards()
        + [c for k in range(4) for c in state.column(k)]
        + [int(c) for c in state.castles]
        + [int(c) for c in np.flatnonzero(state.discard)]
        + [int(c) for c in np.flatnonzero(state.out_of_game)]
    )
    return sorted(cards) == list(range(52))
