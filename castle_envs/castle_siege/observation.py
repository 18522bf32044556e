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

import numpy as np

from .cards import NUM_CARDS, RANK, SUIT
from .rules import HAND_CAPACITY, State

N_LOCATIONS = 11
UNSEEN, HAND, DEFENDER0, CASTLE_OPEN, CASTLE_TAKEN, DISCARD, OUT, RECYCLED = 0, 1, 2, 6, 7, 8, 9, 10
LOC_OFF = 0
NEWEST_OFF = LOC_OFF + NUM_CARDS * N_LOCATIONS
DEPTH_OFF = NEWEST_OFF + NUM_CARDS
HAND_OFF = DEPTH_OFF + NUM_CARDS
CASTLE_OFF = HAND_OFF + HAND_CAPACITY * 18
PHASE_OFF = CASTLE_OFF + 4 * 18
DIFF_OFF = PHASE_OFF + 4
SCALAR_OFF = DIFF_OFF + 4
OBS_SIZE = SCALAR_OFF + 18

# Every one-hot in the vector is written by one scatter of ones; index OBS_SIZE is a
# scratch slot past the end that soaks up NO_CARD padding, so no masking is needed.
SCRATCH = OBS_SIZE
_LOC_BASE = LOC_OFF + np.arange(NUM_CARDS) * N_LOCATIONS
_NEWEST_INDEX = np.append(NEWEST_OFF + np.arange(NUM_CARDS), SCRATCH)
_HAND_INDEX = np.full((HAND_CAPACITY + 1, NUM_CARDS + 1, 3), SCRATCH, dtype=np.intp)
for _slot in range(HAND_CAPACITY):
    _base = HAND_OFF + 18 * _slot
    _HAND_INDEX[_slot, :NUM_CARDS] = np.stack(
        [np.full(NUM_CARDS, _base), _base + RANK, _base + 14 + SUIT], axis=1)
_HAND_SLOTS = np.arange(HAND_CAPACITY + 1)
_CASTLE_RANK_BASE = CASTLE_OFF + np.arange(4) * 18 - 1
_RANK_LOW = np.append(RANK, 0).astype(np.float32) / 13      # NO_CARD counts as rank 0
_COLUMN_CODES = np.repeat(np.arange(DEFENDER0, DEFENDER0 + 4, dtype=np.int8)[:, None],
                          NUM_CARDS, axis=1)
_FOUR = np.arange(4)


def card_locations(state: State) -> np.ndarray:
    """Location code per card id, as the player sees it (the deck's order stays hidden)."""
    # one slot past the last card soaks up the NO_CARD padding of hand and columns
    loc = np.full(NUM_CARDS + 1, UNSEEN, dtype=np.int8)
    loc[:NUM_CARDS][state.recycled] = RECYCLED
    loc[state.hand] = HAND
    loc[state.columns] = _COLUMN_CODES
    loc[state.castles] = CASTLE_OPEN + state.captured
    loc[:NUM_CARDS][state.discard] = DISCARD
    loc[:NUM_CARDS][state.out_of_game] = OUT
    return loc[:NUM_CARDS]


def encode(state: State) -> np.ndarray:
    obs = np.zeros(OBS_SIZE + 1, dtype=np.float32)
    newest = state.columns[_FOUR, state.col_len - 1]   # NO_CARD where a column is empty
    obs[np.concatenate((
        _LOC_BASE + card_locations(state),
        _NEWEST_INDEX[newest],
        _HAND_INDEX[_HAND_SLOTS, state.hand].ravel(),
        _CASTLE_RANK_BASE + RANK[state.castles],
        (PHASE_OFF + state.phase, DIFF_OFF + state.rows - 1)))] = 1
    if state.recycled.any():
        for depth, card in enumerate(state.deck_cards()):
            if state.recycled[card]:
                obs[DEPTH_OFF + card] = (depth + 1) / NUM_CARDS
    castles = obs[CASTLE_OFF:PHASE_OFF].reshape(4, 18)
    castles[:, 13] = state.captured
    castles[:, 14] = state.col_len / 13
    castles[:, 15] = _RANK_LOW[newest]
    castles[:, 16] = np.minimum(_RANK_LOW[state.columns].sum(axis=1) * (13 / 52), 1)
    obs[SCALAR_OFF:SCALAR_OFF + 8] = (
        state.deck_size / NUM_CARDS, np.count_nonzero(state.discard) / NUM_CARDS,
        state.hand_size / HAND_CAPACITY, min(state.turn, 50) / 50, state.regroup_used,
        np.count_nonzero(state.captured) / 4, state.attack == "most_recent",
        state.defeated == "leave_game")
    return obs[:OBS_SIZE]
