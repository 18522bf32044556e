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
|        |         | rank / 13, lowest defender rank / 13, min(column rank sum / 52, 1)       |
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
from .rules import HAND_CAPACITY, NO_CARD, State

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

_EYE_LOC = np.eye(N_LOCATIONS, dtype=np.float32)
# per card (NO_CARD row all zero): [held, rank one-hot, suit one-hot]
_CARD_FEATURES = np.zeros((NUM_CARDS + 1, 18), dtype=np.float32)
_CARD_FEATURES[np.arange(NUM_CARDS), 0] = 1
_CARD_FEATURES[np.arange(NUM_CARDS), RANK] = 1          # columns 1..13
_CARD_FEATURES[np.arange(NUM_CARDS), 14 + SUIT] = 1     # columns 14..17
_RANK_F = np.append(RANK, 0).astype(np.float32)


def card_locations(state: State) -> np.ndarray:
    """Location code per card id, as the player sees it (the deck's order stays hidden)."""
    loc = np.full(NUM_CARDS, UNSEEN, dtype=np.int8)
    loc[state.recycled] = RECYCLED
    loc[state.hand[:state.hand_size]] = HAND
    for c in range(4):
        loc[state.columns[c, :state.col_len[c]]] = DEFENDER0 + c
    loc[state.castles] = np.where(state.captured, CASTLE_TAKEN, CASTLE_OPEN)
    loc[state.discard] = DISCARD
    loc[state.out_of_game] = OUT
    return loc


def encode(state: State) -> np.ndarray:
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    obs[LOC_OFF:NEWEST_OFF] = _EYE_LOC[card_locations(state)].ravel()
    has = state.col_len > 0
    newest = state.columns[np.arange(4), state.col_len - 1][has].astype(np.intp)
    obs[NEWEST_OFF + newest] = 1
    if state.recycled.any():
        deck = state.deck_cards()
        for depth, card in enumerate(deck):
            if state.recycled[card]:
                obs[DEPTH_OFF + card] = (depth + 1) / NUM_CARDS
    obs[HAND_OFF:CASTLE_OFF] = _CARD_FEATURES[state.hand[:HAND_CAPACITY]].ravel()
    castles = obs[CASTLE_OFF:PHASE_OFF].reshape(4, 18)
    castles[np.arange(4), RANK[state.castles] - 1] = 1
    castles[:, 13] = state.captured
    castles[:, 14] = state.col_len / 13
    ranks = _RANK_F[state.columns]           # NO_CARD pads rank 0
    castles[has, 15] = ranks[np.arange(4), state.col_len - 1][has] / 13
    castles[has, 16] = np.where(state.columns == NO_CARD, 99, ranks).min(axis=1)[has] / 13
    castles[:, 17] = np.minimum(ranks.sum(axis=1) / 52, 1)
    obs[PHASE_OFF + state.phase] = 1
    obs[DIFF_OFF + state.rows - 1] = 1
    obs[SCALAR_OFF:SCALAR_OFF + 8] = (
        state.deck_size / NUM_CARDS, state.discard.sum() / NUM_CARDS,
        state.hand_size / HAND_CAPACITY, min(state.turn, 50) / 50, state.regroup_used,
        state.captured.sum() / 4, state.attack == "most_recent", state.defeated == "leave_game")
    return obs
