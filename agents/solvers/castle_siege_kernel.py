"""Castle Siege's perfect-information solver as compiled kernels (``CompiledSolver``).

The search is the one ``solvers.castle_siege`` documents, over the batched env's kernel rows
(``castle_siege.kernel``: a position is a ``cards`` int8 row and an ``ints`` int32 row, and
``castle_siege.kernel.apply`` plays a move), so the rules exist once in compiled form and are
differential-tested against ``castle_siege.rules.State`` already:

- a depth-first search with an explicit stack of rows (a child is its parent's rows copied,
  then one ``apply``), ordered moves, and a table of positions proven lost;
- the table is keyed by two independent Zobrist hashes of 63 random bits each, of everything
  a rule reads (``state_key``'s content: deck order, hand, columns, captured castles, discard
  pile, phase, Regroup used). Two different positions share both with probability about
  n^2 / 2^127 for n stored positions (below 1e-19 at 10^9 positions); that is the only way a
  verdict could differ from the Python reference's, and the tests compare the two;
- the pruning bounds 2-4 of ``solvers.castle_siege`` (bound 4, the relaxed game, memoized in a
  typed dict that lives as long as the process, with a direct-mapped cache in front). The
  bounds are checked before the table (they are cheaper, and most children fail them), and
  a pruned position is not stored, so a pruned position met again counts as a node again;
- moves ordered as the Python reference (``tests/reference/castle_siege_solver.py``) orders
  them, in 1,024 buckets (a counting sort; exactly, in ``reference_mode``);
- probes before the search: randomized greedy playouts following the search's move order
  or the compiled linear move scorer (``siege_linear``), each with noise.

``evaluate_moves`` runs the solver on many sampled worlds at once for the search agent
(``agents.castle_siege_search``).
"""

from __future__ import annotations

from typing import NamedTuple

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
    CARD_WORDS,
    CASTLES,
    CLEN,
    COLS,
    DECK,
    DISCARDED,
    DSIZE,
    HAND,
    HEAD,
    HSIZE,
    INT_WORDS,
    NEED,
    OUTCOME,
    PHASE,
    REGROUPED,
    apply,
    load_position,
)
from castle_envs.castle_siege.rules import BATTLE, DISCARD, PRECISION, ROYAL
from castle_envs.castle_siege.scoring import policy_action, subset_tables
from castle_envs.core import pcg64
from castle_envs.core.jit import compile_note, njit, unowned
from castle_envs.core.kernel_common import nonzero_key, tt_seen, xorshift_star

compile_note(__name__, "the Castle Siege solver kernels", 25)

MAX_DEPTH = 1024  # actions in one line; a game has at most a few hundred
MAX_MOVES = 1676  # legal moves in one position: at most every action id
HAND_SLOTS = 5

_RANK = RANK.astype(np.int64)
_SUIT = SUIT.astype(np.int64)
# recycle preference: ranks of standing castles (added per node), then K, Q, J, high to low
_RECYCLE_SCORE = np.array(
    [-int(RANK[c]) - (20 if RANK[c] >= 11 else 0) for c in range(NUM_CARDS)], dtype=np.int64
)

# Zobrist keys: two independent 64-bit tables (deck position x card, hand card, column x
# position x card, discard card, captured castle, phase, Regroup used)
_Z = (
    np.random.default_rng(20261201)
    .integers(0, 2**63 - 1, size=(2, 64 * 52 + 52 + 4 * 52 * 52 + 52 + 4 + 4 + 1), dtype=np.int64)
    .astype(np.uint64)
)
# read-only, as the kernels that read it as a global see it: a caller passing it then gets
# the same compiled search as they do, not a second one for a writable table
_Z.flags.writeable = False
Z_DECK, Z_HAND = 0, 64 * 52
Z_COL = Z_HAND + 52
Z_DISC = Z_COL + 4 * 52 * 52
Z_CAPT = Z_DISC + 52
Z_PHASE = Z_CAPT + 4
Z_REG = Z_PHASE + 4

# search results
WIN, LOSS, UNKNOWN_RESULT = 1, 0, -1


class Work(NamedTuple):
    """The search's arrays, allocated once per solver (``new_work``) and reused."""

    B: np.ndarray  # (MAX_DEPTH, CARD_WORDS) int8: the card row of each depth
    V: np.ndarray  # (MAX_DEPTH, INT_WORDS) int32: the int row of each depth
    moves: np.ndarray  # (MAX_DEPTH, MAX_MOVES) int32: each depth's moves in search order
    nmoves: np.ndarray  # (MAX_DEPTH,) their number
    idx: np.ndarray  # (MAX_DEPTH,) the next move to try
    h: np.ndarray  # (MAX_DEPTH, 2) uint64: each depth's position hashes
    keys: np.ndarray  # (MAX_MOVES,) int64 scratch for ordering
    counts: np.ndarray  # (1025,) int64 scratch for the counting sort
    sums: np.ndarray  # (64,) int64: per hand subset the rank sum (upper half: scratch)
    sizes: np.ndarray  # (64,) int64: per hand subset its size (upper half: scratch)
    flush: np.ndarray  # (32,) bool: per hand subset, two or more cards of one suit
    royal: np.ndarray  # (32,) bool: per hand subset, J, Q, K of three suits
    table: np.ndarray  # (2^k, 2) uint64: the positions proven lost (both hashes)
    used: np.ndarray  # (2^k + 1,) int64: entries in the table, then their slots
    cache: np.ndarray  # (2^17,) int64: bound 4's answers by key, direct-mapped pairs
    line: np.ndarray  # (MAX_DEPTH,) int64: a probe's winning line
    stats: np.ndarray  # (5,) int64: nodes, pruned, winning depth, depth, started
    rng: np.ndarray  # (1,) uint64: xorshift state for the probes
    reference: np.ndarray  # (1,) bool: search as the Python reference did (``reference_mode``)
    pcg: np.ndarray  # (6,) uint64: NumPy's PCG64 words, the reference mode's probe noise


def new_work(table_bits: int) -> Work:
    return Work(
        B=np.zeros((MAX_DEPTH, CARD_WORDS), np.int8),
        V=np.zeros((MAX_DEPTH, INT_WORDS), np.int32),
        moves=np.zeros((MAX_DEPTH, MAX_MOVES), np.int32),
        nmoves=np.zeros(MAX_DEPTH, np.int64),
        idx=np.zeros(MAX_DEPTH, np.int64),
        h=np.zeros((MAX_DEPTH, 2), np.uint64),
        keys=np.zeros(MAX_MOVES, np.int64),
        counts=np.zeros(1025, np.int64),
        sums=np.zeros(64, np.int64),
        sizes=np.zeros(64, np.int64),
        flush=np.zeros(32, np.bool_),
        royal=np.zeros(32, np.bool_),
        table=np.zeros((1 << table_bits, 2), np.uint64),
        used=np.zeros((1 << table_bits) + 1, np.int64),
        cache=np.zeros(2 << 16, np.int64),
        line=np.zeros(MAX_DEPTH, np.int64),
        stats=np.zeros(5, np.int64),
        rng=np.ones(1, np.uint64),
        reference=np.zeros(1, np.bool_),
        pcg=np.zeros(pcg64.WORDS, np.uint64),
    )


def reference_mode(w: Work, on: bool, seed: int = 0) -> None:
    """Switch ``w`` to (or from) the reference mode: the search made move for move as the
    former Python solver made it (kept as ``tests/reference/castle_siege_solver.py``), for
    ``LinearPolicy``'s endgame, whose shipped weights were measured with it. Three things
    differ from the default, none of them a verdict's soundness: battle moves are ordered by
    the reference's exact score, ties by action id (the default merges scores into 1,024
    buckets and breaks ties in generation order); the probes' noise is
    ``numpy.random.default_rng(seed).random()`` (``core.pcg64``) instead of xorshift64*; and
    nodes are counted as the reference counts them (a child is looked up in the table before
    the bounds, and a pruned one is stored as lost, so met again it costs no node)."""
    w.reference[0] = on
    if on:
        w.pcg[:] = pcg64.to_words(np.random.default_rng(seed))


@njit(cache=True)
def table_hash(b, v, z, h1, h2, hand, col, capt, disc, phase, regrouped):
    """``h1``/``h2`` with the keys of the hand, the columns, the captured castles, the discard
    pile, the phase and Regroup's use xored in, each from its own block of ``z`` (the offsets
    ``hand``..``regrouped``): the part of a position that the solver's and the player's view
    hash alike."""
    for i in range(v[HSIZE]):
        card = b[HAND + i]
        h1 ^= z[0, hand + card]
        h2 ^= z[1, hand + card]
    for c in range(4):
        base = COLS + c * NUM_CARDS
        for p in range(v[CLEN + c]):
            idx = col + (c * 52 + p) * 52 + b[base + p]
            h1 ^= z[0, idx]
            h2 ^= z[1, idx]
        if b[CAPTURED + c]:
            h1 ^= z[0, capt + c]
            h2 ^= z[1, capt + c]
    for card in range(NUM_CARDS):
        if b[DISCARDED + card]:
            h1 ^= z[0, disc + card]
            h2 ^= z[1, disc + card]
    h1 ^= z[0, phase + v[PHASE]]
    h2 ^= z[1, phase + v[PHASE]]
    if v[REGROUPED]:
        h1 ^= z[0, regrouped]
        h2 ^= z[1, regrouped]
    return h1, h2


@njit(cache=True)
def position_hash(b, v, z):
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    head = v[HEAD]
    for k in range(v[DSIZE]):
        card = b[DECK + (head + k) % NUM_CARDS]
        h1 ^= z[0, Z_DECK + k * 52 + card]
        h2 ^= z[1, Z_DECK + k * 52 + card]
    h1, h2 = table_hash(b, v, z, h1, h2, Z_HAND, Z_COL, Z_CAPT, Z_DISC, Z_PHASE, Z_REG)
    return nonzero_key(h1, h2)


# --- the table of lost positions (tt_find, tt_seen: kernel_common) --------------------------
@njit(cache=True)
def tt_add(table, h1, h2, used):
    """Store a lost position; a full neighbourhood keeps its entries (the table is a cache
    of proofs: a position left out is only searched again). ``used[0]`` counts the entries
    and ``used[1:]`` lists their slots, so that ``tt_clear`` touches only those."""
    mask = len(table) - 1
    i = np.int64(h1 & np.uint64(mask))
    for _ in range(16):
        if table[i, 0] == 0 and table[i, 1] == 0:
            table[i, 0] = h1
            table[i, 1] = h2
            used[0] += 1
            used[used[0]] = i
            return
        if table[i, 0] == h1 and table[i, 1] == h2:
            return
        i = (i + 1) & mask


@njit(cache=True)
def tt_clear(table, used):
    for k in range(1, used[0] + 1):
        table[used[k], 0] = 0
        table[used[k], 1] = 0
    used[0] = 0


# --- moves, in search order ----------------------------------------------------------------
@njit(cache=True)
def _bucket_sort(keys, n, out, counts):
    """``out[:n]`` = the action ids of ``keys[:n]`` (bucket * 2048 + id), stable by bucket."""
    counts[:] = 0
    for i in range(n):
        counts[keys[i] // 2048 + 1] += 1
    for k in range(1, len(counts)):
        counts[k] += counts[k - 1]
    for i in range(n):
        k = keys[i] // 2048
        out[counts[k]] = keys[i] % 2048
        counts[k] += 1


@njit(cache=True)
def _sorted_moves(keys, n, out, base, radix):
    """The moves ``base + key % radix`` into ``out`` by ascending key; returns ``n``."""
    keys[:n].sort()
    for i in range(n):
        out[i] = base + keys[i] % radix
    return n


@njit(cache=True)
def gen_moves(b, v, recent, out, w):
    """The legal moves of the position in search order into ``out``; returns their number.
    Order (speed only, never a verdict): captures, Royal Assaults, exact hits (fewer cards
    first, Flush Sieges first), other attacks by overkill, defenders of short columns
    first (as the Python reference, in 1,024 buckets so that a counting sort orders them);
    then Regroup, then end battle phase. Precision Strike: cards whose rank is a
    standing castle's, then K, Q, J, then high to low. Royal Assault: the castle with the
    most defenders first."""
    keys, sums, sizes, flush, royal = w.keys, w.sums, w.sizes, w.flush, w.royal
    n = 0
    if v[OUTCOME] != 0:
        return 0
    phase = v[PHASE]
    if phase == PRECISION:
        for card in range(NUM_CARDS):
            if b[DISCARDED + card]:
                score = _RECYCLE_SCORE[card]
                for c in range(4):
                    if not b[CAPTURED + c] and _RANK[b[CASTLES + c]] == _RANK[card]:
                        score -= 100
                        break
                keys[n] = (score + 1000) * 64 + card
                n += 1
        return _sorted_moves(keys, n, out, RECYCLE_BASE, 64)
    if phase == ROYAL:
        for c in range(4):
            if not b[CAPTURED + c]:
                keys[n] = (10000 - v[CLEN + c] * 20 - _RANK[b[CASTLES + c]]) * 4 + c
                n += 1
        return _sorted_moves(keys, n, out, ROYAL_BASE, 4)
    if phase == DISCARD:
        for i in range(v[HSIZE]):
            out[i] = DISCARD_BASE + i
        return v[HSIZE]
    held = subset_tables(b, v, sums, sizes, flush, royal)
    top = 1 << held
    reference = w.reference[0]
    can_capture = False
    for c in range(4):
        clen = v[CLEN + c]
        base = COLS + c * NUM_CARDS
        if clen == 0:
            if b[CAPTURED + c]:
                continue
            target = b[CASTLES + c]
            rank = _RANK[target]
            for bits in range(1, top):
                if sums[bits] == rank:  # the bucket is the reference's score too
                    keys[n] = sizes[bits] * 2048 + (bits - 1) * NUM_CARDS + target
                    n += 1
                    can_capture = True
            continue
        crowd = min(clen, 20)
        for p in range(clen - 1 if recent else 0, clen):
            target = b[base + p]
            rank = _RANK[target]
            for bits in range(1, top):
                total = sums[bits]
                if total < rank:
                    continue
                size = sizes[bits]
                if reference:  # the reference's score (then ties by action id)
                    if royal[bits]:
                        bucket = 1000 + size * 10
                    elif total == rank:
                        bucket = 2000 + size * 100 - flush[bits] * 50 + crowd
                    else:
                        bucket = 3000 + (total - rank) * 10 + size * 30 - flush[bits] * 200 + crowd
                elif royal[bits]:
                    bucket = 8 + size
                elif total == rank:
                    bucket = 16 + (size - 1) * 48 + (0 if flush[bits] else 24) + min(crowd, 23)
                else:
                    bucket = 256 + min(
                        max((total - rank) * 10 + size * 30 - flush[bits] * 200 + crowd + 200, 0)
                        // 2,
                        767,
                    )
                keys[n] = bucket * 2048 + (bits - 1) * NUM_CARDS + target
                n += 1
    if reference:
        keys[:n].sort()
        for i in range(n):
            out[i] = keys[i] % 2048
    else:
        _bucket_sort(keys, n, out, w.counts)
    if (
        not v[REGROUPED]
        and not can_capture
        and v[CLEN] + v[CLEN + 1] + v[CLEN + 2] + v[CLEN + 3] == 0
    ):
        out[n] = REGROUP
        n += 1
    out[n] = END_BATTLE
    return n + 1


# --- bounds ----------------------------------------------------------------------------------
@njit(cache=True)
def royal_in_reach(b, v):
    """A Royal Assault this turn needs J, Q, K of three suits among the hand and the deck's
    top two cards (``solvers.castle_siege``, bound 4)."""
    if v[DSIZE] < 2:
        return True
    # the suits of the J, Q, K among those cards, as 4-bit sets
    js = qs = ks = 0
    for i in range(v[HSIZE] + 2):
        if i < v[HSIZE]:
            card = b[HAND + i]
        else:
            card = b[DECK + (v[HEAD] + i - v[HSIZE]) % NUM_CARDS]
        rank = _RANK[card]
        if rank == 11:
            js |= 1 << _SUIT[card]
        elif rank == 12:
            qs |= 1 << _SUIT[card]
        elif rank == 13:
            ks |= 1 << _SUIT[card]
    for j in range(4):
        if js >> j & 1:
            for q in range(4):
                if q != j and qs >> q & 1 and ks & ~((1 << j) | (1 << q)) & 15:
                    return True
    return False


@njit(cache=True)
def _sorted_desc(cols, n):
    for i in range(1, n):
        x = cols[i]
        j = i - 1
        while j >= 0 and cols[j] < x:
            cols[j + 1] = cols[j]
            j -= 1
        cols[j + 1] = x


@njit(cache=True)
def _relaxed_key(cols, n, phi, plays, regroup, royal):
    key = n
    for i in range(4):
        key = key * 64 + (min(cols[i], 63) if i < n else 0)
    return ((key * 64 + min(phi, 63)) * 8 + min(plays, 7)) * 4 + regroup * 2 + royal


@njit(cache=True)
def _relaxed_decode(key, cols):
    royal = key & 1
    regroup = (key >> 1) & 1
    key >>= 2
    plays = key % 8
    key //= 8
    phi = key % 64
    key //= 64
    for i in range(3, -1, -1):
        cols[i] = key % 64
        key //= 64
    return key, phi, plays, regroup, royal


@njit(cache=True)
def _relaxed_expand(key, pool, top):
    """One turn of the relaxed game from ``key``: (won this turn, end of the successor keys
    written to ``pool[top:]``); a full pool counts as a win (no pruning: sound)."""
    cols = np.zeros(4, np.int64)
    n, phi, plays, regroup, royal = _relaxed_decode(key, cols)
    any_col = False
    for i in range(n):
        if cols[i]:
            any_col = True
    rest = np.zeros(4, np.int64)
    others = np.zeros(4, np.int64)
    nxt_cols = np.zeros(4, np.int64)
    for r in range(1 if (royal and plays >= 3 and any_col) else 0, -1, -1):
        m = 0
        for i in range(r, n):  # a Royal Assault takes the longest column
            rest[m] = cols[i]
            m += 1
        left = plays - 2 * r  # 3 cards, but its attack also defeats a defender
        if m == 0:
            if phi >= 3 * r:
                return True, top
            continue
        total = 0
        for i in range(m):
            total += rest[i]
        if phi >= 3 * r + m and (total + m <= left or (regroup and total <= left)):
            return True, top
        for cap in range(1 << m):  # castles captured this turn, then the end-of-turn deal
            cost = 0
            ncap = 0
            no = 0
            for i in range(m):
                if cap >> i & 1:
                    cost += rest[i] + 1
                    ncap += 1
                else:
                    others[no] = rest[i]
                    no += 1
            if cost > left or phi < 3 * r + ncap:
                continue
            after = phi - 3 * r - ncap
            if no == 0 or after <= no:
                continue
            avail = 0
            for i in range(no):
                avail += others[i]
            kills = min(left - cost, avail)  # fewer kills are never better (monotone)
            nxt = after - no
            for k0 in range(min(others[0], kills) + 1):
                r1 = kills - k0
                for k1 in range((min(others[1], r1) if no > 1 else 0) + 1):
                    r2 = r1 - k1
                    for k2 in range((min(others[2], r2) if no > 2 else 0) + 1):
                        k3 = r2 - k2
                        if (no > 3 and k3 > others[3]) or (no <= 3 and k3 != 0):
                            continue
                        for i in range(no):
                            k = k0 if i == 0 else (k1 if i == 1 else (k2 if i == 2 else k3))
                            nxt_cols[i] = others[i] - k + 1
                        _sorted_desc(nxt_cols, no)
                        if top >= len(pool):
                            return True, top
                        pool[top] = _relaxed_key(nxt_cols, no, nxt, min(HAND_SLOTS, nxt), 1, 1)
                        top += 1
    return False, top


@njit(cache=True)
def relaxed_winnable(cols, n, phi, plays, regroup, royal, memo):
    """The relaxed game of ``solvers.castle_siege`` (bound 4) over ``cols[:n]``, the standing
    castles' column lengths sorted longest first; ``memo`` (a typed dict) outlives calls.
    An OR-search over turns with an explicit stack (numba cannot cache recursion)."""
    root = _relaxed_key(cols, n, phi, plays, regroup, royal)
    if root in memo:
        return memo[root]
    pool = np.empty(1 << 16, np.int64)
    fkey = np.empty(128, np.int64)
    fstart = np.empty(128, np.int64)
    fend = np.empty(128, np.int64)
    fpos = np.empty(128, np.int64)
    won, end = _relaxed_expand(root, pool, 0)
    if won:
        memo[root] = True
        return True
    fkey[0], fstart[0], fend[0], fpos[0] = root, 0, end, 0
    sp = 1
    top = end
    while sp > 0:
        f = sp - 1
        if fpos[f] < fend[f]:
            child = pool[fpos[f]]
            fpos[f] += 1
            if child in memo:
                won = memo[child]
            elif sp >= 128:
                won = True  # too deep to follow: no pruning (sound)
            else:
                won, end = _relaxed_expand(child, pool, top)
                if not won:
                    fkey[sp], fstart[sp], fend[sp], fpos[sp] = child, top, end, top
                    top = end
                    sp += 1
                    continue
                memo[child] = True
            if won:  # an OR-search: every position on the stack is won
                for i in range(sp):
                    memo[fkey[i]] = True
                return True
        else:
            memo[fkey[f]] = False  # every successor lost
            top = fstart[f]
            sp -= 1
    return False


@njit(cache=True)
def hopeless(b, v, w, memo):
    """Bounds 2-4 of ``solvers.castle_siege`` (battle phase only)."""
    if v[PHASE] != BATTLE:
        return False
    cols, cache = w.sizes[40:44], w.cache
    standing = 0
    defenders = 0
    for c in range(4):
        defenders += v[CLEN + c]
        if not b[CAPTURED + c]:
            cols[standing] = v[CLEN + c]
            standing += 1
    phi = v[DSIZE] + v[HSIZE]
    if phi < standing:  # bound 2
        return True
    if v[DSIZE] == 0 and defenders == 0:  # bound 3
        return v[HSIZE] < standing
    _sorted_desc(cols, standing)
    regroup = 0 if v[REGROUPED] else 1
    royal = 1 if royal_in_reach(b, v) else 0
    # a direct-mapped cache in front of the memo dict: most lookups repeat recent ones
    key = _relaxed_key(cols, standing, phi, v[HSIZE], regroup, royal)
    slot = 2 * ((key * 0x9E3779B97F4A7C15) >> 48 & (len(cache) // 2 - 1))
    if cache[slot] == key + 1:
        return cache[slot + 1] == 0
    won = relaxed_winnable(cols, standing, phi, v[HSIZE], regroup, royal, memo)
    cache[slot] = key + 1
    cache[slot + 1] = 1 if won else 0
    return not won


# --- the search ------------------------------------------------------------------------------
@njit(cache=True)
def _rand(rng):
    """xorshift64*: the search's own reproducible random numbers, in [0, 1)."""
    return float(xorshift_star(rng, 0) >> np.uint64(11)) / 9007199254740992.0


@njit(cache=True)
def _probe_rand(w):
    """The probes' noise: ``_rand``, or in the reference mode NumPy's ``Generator.random()``
    (PCG64: the top 53 bits of a 64-bit output)."""
    if w.reference[0]:
        return float(pcg64.next64(w.pcg) >> np.uint64(11)) / 9007199254740992.0
    return _rand(w.rng)


#: public names for the other kernels (the search agents' trees and nested search)
ZOBRIST = _Z
rand = _rand


@njit(cache=True, inline="always")
def _copy_row(B, V, src, dst):
    """The position part of the rows (the card row's tail is the env's scratch, which the
    search never reads)."""
    for k in range(NEED):
        B[dst, k] = B[src, k]
    for k in range(INT_WORDS):
        V[dst, k] = V[src, k]


@njit(cache=True)
def dfs(w, z, memo, recent, leave, max_nodes, prune, use_table, order):
    """Depth-first search from the position in ``w.B[0]``/``w.V[0]``. Returns WIN (the line
    is ``w.moves[d, w.idx[d] - 1]`` for d = 0..stats[2]), LOSS, or UNKNOWN_RESULT once more than
    ``max_nodes`` nodes are spent; called again with a larger ``max_nodes`` it resumes where it
    stopped (``stats[3]`` holds the depth, ``stats[4]`` whether the root was expanded).
    ``stats``: [nodes, pruned, depth of the winning line's last move, depth, started]."""
    # row views without reference counting (``core.jit.unowned``): the caller keeps them alive
    B, V, moves, h = unowned(w.B), unowned(w.V), unowned(w.moves), unowned(w.h)
    nmoves, idx, stats, table, used = w.nmoves, w.idx, w.stats, w.table, w.used
    reference = w.reference[0]
    if stats[4] == 0:
        if V[0, OUTCOME] != 0:
            return WIN if V[0, OUTCOME] == 1 else LOSS
        if stats[0] >= max_nodes:
            return UNKNOWN_RESULT
        stats[0] += 1
        if prune and hopeless(B[0], V[0], w, memo):
            stats[1] += 1
            return LOSS
        if use_table and tt_seen(table, position_hash(B[0], V[0], z), h, 0):
            return LOSS
        stats[4] = 1
        nmoves[0] = gen_moves(B[0], V[0], recent, moves[0], w)
        if not order:
            moves[0, : nmoves[0]].sort()
        idx[0] = 0
        stats[3] = 0
    d = stats[3]
    while True:
        if idx[d] < nmoves[d]:
            action = moves[d, idx[d]]
            idx[d] += 1
            c = d + 1
            _copy_row(B, V, d, c)
            apply(B[c], V[c], action, leave)
            if V[c, OUTCOME] == 1:
                stats[2] = d
                stats[3] = d
                return WIN
            if V[c, OUTCOME] == -1:
                continue
            if reference:
                # the reference's accounting: the table first, a pruned position stored
                if use_table and tt_seen(table, position_hash(B[c], V[c], z), h, c):
                    continue
                if stats[0] >= max_nodes:
                    idx[d] -= 1
                    stats[3] = d
                    return UNKNOWN_RESULT
                stats[0] += 1
                if prune and hopeless(B[c], V[c], w, memo):
                    stats[1] += 1
                    if use_table:
                        tt_add(table, h[c, 0], h[c, 1], used)
                    continue
            else:
                if stats[0] >= max_nodes:
                    idx[d] -= 1  # expand this child first when resumed
                    stats[3] = d
                    return UNKNOWN_RESULT
                # the bounds first: most children fail them, and they cost less than the table
                if prune and hopeless(B[c], V[c], w, memo):
                    stats[0] += 1
                    stats[1] += 1
                    continue
                if use_table and tt_seen(table, position_hash(B[c], V[c], z), h, c):
                    continue
                stats[0] += 1
            if c >= MAX_DEPTH - 1:
                stats[3] = d
                return UNKNOWN_RESULT
            nmoves[c] = gen_moves(B[c], V[c], recent, moves[c], w)
            if not order:
                moves[c, : nmoves[c]].sort()
            idx[c] = 0
            d = c
        else:
            if use_table:
                tt_add(table, h[d, 0], h[d, 1], used)
            if d == 0:
                stats[3] = 0
                return LOSS
            d -= 1


@njit(cache=True)
def probe(w, memo, recent, leave, budget, noise, weights, guided, prune):
    """Randomized greedy playouts from ``w.B[0]``/``w.V[0]`` until ``budget`` nodes (one per
    step) are spent: the search's order, each step taking the next move with probability
    ``noise``; with ``guided``, every other playout follows the linear move scorer
    ``weights`` (``siege_linear``) instead, the first without noise. Returns the length of
    a winning line written to ``w.line`` (0: none found)."""
    B, V, moves = unowned(w.B), unowned(w.V), unowned(w.moves)
    stats, line = w.stats, w.line
    probes = 0
    while stats[0] < budget:
        with_policy = guided and probes % 2 == 0
        noise_free = with_policy and probes == 0
        probes += 1
        _copy_row(B, V, 0, 1)
        n = 0
        while V[1, OUTCOME] == 0 and stats[0] < budget and n < len(line):
            stats[0] += 1
            if prune and hopeless(B[1], V[1], w, memo):
                break
            if with_policy and (noise_free or _probe_rand(w) >= noise):
                action = policy_action(
                    B[1], V[1], recent, weights, w.sums, w.sizes, w.flush, w.royal, w.keys
                )
            else:
                m = gen_moves(B[1], V[1], recent, moves[0], w)
                i = 0
                while i + 1 < m and _probe_rand(w) < noise:
                    i += 1
                action = moves[0, i]
            line[n] = action
            n += 1
            apply(B[1], V[1], action, leave)
        if V[1, OUTCOME] == 1:
            return n
    return 0


@njit(cache=True)
def evaluate_moves(
    w,
    z,
    memo,
    samples_b,
    samples_v,
    candidates,
    recent,
    leave,
    budget,
    probe_share,
    noise,
    weights,
    guided,
    prune,
    wins,
    min_samples,
):
    """Perfect-information Monte Carlo: for each sampled position (``samples_b[i]``,
    ``samples_v[i]``: the same decision with the unseen cards dealt differently) and each
    candidate move, play the move and solve the rest with ``budget`` nodes (probes first,
    then the depth-first search). ``wins[j]`` counts the samples in which candidate ``j``
    leads to a proven win. The table of lost positions is shared by a sample's candidates
    (their subtrees overlap) and cleared between samples. When no candidate has won in the
    first ``min_samples`` samples the rest are skipped (the counts could only separate the
    candidates by a rare win). Returns the number of samples used."""
    for j in range(len(candidates)):
        wins[j] = 0
    for i in range(samples_b.shape[0]):
        if i == min_samples:
            total = 0
            for j in range(len(candidates)):
                total += wins[j]
            if total == 0:
                return i
        tt_clear(w.table, w.used)
        for j in range(len(candidates)):
            load_position(w.B, w.V, 0, samples_b[i], samples_v[i])
            apply(w.B[0], w.V[0], candidates[j], leave)
            if w.V[0, OUTCOME] != 0:
                wins[j] += w.V[0, OUTCOME] == 1
                continue
            w.stats[:] = 0
            if (
                probe(
                    w, memo, recent, leave, int(budget * probe_share), noise, weights, guided, prune
                )
                > 0
            ):
                wins[j] += 1
                continue
            w.stats[1:] = 0
            if dfs(w, z, memo, recent, leave, budget, prune, True, True) == WIN:
                wins[j] += 1
    return samples_b.shape[0]
