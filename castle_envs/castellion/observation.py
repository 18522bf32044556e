"""Castellion's observation: a fixed float32 vector of all the player sees, nothing hidden.

Layout (``OBS_SIZE`` = 449 values, all in [0, 1]):

| offset | size   | what                                                                     |
|--------|--------|--------------------------------------------------------------------------|
| 0      | 36 × 7 | castle cell (row·6 + column, row 0 = foundation): faction one-hot (seer, |
|        |        | chameleon, juggler, pyro), shape one-hot (triangle, square, circle);     |
|        |        | all zero when empty                                                      |
| 252    | 14     | tile in hand (or lifted by Pyro): kind one-hot (12 Defenders, Traitor,   |
|        |        | black Traitor)                                                           |
| 266    | 4 × 14 | revealed tile slot i: kind one-hot                                       |
| 322    | 14     | regular pile: tiles left per kind / box count (public by counting)       |
| 336    | 12     | safe pile: tiles left per Defender kind                                  |
| 348    | 12     | discard pile: Defenders per kind / 6                                     |
| 360    | 3 × 12 | ordeal slot I, II, III: face down, face up, resolved, Traitors beside /  |
|        |        | its trigger count, requirement (towers, bastions, lines) / 5, rows / 3,  |
|        |        | penalty / 42, is a formations card, an Assault, a row-removal card;      |
|        |        | a face-down card shows only its flag and its Traitors / 2 (every Assault |
|        |        | triggers at 2)                                                           |
| 396    | 11     | pending decision one-hot (``rules.PHASE_NAMES``)                         |
| 407    | 3      | level one-hot (school, academy, menace)                                  |
| 410    | 39     | towers, bastions, lines now / 9; castle size / 36; regular size / 72;    |
|        |        | safe size / 12; tiles still to destroy / 42; tiles still to reveal / 4;  |
|        |        | Chameleon's shape one-hot (3); foundation complete; Pyro's lifted tile's |
|        |        | origin one-hot over the 7 Place columns (0-5, new left); rules option    |
|        |        | foundation_exemption = neighbors; 20 spare zeros                         |
"""

from __future__ import annotations

import numpy as np

from . import kernel as K
from .layout import (
    CELL_OFF,
    DISCARD_OFF,
    HAND_OFF,
    LEVEL_OFF,
    OBS_SIZE,
    ORDEAL_OFF,
    ORDEAL_WIDTH,
    PHASE_OFF,
    REGULAR_OFF,
    REVEALED_OFF,
    SAFE_OFF,
    SCALAR_OFF,
)
from .rules import State

__all__ = [
    "OBS_SIZE",
    "encode",
    "CELL_OFF",
    "HAND_OFF",
    "REVEALED_OFF",
    "REGULAR_OFF",
    "SAFE_OFF",
    "DISCARD_OFF",
    "ORDEAL_OFF",
    "ORDEAL_WIDTH",
    "PHASE_OFF",
    "LEVEL_OFF",
    "SCALAR_OFF",
]


def encode(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of a ``rules.State``, written by the kernel's encoder (the one the
    batched env uses); into ``out`` when given."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32) if out is None else out
    K.encode(state.s, state.level, state.rule_flags, obs)
    return obs
