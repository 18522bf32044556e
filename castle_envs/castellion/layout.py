"""Castellion's numbers that the rules, the compiled kernel and the observation share.

They sit in a module of their own so that ``kernel`` (the rules) can use them without
importing ``rules`` or ``observation``, which are views over it. The castle's group
functions are here too, in the subset of Python that numba compiles: the kernel compiles
these very functions and ``rules`` exports them for plain-Python callers.
"""

from __future__ import annotations

import numpy as np

from .actions import SIZE
from .data import NUM_DEFENDER_KINDS, NUM_KINDS, REGULAR_COUNTS

# phases: what the player is deciding now
(
    DRAW_PHASE,
    DEFENDER_PHASE,
    TRAITOR_PHASE,
    DESTROY_PHASE,
    JUGGLE_PHASE,
    REVEAL_PHASE,
    RECOVER_PHASE,
    LIFT_PHASE,
    MOVE_PHASE,
    REVEAL_ORDEAL_PHASE,
    OVER,
) = range(11)
PHASE_NAMES = (
    "draw",
    "defender",
    "traitor",
    "destroy",
    "juggle",
    "reveal",
    "recover",
    "pyro_lift",
    "pyro_move",
    "reveal_ordeal",
    "over",
)
NUM_PHASES = len(PHASE_NAMES)
# why tiles are being destroyed: what follows the last one
TRAITOR_COST, PYRO_DESTROY, PENALTY = 1, 2, 3
DESTROY_REASONS = ("none", "traitor", "pyro", "penalty")
MAX_REVEALED = 4
CELLS = SIZE * SIZE
NO_TILE = -1

# bitboards: bit r*6+c; shifting by 1 must not wrap from one row into the next
FULL = (1 << CELLS) - 1
COL0 = sum(1 << (r * SIZE) for r in range(SIZE))
NOT_COL0 = FULL & ~COL0
NOT_COL5 = FULL & ~(COL0 << (SIZE - 1))
LINE = 0b1111
TOWER = 1 | 1 << SIZE | 1 << 2 * SIZE | 1 << 3 * SIZE
BASTION = 1 | 2 | 1 << SIZE | 1 << (SIZE + 1)


def component(board: int, seed: int) -> int:
    """The orthogonally connected part of ``board`` holding bit ``seed``."""
    comp = seed
    while True:
        grown = (
            comp
            | ((comp << 1) & NOT_COL0)
            | ((comp >> 1) & NOT_COL5)
            | (comp << SIZE)
            | (comp >> SIZE)
        ) & board
        if grown == comp:
            return comp
        comp = grown


def four_tile_shape(comp: int) -> int:
    """``shape_of_group`` of a group known to hold four tiles: 0 tower, 1 bastion, 2 line of
    defense, -1 none."""
    low = comp & -comp
    if comp == low * TOWER:
        return 0
    if comp == low * BASTION:
        return 1
    if comp == low * LINE:
        return 2
    return -1


# --- the observation vector (``observation``'s docstring has the table) -----------------------
CELL_OFF = 0
HAND_OFF = CELL_OFF + SIZE * SIZE * 7
REVEALED_OFF = HAND_OFF + NUM_KINDS
REGULAR_OFF = REVEALED_OFF + 4 * NUM_KINDS
SAFE_OFF = REGULAR_OFF + NUM_KINDS
DISCARD_OFF = SAFE_OFF + NUM_DEFENDER_KINDS
ORDEAL_OFF = DISCARD_OFF + NUM_DEFENDER_KINDS
ORDEAL_WIDTH = 12
PHASE_OFF = ORDEAL_OFF + 3 * ORDEAL_WIDTH
LEVEL_OFF = PHASE_OFF + NUM_PHASES
SCALAR_OFF = LEVEL_OFF + 3
OBS_SIZE = SCALAR_OFF + 39

#: 1 / box count per kind of the regular pile (its tiles left per kind are scaled by it)
REGULAR_SCALE = np.array([1.0 / max(c, 1) for c in REGULAR_COUNTS], dtype=np.float32)
#: row kind + 1 of this table is a cell's 7 values (row 0: the empty cell)
CELL_TABLE = np.zeros((NUM_DEFENDER_KINDS + 1, 7), dtype=np.float32)
for _k in range(NUM_DEFENDER_KINDS):
    CELL_TABLE[_k + 1, _k // 3] = CELL_TABLE[_k + 1, 4 + _k % 3] = 1.0
