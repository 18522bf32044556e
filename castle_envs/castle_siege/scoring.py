"""The linear move terms of Castle Siege and their weighted choice, compiled.

``policy_action(b, v, recent, weights, ...)`` plays, on the kernel rows of ``castle_siege.kernel``,
the move a linear scorer with ``weights`` plays on the same position (the lab's linear
agent is this scorer with learned weights): the same features in the same order
(``BATTLE_FEATURES``, ``RECYCLE_FEATURES``, ``ROYAL_FEATURES``), the same candidates in the
same order (legal plays by action id, then Regroup or end battle phase), the first best
score. Scores are summed feature by feature, so a tie that NumPy's matrix product breaks by
rounding may go the other way here; ``tests/vector/test_siege_solver.py`` measures the
agreement. ``weights`` holds the battle, recycle and royal blocks, in that order.

Solvers' probes and search rollouts use it: a compiled move is about a microsecond where a
NumPy scorer takes about a hundred. The move view's kernel (``moves``) reads a position through the same tables (``battle_setup``,
``battle_kind``, ``recycle_terms``), so that its linear columns are this scorer's features.
"""

from __future__ import annotations

import numpy as np

from castle_envs.castle_siege.actions import (
    DISCARD_BASE,
    END_BATTLE,
    RECYCLE_BASE,
    REGROUP,
    ROYAL_BASE,
)
from castle_envs.castle_siege.cards import NUM_CARDS, RANK, SUIT
from castle_envs.castle_siege.kernel import (
    CAPTURED,
    CASTLES,
    CLEN,
    COLS,
    DISCARDED,
    DSIZE,
    HAND,
    HSIZE,
    PHASE,
    REGROUPED,
)
from castle_envs.castle_siege.rules import DISCARD, PRECISION, ROYAL
from castle_envs.core.jit import njit

N_BATTLE, N_RECYCLE, N_ROYAL = 18, 9, 3
HAND_SLOTS = 5
_RANK = RANK.astype(np.int64)
_SUIT = SUIT.astype(np.int64)
# the heuristic's Royal Assault weights (defenders, their ranks, castle rank): which castle
# a Royal Assault would sweep, for the ``royal_own_column`` feature
_H_ROYAL = np.array([100.0, 1.0, 0.01])


@njit(cache=True)
def subset_tables(
    b: np.ndarray,
    v: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    flush: np.ndarray,
    royal: np.ndarray,
) -> int:
    """Per subset (bitmask) of the held hand slots: rank sum, size, all one suit (two or
    more cards), holds J, Q, K of three suits. Returns the number of slots held. ``sums``
    and ``sizes`` hold 64 entries: the upper halves are scratch."""
    held = min(v[HSIZE], HAND_SLOTS)
    sums[0] = 0
    sizes[0] = 0
    suit_bits = sums[32:64]  # scratch: per subset the suits it holds, as 4 bits
    suit_bits[0] = 0
    for i in range(held):
        card = b[HAND + i]
        rank = _RANK[card]
        bit = 1 << _SUIT[card]
        for bits in range(1 << i):
            sums[bits | 1 << i] = sums[bits] + rank
            sizes[bits | 1 << i] = sizes[bits] + 1
            suit_bits[bits | 1 << i] = suit_bits[bits] | bit
    # the J, Q, K triples of three suits in the hand, as slot bitmasks
    triples = sizes[32:40]  # scratch
    nt = 0
    for i in range(held):
        if _RANK[b[HAND + i]] != 11:
            continue
        for j in range(held):
            if _RANK[b[HAND + j]] != 12 or _SUIT[b[HAND + j]] == _SUIT[b[HAND + i]]:
                continue
            for k in range(held):
                if (
                    _RANK[b[HAND + k]] == 13
                    and _SUIT[b[HAND + k]] != _SUIT[b[HAND + i]]
                    and _SUIT[b[HAND + k]] != _SUIT[b[HAND + j]]
                    and nt < 8
                ):
                    triples[nt] = (1 << i) | (1 << j) | (1 << k)
                    nt += 1
    for bits in range(1, 1 << held):
        sb = suit_bits[bits]
        flush[bits] = sizes[bits] >= 2 and (sb & (sb - 1)) == 0
        r = False
        for t in range(nt):
            if bits & triples[t] == triples[t]:
                r = True
        royal[bits] = r
    return held


# inlined: its callers pass a read-only table (``_H_ROYAL``) and the scorer's weights, each
# a type of its own, and a kernel would be compiled once for each
@njit(cache=True, inline="always")
def best_castle(b: np.ndarray, v: np.ndarray, w: np.ndarray) -> int:
    """The standing castle with the first best ``w[0] * defenders + w[1] * their rank sum +
    w[2] * castle rank``: the Royal Assault scorer's choice and the ``royal_own_column``
    feature's column (with ``_H_ROYAL``)."""
    best = -1
    best_score = 0.0
    for c in range(4):
        if b[CAPTURED + c]:
            continue
        n = v[CLEN + c]
        ranks = 0
        for p in range(n):
            ranks += _RANK[b[COLS + c * NUM_CARDS + p]]
        s = w[0] * n + w[1] * ranks + w[2] * _RANK[b[CASTLES + c]]
        if best < 0 or s > best_score:
            best, best_score = c, s
    return best


@njit(cache=True)
def royal_target(b: np.ndarray, v: np.ndarray) -> int:
    return best_castle(b, v, _H_ROYAL)


@njit(cache=True)
def battle_tables(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    held: int,
    royals_in: np.ndarray,
    column_of: np.ndarray,
    attackable: np.ndarray,
    open_castle: np.ndarray,
) -> tuple[int, int]:
    """What the battle features need beyond ``subset_tables``: per subset its royals, per
    card its column (an open castle's own index), whether it can be attacked, whether it is
    an open castle. Returns (defenders standing, the focus column)."""
    for bits in range(1, 1 << held):
        k = 0
        for i in range(held):
            if bits >> i & 1 and _RANK[b[HAND + i]] >= 11:
                k += 1
        royals_in[bits] = k
    for card in range(NUM_CARDS):
        column_of[card] = -1
        attackable[card] = 0
        open_castle[card] = 0
    defenders = 0
    focus = -1
    for c in range(4):
        n = v[CLEN + c]
        defenders += n
        for p in range(n):
            card = b[COLS + c * NUM_CARDS + p]
            column_of[card] = c
            if not recent or p == n - 1:
                attackable[card] = 1
        if not b[CAPTURED + c]:
            if n == 0:
                open_castle[b[CASTLES + c]] = 1
                column_of[b[CASTLES + c]] = c
            if focus < 0 or (n, _RANK[b[CASTLES + c]]) < (
                v[CLEN + focus],
                _RANK[b[CASTLES + focus]],
            ):
                focus = c
    return defenders, focus


@njit(cache=True)
def captures_next(sums: np.ndarray, top: int, bits: int, need: int) -> bool:
    """Can the hand slots left after playing ``bits`` sum to ``need`` exactly?"""
    rest = 31 ^ bits
    for r in range(1, top):
        if r & ~rest == 0 and sums[r] == need:
            return True
    return False


NO_MOVE, CAPTURE, ROYAL_MOVE, ATTACK = 0, 1, 2, 3


@njit(cache=True)
def battle_setup(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> tuple:
    """The tables a battle phase's candidates are scored from: ``subset_tables``, then
    ``battle_tables`` into ``tmp`` (its first 188 entries). Returns (held slots, per subset
    royals, per card column, attackable, open castle, defenders, focus column, the Royal
    Assault's column, lateness: 0 with a full deck, 1 with none)."""
    held = subset_tables(b, v, sums, sizes, one_suit, royal)
    royals_in = tmp[0:32]
    column_of = tmp[32:84]
    attackable = tmp[84:136]
    open_castle = tmp[136:188]
    defenders, focus = battle_tables(
        b, v, recent, held, royals_in, column_of, attackable, open_castle
    )
    late = 1.0 - min(v[DSIZE], 32) / 32.0
    return (
        held,
        royals_in,
        column_of,
        attackable,
        open_castle,
        defenders,
        focus,
        royal_target(b, v),
        late,
    )


@njit(cache=True)
def battle_kind(
    bits: int,
    t: int,
    total: int,
    open_castle: np.ndarray,
    attackable: np.ndarray,
    royal: np.ndarray,
) -> int:
    """What playing the hand slots ``bits`` (rank sum ``total``) on card ``t`` is: NO_MOVE
    when it is no legal play, else CAPTURE, ROYAL_MOVE or ATTACK."""
    rank = _RANK[t]
    if open_castle[t]:
        return CAPTURE if total == rank else NO_MOVE
    if not attackable[t] or total < rank:
        return NO_MOVE
    return ROYAL_MOVE if royal[bits] else ATTACK


@njit(cache=True)
def royals_held(b: np.ndarray, v: np.ndarray) -> int:
    k = 0
    for i in range(v[HSIZE]):
        if _RANK[b[HAND + i]] >= 11:
            k += 1
    return k


@njit(cache=True)
def recycle_terms(b: np.ndarray, v: np.ndarray, rank: int) -> tuple[int, int]:
    """For recycling a card of ``rank``: its distance to the nearest standing castle's rank
    (99 when none stands) and the defenders of that rank."""
    dist = 99
    for c in range(4):
        if not b[CAPTURED + c]:
            dist = min(dist, abs(rank - _RANK[b[CASTLES + c]]))
    matches = 0
    for c in range(4):
        for p in range(v[CLEN + c]):
            if _RANK[b[COLS + c * NUM_CARDS + p]] == rank:
                matches += 1
    return dist, matches


@njit(cache=True)
def battle_action(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    w: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> int:
    """The battle-phase move ``LinearPolicy`` plays (weights ``w[:18]``): the first best.
    ``tmp``: int64 scratch of 200 entries or more."""
    return battle_scores(
        b, v, recent, w, sums, sizes, one_suit, royal, tmp, tmp[:0], np.empty(0, np.float64)
    )


@njit(cache=True)
def battle_scores(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    w: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
    actions: np.ndarray,
    scores: np.ndarray,
) -> int:
    """Every battle-phase candidate of ``LinearPolicy`` with its score, in its order: the
    legal plays by action id, then Regroup when legal, then end battle phase (score 0);
    returns their number. With empty ``actions`` nothing is stored and the first best
    candidate is returned instead (``battle_action``)."""
    store = len(actions) > 0
    (held, royals_in, column_of, attackable, open_castle, defenders, focus, target_col, late) = (
        battle_setup(b, v, recent, sums, sizes, one_suit, royal, tmp)
    )
    top = 1 << held
    n = 0
    best = -1
    best_score = 0.0
    can_capture = False
    for bits in range(1, top):
        total = sums[bits]
        size = sizes[bits]
        for t in range(NUM_CARDS):
            kind = battle_kind(bits, t, total, open_castle, attackable, royal)
            if kind == NO_MOVE:
                continue
            capture, royal_move, attack = kind == CAPTURE, kind == ROYAL_MOVE, kind == ATTACK
            can_capture = can_capture or capture
            rank = _RANK[t]
            col = column_of[t]
            s = 0.0
            if capture:
                s += w[0]
            if royal_move:
                s += w[1]
                if col == target_col:
                    s += w[2]
            if attack:
                s += w[3]
            s += w[4] * size
            s += w[5] * total
            if attack:
                s += w[6] * (total - rank)
            if not capture:
                s += w[7] * rank
            if attack and col == focus:
                s += w[8]
            if attack and v[CLEN + col] == 1:
                s += w[9]
                if captures_next(sums, top, bits, _RANK[b[CASTLES + col]]):
                    s += w[10]
            exact = attack and total == rank
            if exact:
                s += w[11]
            if attack and not exact and size >= 2 and one_suit[bits] and v[DSIZE] > 0:
                s += w[12]
            spent = 0 if royal_move else royals_in[bits]
            s += w[13] * spent
            s += w[14] * (spent * late)
            s += w[15] * (size * late)
            if store:
                actions[n] = (bits - 1) * NUM_CARDS + t
                scores[n] = s
            elif best < 0 or s > best_score:
                best, best_score = (bits - 1) * NUM_CARDS + t, s
            n += 1
    if not v[REGROUPED] and defenders == 0 and not can_capture:
        s = w[16] + w[17] * royals_held(b, v)
        if store:
            actions[n] = REGROUP
            scores[n] = s
        elif best < 0 or s > best_score:
            best, best_score = REGROUP, s
        n += 1
    if not store:
        return END_BATTLE if best < 0 or best_score < 0.0 else best
    actions[n] = END_BATTLE
    scores[n] = 0.0
    return n + 1


@njit(cache=True)
def recycle_action(b: np.ndarray, v: np.ndarray, w: np.ndarray) -> int:
    cards = np.empty(NUM_CARDS, np.int64)
    scores = np.empty(NUM_CARDS, np.float64)
    n = recycle_scores(b, v, w, cards, scores)
    best = 0
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    return RECYCLE_BASE + cards[best]


@njit(cache=True)
def recycle_scores(
    b: np.ndarray, v: np.ndarray, w: np.ndarray, cards: np.ndarray, scores: np.ndarray
) -> int:
    """Each discard-pile card (a Precision Strike's choice) with its score, by card id."""
    held = np.zeros(14, np.bool_)
    for i in range(v[HSIZE]):
        held[_RANK[b[HAND + i]]] = True
    soon = 1.0 if v[DSIZE] <= 8 else 0.0
    n = 0
    for card in range(NUM_CARDS):
        if not b[DISCARDED + card]:
            continue
        rank = _RANK[card]
        dist, matches = recycle_terms(b, v, rank)
        royal = rank >= 11
        missing = royal and not held[rank]
        s = 0.0
        if dist < 99:
            s += w[0] * dist
            if dist == 0:
                s += w[2]
        s += w[1] * rank
        s += w[3] * matches
        if royal:
            s += w[4]
        if missing:
            s += w[5]
        s += w[6] * soon
        if dist == 0:
            s += w[7] * soon
        if missing:
            s += w[8] * soon
        cards[n] = card
        scores[n] = s
        n += 1
    return n


@njit(cache=True)
def royal_action(b: np.ndarray, v: np.ndarray, w: np.ndarray) -> int:
    return ROYAL_BASE + best_castle(b, v, w)


@njit(cache=True)
def policy_action(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    weights: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> int:
    """``LinearPolicy(weights)`` on the position; the other arrays are scratch (sums and
    sizes of 64, one_suit and royal of 32, tmp of 200 int64)."""
    phase = v[PHASE]
    if phase == PRECISION:
        return recycle_action(b, v, weights[N_BATTLE : N_BATTLE + N_RECYCLE])
    if phase == ROYAL:
        return royal_action(b, v, weights[N_BATTLE + N_RECYCLE :])
    if phase == DISCARD:
        best = 0
        for i in range(1, v[HSIZE]):
            if _RANK[b[HAND + i]] > _RANK[b[HAND + best]]:
                best = i
        return DISCARD_BASE + best
    return battle_action(b, v, recent, weights[:N_BATTLE], sums, sizes, one_suit, royal, tmp)
