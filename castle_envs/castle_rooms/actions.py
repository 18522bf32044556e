"""The action layout: one fixed ``Discrete`` space of readable moves.

Hand slots index the acting player's hand, kept sorted by card id (at most 4 cards: 2 kept
+ 2 drawn). Rows are indexed per player in the order they were started. Opponents are named
relative to the actor (+1 = next seat clockwise), so one policy serves every seat.

========================  =====  ==============================================
move                      count  meaning
========================  =====  ==============================================
PlayRoom(slot, row)       4x12   Room in hand slot onto the right end of own row
NewRow(slot, helmet)      4x2    Room in hand slot starts a new row, helmet up/down
Dragon(opponent, row)     3x12   a Dragon onto the right end of that opponent's row
Knight(row)               12     a Knight frees own blocked row (both cards leave the game)
Discard(slot)             4      throw away an unusable card (the discard rule)
EndTurn()                 1      pass the turn (only with at most 2 cards in hand)
========================  =====  ==============================================
"""

from __future__ import annotations

from typing import NamedTuple

from castle_envs.core import ActionTable

from .data import HELMET

HAND_SLOTS = 4
MAX_ROWS = 12
MAX_OPPONENTS = 3


class PlayRoom(NamedTuple):
    slot: int
    row: int

    def __str__(self) -> str:
        return f"play slot {self.slot} on row {self.row}"


class NewRow(NamedTuple):
    slot: int
    helmet: int

    def __str__(self) -> str:
        return f"new row with slot {self.slot} helmet {HELMET[self.helmet]}"


class Dragon(NamedTuple):
    opponent: int
    row: int

    def __str__(self) -> str:
        return f"dragon on opponent +{self.opponent} row {self.row}"


class Knight(NamedTuple):
    row: int

    def __str__(self) -> str:
        return f"knight on row {self.row}"


class Discard(NamedTuple):
    slot: int

    def __str__(self) -> str:
        return f"discard slot {self.slot}"


class EndTurn(NamedTuple):
    def __str__(self) -> str:
        return "end turn"


MOVES = (
    [PlayRoom(i, r) for i in range(HAND_SLOTS) for r in range(MAX_ROWS)]
    + [NewRow(i, h) for i in range(HAND_SLOTS) for h in range(2)]
    + [Dragon(k, r) for k in range(1, MAX_OPPONENTS + 1) for r in range(MAX_ROWS)]
    + [Knight(r) for r in range(MAX_ROWS)]
    + [Discard(i) for i in range(HAND_SLOTS)]
    + [EndTurn()]
)
ACTIONS = ActionTable(MOVES)
NUM_ACTIONS = len(ACTIONS)

# id arithmetic, so the rules never search the table
PLAY_BASE = 0
NEW_ROW_BASE = PLAY_BASE + HAND_SLOTS * MAX_ROWS
DRAGON_BASE = NEW_ROW_BASE + HAND_SLOTS * 2
KNIGHT_BASE = DRAGON_BASE + MAX_OPPONENTS * MAX_ROWS
DISCARD_BASE = KNIGHT_BASE + MAX_ROWS
END_TURN = DISCARD_BASE + HAND_SLOTS
assert END_TURN == NUM_ACTIONS - 1


def play_id(slot: int, row: int) -> int:
    return PLAY_BASE + slot * MAX_ROWS + row


def new_row_id(slot: int, helmet: int) -> int:
    return NEW_ROW_BASE + slot * 2 + helmet


def dragon_id(opponent: int, row: int) -> int:
    return DRAGON_BASE + (opponent - 1) * MAX_ROWS + row


def knight_id(row: int) -> int:
    return KNIGHT_BASE + row


def discard_id(slot: int) -> int:
    return DISCARD_BASE + slot
