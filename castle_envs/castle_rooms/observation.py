"""The observation one seat sees: a flat float32 vector (layout below, all in [0, 1]).

Seats are relative: block 0 is the observer, block k the player k seats clockwise; blocks of
absent players (2-3 player games) are zero. Nothing hidden leaks: opponents' hands appear only
as counts and the deck only as its size.

=================  ======================  ============================================
part               size                    content
=================  ======================  ============================================
hand               4 x 11                  per hand slot: kind one-hot (room, dragon,
                                           knight), helmet-up entry side one-hot (4),
                                           helmet-up exit side one-hot (4); zero if empty
rows               4 seats x 12 rows x 18  exists, helmet down, blocked by a Dragon,
                                           rooms/10, exit side one-hot (4), then the 10
                                           card slots as (card id + 1)/64 (0 = empty)
hand sizes         4                       cards in each seat's hand / 4
deck               1                       cards left in the deck / 64
discard pile       64                      1 for each card id in the discard pile
player count       3                       one-hot 2, 3, 4
=================  ======================  ============================================
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import actions as A
from .data import CARD_FEATURES, NUM_CARDS, NUM_SIDES
from .rules import WIN_LENGTH, CastleRoomsState

SEATS = 4
HAND_FEATURES = CARD_FEATURES.shape[1]
ROW_FEATURES = 4 + NUM_SIDES + WIN_LENGTH
HAND_SIZE = A.HAND_SLOTS * HAND_FEATURES
ROWS_START = HAND_SIZE
ROWS_SIZE = SEATS * A.MAX_ROWS * ROW_FEATURES
COUNTS_START = ROWS_START + ROWS_SIZE
DECK_AT = COUNTS_START + SEATS
DISCARD_START = DECK_AT + 1
PLAYERS_START = DISCARD_START + NUM_CARDS
OBS_SIZE = PLAYERS_START + 3

_CARD_CODE = (np.arange(NUM_CARDS, dtype=np.float32) + 1) / NUM_CARDS


ROW_BLOCK = A.MAX_ROWS * ROW_FEATURES


def _row_block(rows: Sequence) -> np.ndarray:
    block = np.zeros((A.MAX_ROWS, ROW_FEATURES), dtype=np.float32)
    for r, row in enumerate(rows):
        block[r, :4] = (1.0, row.helmet, row.dragon >= 0, len(row.cards) / WIN_LENGTH)
        block[r, 4 + row.exit] = 1.0
        block[r, 4 + NUM_SIDES : 4 + NUM_SIDES + len(row.cards)] = _CARD_CODE[row.cards]
    return block.ravel()


def encode(state: CastleRoomsState, seat: int) -> np.ndarray:
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    hand = state.hands[seat]
    if hand:
        obs[: len(hand) * HAND_FEATURES] = CARD_FEATURES[hand].ravel()
    n = state.num_players
    blocks = state.row_blocks  # cached per seat until that seat's rows change
    for k in range(n):
        s = (seat + k) % n
        block = blocks[s]
        if block is None:
            block = blocks[s] = _row_block(state.rows[s])
        at = ROWS_START + k * ROW_BLOCK
        obs[at : at + ROW_BLOCK] = block
        obs[COUNTS_START + k] = len(state.hands[s]) / A.HAND_SLOTS
    obs[DECK_AT] = len(state.deck) / NUM_CARDS
    if state.discard:
        obs[DISCARD_START + np.asarray(state.discard)] = 1.0
    obs[PLAYERS_START + n - 2] = 1.0
    return obs
