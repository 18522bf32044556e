"""The standard 52-card deck: id = suit * 13 + rank - 1, suits in the rule text's order."""

from __future__ import annotations

import numpy as np

SUITS = "♠♣♥♦"
SUIT_LETTERS = "SCHD"
CASTLE_NAMES = ("Black", "Green", "Red", "Gold")  # the rule text's castle colour per suit
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JACK, QUEEN, KING = 11, 12, 13
NUM_CARDS = 52

RANK = (np.arange(NUM_CARDS) % 13 + 1).astype(np.int16)
SUIT = (np.arange(NUM_CARDS) // 13).astype(np.int16)
RANKS = tuple(int(r) for r in RANK)  # plain-int copies for the hot loops
SUIT_OF = tuple(int(s) for s in SUIT)


def card_id(rank: int, suit: int) -> int:
    if not (1 <= rank <= 13 and 0 <= suit <= 3):
        raise ValueError(f"no card with rank {rank} and suit {suit}")
    return suit * 13 + rank - 1


def card_name(card: int, ascii_only: bool = False) -> str:
    suits = SUIT_LETTERS if ascii_only else SUITS
    return RANK_NAMES[card % 13] + suits[card // 13]


def parse_card(text: str) -> int:
    """'10♥', '10H', 'qs' -> card id."""
    text = text.strip().upper()
    if len(text) < 2:
        raise ValueError(f"not a card: {text!r}")
    rank_text, suit_text = text[:-1], text[-1]
    suit = SUITS.find(suit_text) if suit_text in SUITS else SUIT_LETTERS.find(suit_text)
    if rank_text not in RANK_NAMES or suit < 0:
        raise ValueError(f"not a card: {text!r}")
    return card_id(RANK_NAMES.index(rank_text) + 1, suit)
