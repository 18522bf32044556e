"""The 64 cards: card ids, kinds, and the Room connectors (reconstructed, from cards.json).

Card ids: Rooms 0..53 (the order of ``cards.json``), Dragons 54..59, Knights 60..63. With 2-3
players Dragons 58, 59 and Knights 62, 63 are set aside ("remove 2 Dragons and 2 Knights of
your choice": which ones is immaterial, they are identical).

A Room's two sides are stored as it lies *helmet up*: entry (left) and exit (right). Turning a
card 180 degrees (helmet down) swaps entry and exit and mirrors each top-to-bottom (``flip``),
so helmet down: entry = flip(exit_up), exit = flip(entry_up).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

_DATA = json.loads((Path(__file__).with_name("cards.json")).read_text())

SIDE_SHORT: tuple[str, ...] = tuple(_DATA["sides"])  # "HH", "HL", "LH", "LL"
SIDES: tuple[str, ...] = tuple(_DATA["sides"].values())  # "stairs high, corridor high", ...
NUM_SIDES = len(SIDES)
FLIP = tuple(SIDE_SHORT.index(_DATA["flip"][s]) for s in SIDE_SHORT)
ROOM_SIDES = tuple(
    tuple(SIDE_SHORT.index(x) for x in room.split(">"))
    for room in _DATA["rooms_helmet_up_entry_exit"]
)

NUM_ROOMS = len(ROOM_SIDES)
NUM_DRAGONS = int(_DATA["dragons"])
NUM_KNIGHTS = int(_DATA["knights"])
NUM_CARDS = NUM_ROOMS + NUM_DRAGONS + NUM_KNIGHTS
FIRST_DRAGON = NUM_ROOMS
FIRST_KNIGHT = NUM_ROOMS + NUM_DRAGONS

ROOM, DRAGON, KNIGHT = 0, 1, 2
KIND = tuple(
    ROOM if c < FIRST_DRAGON else DRAGON if c < FIRST_KNIGHT else KNIGHT for c in range(NUM_CARDS)
)
KIND_NAMES = ("room", "dragon", "knight")

UP, DOWN = 0, 1
HELMET = ("up", "down")
# ENTRY[o][c] / EXIT[o][c]: the side a Room shows on its left / right when laid helmet o.
ENTRY = (tuple(a for a, _ in ROOM_SIDES), tuple(FLIP[b] for _, b in ROOM_SIDES))
EXIT = (tuple(b for _, b in ROOM_SIDES), tuple(FLIP[a] for a, _ in ROOM_SIDES))

_removed = _DATA["removed_below_4_players"]
REMOVED_BELOW_4 = tuple(
    list(range(FIRST_KNIGHT - _removed["dragons"], FIRST_KNIGHT))
    + list(range(NUM_CARDS - _removed["knights"], NUM_CARDS))
)


def cards_in_play(num_players: int) -> list[int]:
    removed = set(REMOVED_BELOW_4) if num_players < 4 else set()
    return [c for c in range(NUM_CARDS) if c not in removed]


def card_name(card: int) -> str:
    """A short readable name: 'R17[HL>LH]' for a Room (its helmet-up sides), 'Dragon', 'Knight'."""
    kind = KIND[card]
    if kind == ROOM:
        a, b = ROOM_SIDES[card]
        return f"R{card}[{SIDE_SHORT[a]}>{SIDE_SHORT[b]}]"
    return f"{KIND_NAMES[kind].capitalize()}#{card}"


# per-card features for the observation: kind one-hot, helmet-up entry and exit one-hot
CARD_FEATURES = np.zeros((NUM_CARDS, 3 + 2 * NUM_SIDES), dtype=np.float32)
for _c in range(NUM_CARDS):
    CARD_FEATURES[_c, KIND[_c]] = 1.0
    if KIND[_c] == ROOM:
        CARD_FEATURES[_c, 3 + ROOM_SIDES[_c][0]] = 1.0
        CARD_FEATURES[_c, 3 + NUM_SIDES + ROOM_SIDES[_c][1]] = 1.0
CARD_FEATURES.flags.writeable = False
