"""Castle Siege's observation: a fixed float32 vector of all the player knows, nothing hidden.

Layout (``OBS_SIZE`` = 882 values, all in [0, 1]):

| offset | size    | what                                                                   |
|--------|---------|------------------------------------------------------------------------|
| 0      | 52 × 11 | per card id, one-hot where it is: unseen (in the deck, not recycled),    |
|        |         | hand, defender of castle 0/1/2/3, uncaptured castle, captured castle,    |
|        |         | discard pile, out of the game, recycled to the deck's bottom             |
| 572    | 52      | per card id: 1 if it is the newest defender of its column               |
| 624    | 52      | per recycled card: its depth in the deck from the top, (depth + 1) / 52   |
| 676    | 6 × 18  | hand slot i (sorted by card id): held, rank one-hot (13), suit (4)     |
| 784    | 4 × 18  | castle i: rank one-hot (13), captured, defenders / 13, newest defender's |
|        |         | rank / 13, min(column rank sum / 52, 1), a spare zero                   |
| 856    | 4       | pending decision one-hot: battle, precision strike, royal assault, discard |
| 860    | 4       | difficulty one-hot: easy, medium, hard, very hard                        |
| 864    | 18      | deck size / 52, discard size / 52, hand size / 6, turn / 50,              |
|        |         | regroup used, castles captured / 4, rules options (attack most_recent,   |
|        |         | defeated leave game), 10 spare zeros                                     |

Only the deck's order is hidden; the recycled cards' depths are known to the player because
they put them at the bottom themselves and the deck size is public.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from castle_envs.castle_siege import kernel as K

from .layout import (
    CASTLE_OFF,
    CASTLE_OPEN,
    CASTLE_TAKEN,
    DEFENDER0,
    DEPTH_OFF,
    DIFF_OFF,
    HAND,
    HAND_OFF,
    LOC_OFF,
    N_LOCATIONS,
    NEWEST_OFF,
    OBS_SIZE,
    OUT,
    PHASE_OFF,
    RECYCLED,
    SCALAR_OFF,
    UNSEEN,
)
from .layout import DISCARD_PILE as DISCARD

if TYPE_CHECKING:
    from .rules import State

__all__ = [
    "OBS_SIZE",
    "encode",
    "N_LOCATIONS",
    "UNSEEN",
    "HAND",
    "DEFENDER0",
    "CASTLE_OPEN",
    "CASTLE_TAKEN",
    "DISCARD",
    "OUT",
    "RECYCLED",
    "LOC_OFF",
    "NEWEST_OFF",
    "DEPTH_OFF",
    "HAND_OFF",
    "CASTLE_OFF",
    "PHASE_OFF",
    "DIFF_OFF",
    "SCALAR_OFF",
]


def encode(state: State) -> np.ndarray:
    """The observation of a ``rules.State``, written by the kernel's encoder (the one the
    batched env uses)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    K.encode(
        state.b,
        state.v,
        state.rows,
        state.attack == "most_recent",
        state.defeated == "leave_game",
        obs,
    )
    return obs
