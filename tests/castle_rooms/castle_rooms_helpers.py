"""Position builders for the Castle Rooms tests (named uniquely: test folders share sys.path)."""

from __future__ import annotations

import numpy as np

from castle_envs.castle_rooms import actions as A
from castle_envs.castle_rooms.data import ROOM_SIDES, SIDE_SHORT, cards_in_play
from castle_envs.castle_rooms.rules import DEFAULT_RULES, CastleRoomsState

DRAGONS = (54, 55, 56, 57, 58, 59)
KNIGHTS = (60, 61, 62, 63)


def rooms(sides: str) -> list[int]:
    """Every Room whose helmet-up sides are ``sides``, e.g. ``rooms("HH>LL")``."""
    entry, exit_ = (SIDE_SHORT.index(x) for x in sides.split(">"))
    return [c for c, s in enumerate(ROOM_SIDES) if s == (entry, exit_)]


def build(
    num_players=2, hands=None, rows=None, deck=None, player=0, rules=None, turn=0, discard=()
) -> CastleRoomsState:
    """A position through ``from_dict``. ``rows[seat]`` = [(cards, "up"/"down", dragon), ...];
    cards placed nowhere else go to the deck (``deck=None``) or, when ``deck`` is given, to the
    discard pile, so every card stays accounted for."""
    hands = [list(h) for h in (hands or [[] for _ in range(num_players)])]
    rows = rows or [[] for _ in range(num_players)]
    placed = [c for h in hands for c in h] + list(discard)
    row_dicts = []
    for seat_rows in rows:
        seat_list = []
        for cards, helmet, dragon in seat_rows:
            placed += list(cards) + ([dragon] if dragon is not None else [])
            seat_list.append({"cards": list(cards), "helmet": helmet, "dragon": dragon})
        row_dicts.append(seat_list)
    rest = [c for c in cards_in_play(num_players) if c not in placed]
    if deck is None:
        deck, extra = rest, []
    else:
        deck = list(deck)
        extra = [c for c in rest if c not in deck]
    return CastleRoomsState.from_dict(
        {
            "game": "castle-rooms",
            "num_players": num_players,
            "rules": {**DEFAULT_RULES, **(rules or {})},
            "deck": deck,
            "hands": hands,
            "rows": row_dicts,
            "discard": list(discard) + extra,
            "player": player,
            "turn": turn,
            "winners": None,
            "end_reason": None,
        }
    )


def legal(state) -> set[int]:
    return set(int(a) for a in np.flatnonzero(state.legal_action_mask()))


def slot_of(state, card) -> int:
    return state.hands[state.player].index(card)


__all__ = ["A", "DRAGONS", "KNIGHTS", "build", "legal", "rooms", "slot_of"]
