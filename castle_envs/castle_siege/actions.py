"""Castle Siege's flat action layout (1676 ids).

| ids         | move                                                              |
|-------------|-------------------------------------------------------------------|
| 0 – 1611    | ``Play(slots, target)``: play the hand cards in ``slots`` (a       |
|             | non-empty subset of the 5 hand slots, id = (bitmask − 1)·52 +      |
|             | target) at the card ``target``: an attack if it is a defender, a   |
|             | capture if it is an uncaptured castle card                        |
| 1612 – 1663 | ``Recycle(card)``: Precision Strike's choice of discard-pile card  |
| 1664 – 1667 | ``RoyalCapture(castle)``: Royal Assault's choice of castle 0–3      |
| 1668        | ``Regroup()``                                                      |
| 1669        | ``EndBattle()``: end the battle phase                               |
| 1670 – 1675 | ``Discard(slot)``: end-of-turn discard of hand slot 0–5             |

Hand slots index the hand sorted by card id (slot 0 = lowest id), so a position has one
canonical layout. Targets are card ids, so a move names the defender it attacks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ..core.actions import ActionTable
from .cards import NUM_CARDS, card_name

HAND_SLOTS = 5
NUM_SUBSETS = 2**HAND_SLOTS - 1  # 31 non-empty subsets of the hand
PLAY_BASE = 0
RECYCLE_BASE = PLAY_BASE + NUM_SUBSETS * NUM_CARDS  # 1612
ROYAL_BASE = RECYCLE_BASE + NUM_CARDS  # 1664
REGROUP = ROYAL_BASE + 4  # 1668
END_BATTLE = REGROUP + 1  # 1669
DISCARD_BASE = END_BATTLE + 1  # 1670
DISCARD_SLOTS = 6
NUM_ACTIONS = DISCARD_BASE + DISCARD_SLOTS  # 1676


def slots_of(bitmask: int) -> tuple[int, ...]:
    return tuple(i for i in range(HAND_SLOTS) if bitmask >> i & 1)


class Play(NamedTuple):
    slots: tuple
    target: int

    def __str__(self) -> str:
        return f"play slots {'+'.join(map(str, self.slots))} at {card_name(self.target)}"


class Recycle(NamedTuple):
    card: int

    def __str__(self) -> str:
        return f"recycle {card_name(self.card)} to the bottom of the deck"


class RoyalCapture(NamedTuple):
    castle: int

    def __str__(self) -> str:
        return f"royal assault captures castle {self.castle}"


class Regroup(NamedTuple):
    def __str__(self) -> str:
        return "regroup"


class EndBattle(NamedTuple):
    def __str__(self) -> str:
        return "end battle phase"


class Discard(NamedTuple):
    slot: int

    def __str__(self) -> str:
        return f"discard slot {self.slot}"


def _all_moves() -> list:
    moves: list[Any] = [
        Play(slots_of(mask), target)
        for mask in range(1, NUM_SUBSETS + 1)
        for target in range(NUM_CARDS)
    ]
    moves += [Recycle(c) for c in range(NUM_CARDS)]
    moves += [RoyalCapture(i) for i in range(4)]
    moves += [Regroup(), EndBattle()]
    moves += [Discard(i) for i in range(DISCARD_SLOTS)]
    assert len(moves) == NUM_ACTIONS
    return moves


ACTIONS = ActionTable(_all_moves())


def play_action(slots: Iterable[int], target: int) -> int:
    bitmask = sum(1 << s for s in set(slots))
    if not 1 <= bitmask <= NUM_SUBSETS or len(set(slots)) != len(tuple(slots)):
        raise ValueError(f"slots must be distinct hand slots 0-{HAND_SLOTS - 1}, got {slots}")
    return PLAY_BASE + (bitmask - 1) * NUM_CARDS + int(target)


def decode_action(action: Any) -> Any:
    return ACTIONS.decode(action)


def encode_action(move: Any) -> int:
    return ACTIONS.encode(move)
