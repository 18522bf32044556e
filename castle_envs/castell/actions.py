"""Castell's flat action layout (395 ids), one ``Discrete`` space for every step.

| ids       | move                                                                  |
|-----------|-----------------------------------------------------------------------|
| 0 – 6     | ``Move(region)``: the Move action (first move: any region)             |
| 7 – 16    | ``Recruit(size)``: one casteller of that number from the pawn's region; |
|           | the Recruit action takes one or two of these steps in a row            |
| 17 – 21   | ``Train(skill)``: Balance, Base, Mix, Strength, Width                  |
| 22 – 40   | ``Special("token", ...)``: spend a special-action token to recruit one  |
|           | (size 1-10), move (region 0-6) or perform local performance slot 0/1   |
| 41 – 59   | ``Special("wheel", ...)``: the same, as the Train action on a wheel    |
|           | slot showing the special action (no token)                              |
| 60 – 391  | ``AddLevel(width, size, mixed)``: put a level on the tower:            |
|           | ``width - mixed`` castellers numbered ``size`` and ``mixed`` numbered   |
|           | ``size + 1`` (Mix); widths 1-8                                         |
| 392       | ``Dismantle(False)``: take the top level off the tower                  |
| 393       | ``Dismantle(True)``: take the whole tower apart                         |
| 394       | ``EndTurn()``                                                         |

Sizes in moves are the casteller numbers 1-10. Tower edits (add / dismantle) are free steps,
not one of the four actions, limited per turn by the ``tower_edits_per_turn`` option.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.actions import ActionTable
from .data import LP_PER_ROW, NUM_REGIONS, REGIONS, SIZES, SKILLS

MAX_LEVEL_WIDTH = 8  # an action-space bound (Base levels are otherwise unlimited)

SPECIAL_KINDS = ("recruit", "move", "perform")
SPECIAL_SOURCES = ("token", "wheel")


class Move(NamedTuple):
    region: int

    def __str__(self) -> str:
        return f"move to {REGIONS[self.region]}"


class Recruit(NamedTuple):
    size: int

    def __str__(self) -> str:
        return f"recruit a {self.size}"


class Train(NamedTuple):
    skill: int

    def __str__(self) -> str:
        return f"train {SKILLS[self.skill]}"


class Special(NamedTuple):
    source: str  # "token" or "wheel"
    kind: str  # "recruit", "move", "perform"
    arg: int  # size 1-10, region 0-6, or local performance slot 0-1

    def __str__(self) -> str:
        what = {
            "recruit": lambda a: f"recruit a {a}",
            "move": lambda a: f"move to {REGIONS[a]}",
            "perform": lambda a: f"perform local performance slot {a}",
        }[self.kind](self.arg)
        return f"special ({self.source}): {what}"


class AddLevel(NamedTuple):
    width: int
    size: int
    mixed: int  # how many of the level are numbered size + 1 (0: a plain level)

    def __str__(self) -> str:
        text = f"add level {self.width - self.mixed}x{self.size}"
        return text + (f" + {self.mixed}x{self.size + 1}" if self.mixed else "")


class Dismantle(NamedTuple):
    whole: bool

    def __str__(self) -> str:
        return "dismantle the tower" if self.whole else "dismantle the top level"


class EndTurn(NamedTuple):
    def __str__(self) -> str:
        return "end turn"


def _all_moves() -> list:
    moves: list[Any] = [Move(r) for r in range(NUM_REGIONS)]
    moves += [Recruit(s) for s in range(1, SIZES + 1)]
    moves += [Train(k) for k in range(len(SKILLS))]
    for source in SPECIAL_SOURCES:
        moves += [Special(source, "recruit", s) for s in range(1, SIZES + 1)]
        moves += [Special(source, "move", r) for r in range(NUM_REGIONS)]
        moves += [Special(source, "perform", j) for j in range(LP_PER_ROW)]
    for width in range(1, MAX_LEVEL_WIDTH + 1):
        for size in range(1, SIZES + 1):
            for mixed in range(0, width if size < SIZES else 1):
                moves.append(AddLevel(width, size, mixed))
    moves += [Dismantle(False), Dismantle(True), EndTurn()]
    return moves


ACTIONS = ActionTable(_all_moves())
NUM_ACTIONS = len(ACTIONS)

MOVE0 = 0
RECRUIT0 = MOVE0 + NUM_REGIONS
TRAIN0 = RECRUIT0 + SIZES
SPECIAL_BLOCK = SIZES + NUM_REGIONS + LP_PER_ROW  # 19 ids per source
TOKEN0 = TRAIN0 + len(SKILLS)
WHEEL0 = TOKEN0 + SPECIAL_BLOCK
SP_RECRUIT, SP_MOVE, SP_PERFORM = 0, SIZES, SIZES + NUM_REGIONS  # offsets in a block
LEVEL0 = WHEEL0 + SPECIAL_BLOCK
DISMANTLE_TOP = NUM_ACTIONS - 3
DISMANTLE_ALL = NUM_ACTIONS - 2
END_TURN = NUM_ACTIONS - 1
NUM_LEVELS = DISMANTLE_TOP - LEVEL0

# Per level action: width, lower size index (0-9), upper size index, and how many of each
# are needed; the mask is computed from these arrays in a few vector operations.
_levels = ACTIONS.moves[LEVEL0:DISMANTLE_TOP]
LEVEL_WIDTH = np.array([m.width for m in _levels], dtype=np.int64)
LEVEL_LO = np.array([m.size - 1 for m in _levels], dtype=np.int64)
LEVEL_HI = np.array([m.size - 1 + (m.mixed > 0) for m in _levels], dtype=np.int64)
LEVEL_NEED_LO = np.array([m.width - m.mixed for m in _levels], dtype=np.int64)
LEVEL_NEED_HI = np.array([m.mixed for m in _levels], dtype=np.int64)
LEVEL_MIXED = np.array([m.mixed > 0 for m in _levels], dtype=bool)
LEVEL_TUPLES = tuple((m.width, m.size - 1, m.mixed) for m in _levels)
LEVEL_ID = {t: LEVEL0 + i for i, t in enumerate(LEVEL_TUPLES)}
assert NUM_ACTIONS == 395 and LEVEL0 == 60 and END_TURN == 394


def decode_action(action: Any) -> Any:
    return ACTIONS.decode(action)


def encode_action(move: Any) -> int:
    return ACTIONS.encode(move)
