"""Castle Siege's numbers that the rules, the compiled kernel and the observation share.

They sit in a module of their own so that ``kernel`` (the rules) can use them without
importing ``rules`` or ``observation``, which are views over it.
"""

from __future__ import annotations

import numpy as np

from .actions import HAND_SLOTS
from .cards import NUM_CARDS, RANK

# phases: what the player is deciding now
BATTLE, PRECISION, ROYAL, DISCARD = 0, 1, 2, 3
PHASE_NAMES = ("battle", "precision_strike", "royal_assault", "discard")

NO_CARD = NUM_CARDS  # padding value in hand and column arrays
HAND_CAPACITY = HAND_SLOTS + 1  # room for the (provably never reached) sixth card
EVENTS = (
    "precision_strikes",
    "flush_sieges",
    "flush_draws",
    "royal_assaults",
    "regroups",
    "castles_captured",
    "defenders_defeated",
    "turns",
)

# --- the observation vector (``observation``'s docstring has the table) -----------------------
N_LOCATIONS = 11
UNSEEN, HAND, DEFENDER0, CASTLE_OPEN, CASTLE_TAKEN, DISCARD_PILE, OUT, RECYCLED = (
    0,
    1,
    2,
    6,
    7,
    8,
    9,
    10,
)
LOC_OFF = 0
NEWEST_OFF = LOC_OFF + NUM_CARDS * N_LOCATIONS
DEPTH_OFF = NEWEST_OFF + NUM_CARDS
HAND_OFF = DEPTH_OFF + NUM_CARDS
CASTLE_OFF = HAND_OFF + HAND_CAPACITY * 18
PHASE_OFF = CASTLE_OFF + 4 * 18
DIFF_OFF = PHASE_OFF + 4
SCALAR_OFF = DIFF_OFF + 4
OBS_SIZE = SCALAR_OFF + 18
#: rank / 13 per card id, NO_CARD -> 0
RANK_LOW = np.append(RANK, 0).astype(np.float32) / 13
