"""Castellion's flat action layout (137 ids); each decision of the game is one step.

| ids       | move                          | when                                         |
|-----------|-------------------------------|----------------------------------------------|
| 0, 1      | ``Draw(pile)``                | turn start: draw from regular (0) / safe (1) |
| 2 – 5     | ``TakeRevealed(slot)``        | turn start while tiles are revealed          |
| 6         | ``EncounterNow()``            | early ordeal (academy, menace): turn start,  |
|           |                               | or with a tile in hand (``any_time``)        |
| 7 – 13    | ``Place(column)``             | Defender in hand, or Pyro's move destination |
|           |                               | (column 0-5, id 13 = a new column at left)   |
| 14        | ``Discard()``                 | Defender in hand: discard, no power          |
| 15        | ``DiscardPower()``            | Defender in hand: discard and use its power  |
| 16        | ``PlaceTraitor()``            | Traitor in hand: beside the lowest ordeal    |
| 17        | ``DiscardTraitor()``          | Traitor in hand (academy, menace; not black) |
| 18 – 53   | ``Destroy(row, column)``      | a tile to destroy (Traitor cost, Pyro,       |
|           |                               | Assault penalty); id = 18 + 6·row + column  |
| 54 – 113  | ``Swap(r1, c1, r2, c2)``      | Juggler: 30 horizontal then 30 vertical pairs|
| 114, 115  | ``Reveal(pile)``              | Seer: reveal from regular (114) / safe (115) |
| 116 – 127 | ``Recover(kind)``             | Chameleon: Defender kind to take back        |
| 128 – 133 | ``Lift(column)``              | Pyro: the column whose top tile moves        |
| 134 – 136 | ``RevealOrdeal(slot)``        | Menace tower: face-down ordeal to turn up    |

Rows count from the foundation (row 0) up; columns from the castle's left edge. The castle
is kept left-aligned (its leftmost column is column 0), so ``Place(column)`` on an occupied
column puts the tile on top of it, on column = width it starts a new column at the right, and
``Place(-1)`` (id 13) starts a new column at the left and shifts the castle right by one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..core.actions import ActionTable
from .data import KIND_NAMES, NUM_DEFENDER_KINDS

PILE_NAMES = ("regular", "safe")
REGULAR, SAFE = 0, 1


class Draw(NamedTuple):
    pile: int

    def __str__(self) -> str:
        return f"draw from the {PILE_NAMES[self.pile]} pile"


class TakeRevealed(NamedTuple):
    slot: int

    def __str__(self) -> str:
        return f"play revealed tile {self.slot}"


class EncounterNow(NamedTuple):
    def __str__(self) -> str:
        return "encounter the lowest ordeal now"


class Place(NamedTuple):
    column: int

    def __str__(self) -> str:
        return "place at a new left column" if self.column < 0 else f"place on column {self.column}"


class Discard(NamedTuple):
    def __str__(self) -> str:
        return "discard the tile"


class DiscardPower(NamedTuple):
    def __str__(self) -> str:
        return "discard the tile and use its power"


class PlaceTraitor(NamedTuple):
    def __str__(self) -> str:
        return "place the traitor beside the lowest ordeal"


class DiscardTraitor(NamedTuple):
    def __str__(self) -> str:
        return "discard the traitor"


class Destroy(NamedTuple):
    row: int
    column: int

    def __str__(self) -> str:
        return f"destroy row {self.row} column {self.column}"


class Swap(NamedTuple):
    row1: int
    column1: int
    row2: int
    column2: int

    def __str__(self) -> str:
        return f"swap r{self.row1}c{self.column1} with r{self.row2}c{self.column2}"


class Reveal(NamedTuple):
    pile: int

    def __str__(self) -> str:
        return f"reveal from the {PILE_NAMES[self.pile]} pile"


class Recover(NamedTuple):
    kind: int

    def __str__(self) -> str:
        return f"recover {KIND_NAMES[self.kind]}"


class Lift(NamedTuple):
    column: int

    def __str__(self) -> str:
        return f"move the top tile of column {self.column}"


class RevealOrdeal(NamedTuple):
    slot: int

    def __str__(self) -> str:
        return f"reveal ordeal {self.slot + 1}"


SIZE = 6
DRAW = 0
TAKE_REVEALED = 2
ENCOUNTER_NOW = 6
PLACE = 7  # PLACE + c for c in 0..5; PLACE_LEFT for a new left column
PLACE_LEFT = PLACE + SIZE
DISCARD = 14
DISCARD_POWER = 15
PLACE_TRAITOR = 16
DISCARD_TRAITOR = 17
DESTROY = 18
SWAP = DESTROY + SIZE * SIZE  # 54
REVEAL = SWAP + 60  # 114
RECOVER = REVEAL + 2  # 116
LIFT = RECOVER + NUM_DEFENDER_KINDS  # 128
REVEAL_ORDEAL = LIFT + SIZE  # 134
NUM_ACTIONS = REVEAL_ORDEAL + 3  # 137

#: the Juggler's pairs as flat cell indices (row * 6 + column), in action order
SWAP_PAIRS = tuple(
    [(r * SIZE + c, r * SIZE + c + 1) for r in range(SIZE) for c in range(SIZE - 1)]
    + [(r * SIZE + c, (r + 1) * SIZE + c) for r in range(SIZE - 1) for c in range(SIZE)]
)


def _moves() -> list:
    moves: list[Any] = [Draw(0), Draw(1)] + [TakeRevealed(i) for i in range(4)] + [EncounterNow()]
    moves += [Place(c) for c in range(SIZE)] + [Place(-1)]
    moves += [Discard(), DiscardPower(), PlaceTraitor(), DiscardTraitor()]
    moves += [Destroy(r, c) for r in range(SIZE) for c in range(SIZE)]
    moves += [Swap(a // SIZE, a % SIZE, b // SIZE, b % SIZE) for a, b in SWAP_PAIRS]
    moves += [Reveal(0), Reveal(1)]
    moves += [Recover(k) for k in range(NUM_DEFENDER_KINDS)]
    moves += [Lift(c) for c in range(SIZE)]
    moves += [RevealOrdeal(i) for i in range(3)]
    return moves


ACTIONS = ActionTable(_moves())
assert len(ACTIONS) == NUM_ACTIONS
