"""Castle Rooms' move view: one row of features per legal move, from the actor's seat.

What each move spends (the card), what it targets (one of the actor's rows, or an
opponent's row for a Dragon) and what it triggers (the row's new length and exit, how many
Rooms could still continue that exit, the standing of every player's rows after the move).
Counts of "unseen" cards are what the actor can work out: every card in play that is not in
its hand, on the table or in the discard pile (the deck and the opponents' hands together),
so a row depends only on what the acting player sees. The layout is ``FEATURES`` (names),
documented in ``docs/move_features.md``; pure Python (the game has no compiled kernel).
The default capacity is the whole action space: 109 rows.
"""

from __future__ import annotations

import numpy as np

from ..core.moves import StateMoves, feature_columns
from . import actions as A
from .data import (
    DRAGON,
    ENTRY,
    EXIT,
    FIRST_DRAGON,
    KIND,
    KNIGHT,
    NUM_CARDS,
    NUM_SIDES,
    ROOM,
    SIDE_SHORT,
    cards_in_play,
)
from .rules import HAND_LIMIT, WIN_LENGTH, CastleRoomsState, Row

FEATURES = (
    # the move's kind
    "play_room",
    "new_row",
    "dragon",
    "knight",
    "discard",
    "end_turn",
    # the card it spends
    "card_room",
    "card_dragon",
    "card_knight",
    # a Room as laid (its row's helmet): entry and exit sides
    *[f"laid_entry_{s}" for s in SIDE_SHORT],
    *[f"laid_exit_{s}" for s in SIDE_SHORT],
    "laid_helmet_down",
    # the target row: the actor's (Room, Knight) or an opponent's (Dragon, seats clockwise)
    "target_own",
    *[f"target_opponent_{k}" for k in range(1, A.MAX_OPPONENTS + 1)],
    "target_length/10",
    "target_is_longest",
    "target_blocked",
    "target_fits_unseen/26",
    # what it triggers
    "length_after/10",
    "wins_now",
    "exit_fits_unseen_after/26",
    "exit_fits_hand_after/3",
    "dead_end_after",
    "rows_after/12",
    # the actor's rows and hand after the move
    "my_longest/10",
    "my_second/10",
    "my_longest_open/10",
    "my_open_rows/12",
    "hand_after/4",
    "hand_rooms_fitting/4",
    "hand_dragons/4",
    "hand_knights/4",
    "may_end_turn",
    # the strongest opponent after the move (deck-out order: longest row, then the next...)
    "opp_longest/10",
    "opp_second/10",
    "opp_longest_open/10",
    "opp_open_rows/12",
    "ahead",
    "tied",
    "behind",
    # the public count of what is left
    "deck/64",
    "deck_empty",
    "unseen_dragons/6",
    "unseen_knights/4",
    "opp_hand/4",
)
NUM_FEATURES = len(FEATURES)
COLUMN = feature_columns(FEATURES)
CAPACITY = A.NUM_ACTIONS

_KIND_COL = {
    0: COLUMN["play_room"],
    1: COLUMN["new_row"],
    2: COLUMN["dragon"],
    3: COLUMN["knight"],
    4: COLUMN["discard"],
    5: COLUMN["end_turn"],
}
_CARD_COL = {
    ROOM: COLUMN["card_room"],
    DRAGON: COLUMN["card_dragon"],
    KNIGHT: COLUMN["card_knight"],
}
# the most Rooms that fit one row end (26 of the 54: see RULES.md's connectors)
_FIT_SCALE = 26.0
_ROOM_IDS = np.arange(FIRST_DRAGON)
# FITS[h][e]: the Rooms that continue a row laid helmet h whose exit is side e
FITS = tuple(
    tuple(
        np.array([c for c in range(FIRST_DRAGON) if ENTRY[h][c] == e], np.int64)
        for e in range(NUM_SIDES)
    )
    for h in range(2)
)
assert max(len(f) for fs in FITS for f in fs) <= _FIT_SCALE


def unseen_cards(state: CastleRoomsState, seat: int) -> np.ndarray:
    """Bool per card id: in play but not seen by ``seat`` (the deck and the other hands)."""
    unseen = np.zeros(NUM_CARDS, bool)
    unseen[cards_in_play(state.num_players)] = True
    unseen[state.hands[seat]] = False
    for rows in state.rows:
        for row in rows:
            unseen[row.cards] = False
            if row.dragon >= 0:
                unseen[row.dragon] = False
    unseen[state.discard] = False
    return unseen


def _standing(lengths: list[int]) -> tuple[int, ...]:
    return tuple(sorted(lengths, reverse=True)) + (0,) * (A.MAX_ROWS - len(lengths))


def move_rows(state: CastleRoomsState, actions: np.ndarray) -> np.ndarray:
    """(len(actions), NUM_FEATURES) float32: the rows of these legal moves of the player
    to act."""
    me, n = state.player, state.num_players
    hand = state.hands[me]
    unseen = unseen_cards(state, me)
    unseen_rooms = unseen[:FIRST_DRAGON]
    fit_unseen = [[int(unseen_rooms[FITS[h][e]].sum()) for e in range(NUM_SIDES)] for h in range(2)]
    lengths = [[len(r.cards) for r in state.rows[s]] for s in range(n)]
    open_ = [[r.dragon < 0 for r in state.rows[s]] for s in range(n)]
    hand_kinds = [KIND[c] for c in hand]
    deck = len(state.deck)
    common = np.zeros(NUM_FEATURES, np.float32)
    common[COLUMN["deck/64"]] = deck / NUM_CARDS
    common[COLUMN["deck_empty"]] = deck == 0
    common[COLUMN["unseen_dragons/6"]] = unseen[FIRST_DRAGON : FIRST_DRAGON + 6].sum() / 6
    common[COLUMN["unseen_knights/4"]] = unseen[FIRST_DRAGON + 6 :].sum() / 4
    common[COLUMN["opp_hand/4"]] = max(len(state.hands[(me + k) % n]) for k in range(1, n)) / 4
    out = np.tile(common, (len(actions), 1))
    for i, action in enumerate(actions):
        _fill(out[i], int(action), state, me, n, hand, hand_kinds, lengths, open_, fit_unseen)
    return out


def _fill(
    row: np.ndarray,
    action: int,
    state: CastleRoomsState,
    me: int,
    n: int,
    hand: list[int],
    hand_kinds: list[int],
    lengths: list[list[int]],
    open_: list[list[bool]],
    fit_unseen: list[list[int]],
) -> None:
    c = COLUMN
    my_len, my_open = list(lengths[me]), list(open_[me])
    opp_len = {k: list(lengths[(me + k) % n]) for k in range(1, n)}
    opp_open = {k: list(open_[(me + k) % n]) for k in range(1, n)}
    rows = state.rows[me]
    spent = None
    exit_after = None  # (helmet, side) of the row end the move leaves, for play/new row
    if action < A.NEW_ROW_BASE:
        kind = 0
        spent, r = divmod(action - A.PLAY_BASE, A.MAX_ROWS)
        row_ = rows[r]
        card, helmet = hand[spent], row_.helmet
        _laid(row, card, helmet)
        _target(row, c["target_own"], my_len, my_open, r, row_, fit_unseen)
        my_len[r] += 1
        exit_after = (helmet, EXIT[helmet][card])
        row[c["length_after/10"]] = my_len[r] / WIN_LENGTH
        row[c["wins_now"]] = my_len[r] >= WIN_LENGTH
    elif action < A.DRAGON_BASE:
        kind = 1
        spent, helmet = divmod(action - A.NEW_ROW_BASE, 2)
        card = hand[spent]
        _laid(row, card, helmet)
        my_len.append(1)
        my_open.append(True)
        exit_after = (helmet, EXIT[helmet][card])
        row[c["length_after/10"]] = 1 / WIN_LENGTH
    elif action < A.KNIGHT_BASE:
        kind = 2
        k, r = divmod(action - A.DRAGON_BASE, A.MAX_ROWS)
        k += 1
        spent = hand_kinds.index(DRAGON)
        row_ = state.rows[(me + k) % n][r]
        _target(row, c[f"target_opponent_{k}"], opp_len[k], opp_open[k], r, row_, fit_unseen)
        opp_open[k][r] = False
        row[c["length_after/10"]] = opp_len[k][r] / WIN_LENGTH
    elif action < A.DISCARD_BASE:
        kind = 3
        r = action - A.KNIGHT_BASE
        spent = hand_kinds.index(KNIGHT)
        row_ = rows[r]
        _target(row, c["target_own"], my_len, my_open, r, row_, fit_unseen)
        my_open[r] = True
        row[c["length_after/10"]] = my_len[r] / WIN_LENGTH
        exit_after = (row_.helmet, row_.exit)
    elif action < A.END_TURN:
        kind = 4
        spent = action - A.DISCARD_BASE
    else:
        kind = 5
    row[_KIND_COL[kind]] = 1
    if spent is not None:
        row[_CARD_COL[hand_kinds[spent]]] = 1
    left = [x for j, x in enumerate(hand) if j != spent]
    # the rows the actor could still extend, as (helmet, exit) ends, after the move
    ends = [(rw.helmet, rw.exit) for j, rw in enumerate(rows) if my_open[j]]
    if kind == 1:
        ends.append(exit_after)  # type: ignore[arg-type]  # a play sets it
    elif kind == 0:
        r = (action - A.PLAY_BASE) % A.MAX_ROWS
        ends = [(rw.helmet, rw.exit) for j, rw in enumerate(rows) if my_open[j] and j != r]
        ends.append(exit_after)  # type: ignore[arg-type]
    if exit_after is not None:
        h, e = exit_after
        in_hand = sum(1 for x in left if KIND[x] == ROOM and ENTRY[h][x] == e)
        row[c["exit_fits_unseen_after/26"]] = fit_unseen[h][e] / _FIT_SCALE
        row[c["exit_fits_hand_after/3"]] = min(in_hand, 3) / 3
        row[c["dead_end_after"]] = fit_unseen[h][e] + in_hand == 0
    _fill_standing(row, my_len, my_open, opp_len, opp_open, left, ends)


def _fill_standing(
    row: np.ndarray,
    my_len: list[int],
    my_open: list[bool],
    opp_len: dict[int, list[int]],
    opp_open: dict[int, list[bool]],
    left: list[int],
    ends: list[tuple[int, int]],
) -> None:
    """The rows and hand after the move, the actor's and the leading opponent's."""
    c = COLUMN
    row[c["rows_after/12"]] = len(my_len) / A.MAX_ROWS
    mine = _standing(my_len)
    row[c["my_longest/10"]] = mine[0] / WIN_LENGTH
    row[c["my_second/10"]] = mine[1] / WIN_LENGTH
    row[c["my_longest_open/10"]] = (
        max((x for x, o in zip(my_len, my_open) if o), default=0) / WIN_LENGTH
    )
    row[c["my_open_rows/12"]] = sum(my_open) / A.MAX_ROWS
    row[c["hand_after/4"]] = len(left) / A.HAND_SLOTS
    row[c["hand_rooms_fitting/4"]] = (
        sum(1 for x in left if KIND[x] == ROOM and any(ENTRY[h][x] == e for h, e in ends)) / 4
    )
    row[c["hand_dragons/4"]] = sum(1 for x in left if KIND[x] == DRAGON) / 4
    row[c["hand_knights/4"]] = sum(1 for x in left if KIND[x] == KNIGHT) / 4
    row[c["may_end_turn"]] = len(left) <= HAND_LIMIT
    best = max(opp_len, key=lambda k: _standing(opp_len[k]))
    theirs = _standing(opp_len[best])
    row[c["opp_longest/10"]] = theirs[0] / WIN_LENGTH
    row[c["opp_second/10"]] = theirs[1] / WIN_LENGTH
    row[c["opp_longest_open/10"]] = (
        max((x for x, o in zip(opp_len[best], opp_open[best]) if o), default=0) / WIN_LENGTH
    )
    row[c["opp_open_rows/12"]] = sum(opp_open[best]) / A.MAX_ROWS
    row[c["ahead"] if mine > theirs else c["tied"] if mine == theirs else c["behind"]] = 1


def _laid(row: np.ndarray, card: int, helmet: int) -> None:
    row[COLUMN["laid_entry_HH"] + ENTRY[helmet][card]] = 1
    row[COLUMN["laid_exit_HH"] + EXIT[helmet][card]] = 1
    row[COLUMN["laid_helmet_down"]] = helmet


def _target(
    row: np.ndarray,
    owner_col: int,
    lengths: list[int],
    opens: list[bool],
    r: int,
    target: Row,
    fit_unseen: list[list[int]],
) -> None:
    row[owner_col] = 1
    row[COLUMN["target_length/10"]] = lengths[r] / WIN_LENGTH
    row[COLUMN["target_is_longest"]] = lengths[r] == max(lengths)
    row[COLUMN["target_blocked"]] = not opens[r]
    row[COLUMN["target_fits_unseen/26"]] = fit_unseen[target.helmet][target.exit] / _FIT_SCALE


class RoomsMoves(StateMoves, game="castle-rooms", features=FEATURES, capacity=CAPACITY):
    """Castle Rooms move views of a rules state (the player to act's)."""

    rows = staticmethod(move_rows)

    def observation(self, state: CastleRoomsState) -> np.ndarray:
        from .observation import encode

        return encode(state, state.player)
