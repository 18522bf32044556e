"""Castellion's perfect-information solver as compiled kernels (``solve_castellion`` wraps
them in ``Solver``).

A position is a row of the batched env (``castellion.kernel``: both piles' order, every
face-down Ordeal, the castle, ...), and ``castellion.kernel.apply`` plays a move: the rules
are the game's one implementation (``castellion.rules.State`` is a view over such a row).
Perfect information: the solver reads the piles' order and the face-down cards. One node is
one ``apply``.

Three searches share the budget (``Solver`` runs them in a fixed schedule):

- **beam search over turns** (``beam``): a turn is everything from one turn start (draw phase)
  to the next with one tile fewer unplayed; each beam entry's turns are enumerated by a small
  depth-first walk that follows every draw, placement, discard, Traitor and early-encounter
  choice and, in the inner phases (destroy, Juggler, Seer, Chameleon, Pyro, Menace reveal),
  only the ``inner`` best children by ``evaluate``. The best ``width`` turn ends (duplicates
  removed by hash) form the next layer. It finds wins; it proves nothing, so its pruning
  needs no soundness argument: a line it finds is replayed before it is counted.
- **depth-first search** (``dfs``, resumable): every legal move, children ordered by
  ``evaluate``, with two sound reductions:
  1. *a table of lost positions* keyed by two independent 64-bit Zobrist hashes of every
     word of the row that a rule reads (``position_hash``; scratch bytes excluded). The game
     is deterministic and its future depends only on that row (level and rules fixed per
     solver), so a position proven lost is lost wherever it recurs. Only positions whose
     every child was searched to the end are stored (a budget cut stores nothing). Two
     positions share both hashes with probability about n^2 / 2^129 for n stored
     positions: the one way the table could err.
  2. *the School supply bound* (``hopeless``): at the School, Traitors cannot be discarded
     and there is no early encounter, so the lowest ordeal is met exactly when its last
     missing Traitor is placed (or earlier: a complete castle, all tiles played). Before
     that the player can place at most ``supply`` Defenders: the one in hand, the whole
     safe pile, and the regular pile's Defenders above the Traitor that triggers it (all of
     them if fewer Traitors are left). A placement adds one tile to one column and joins one
     faction's component, so it raises the formation count by at most one and the
     foundation by at most one cell: an Exam needing ``m`` more formations or ``f`` more
     foundation cells needs at least ``max(m, f)`` placements; Exam II (remove the bottom
     row) needs every column two high, at least ``sum(max(0, 2 - height))`` placements.
     Failing an Exam loses, so a position whose need exceeds its supply is lost.
- the plain exhaustive search is ``dfs`` with both reductions off; the tests compare its
  verdicts with the reduced search's and with ``solve_castellion.exhaustive`` (pure Python
  over ``rules.State``) on small positions.
- the **loss search** (``solve_castellion.Solver.prove_loss``) is ``dfs`` with ``prune=2``
  (the proofs of loss of ``castellion_loss``, which hold at every level), a ``goal`` (win
  once ``goal`` ordeals are passed: LOSS then says no line passes that ordeal, so none wins)
  and ``canon``: its table keys a position and its mirror image alike (``mirror_hash``).
  The mirror is sound because every rule is left-right symmetric: a placement goes on top of
  a column or at either end of the foundation, rule 3, the three patterns, the split rule,
  the Juggler's pairs and Pyro's moves all read the same mirrored, and the castle's place on
  the table is no part of the game (I2: it is stored left-aligned, which the mirror keeps),
  so mirror images have the same value; only Pyro's lifted tile's origin names a column, and
  ``_hash`` mirrors only in the draw, Defender and Traitor phases, where it is unused. The
  main search keeps the plain table, so its node counts and verdicts are unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from castle_envs.agents.solvers.castellion_loss import describe, loss_code, prove_loss  # noqa: F401 (solve_castellion uses them)

from castle_envs.castellion import kernel as K
from castle_envs.castellion.data import SCHOOL
from castle_envs.core.jit import njit, unowned
from castle_envs.core.kernel_common import nonzero_key, tt_seen

WORDS = K.WORDS
POS_WORDS = K.SCRATCH  # the position part of a row (scratch excluded)
MAX_DEPTH = 1024  # moves in one line (a game takes a few hundred)
NA = 144  # mask width
MAX_TURN = 40  # moves in one turn (a Traitor discard destroys 4, ...)
WIN, LOSS, UNKNOWN_RESULT = 1, 0, -1
BIG = np.int64(1) << np.int64(50)

# Zobrist keys: word x value (-1..46)
_NV = 48
_Z = (
    np.random.default_rng(20261214)
    .integers(1, 2**63 - 1, size=(2, POS_WORDS * _NV), dtype=np.int64)
    .astype(np.uint64)
)
_INNER = np.zeros(K.OVER + 1, np.bool_)
for _p in (
    K.DESTROY_PHASE,
    K.JUGGLE_PHASE,
    K.REVEAL_PHASE,
    K.RECOVER_PHASE,
    K.LIFT_PHASE,
    K.MOVE_PHASE,
    K.REVEAL_ORDEAL_PHASE,
):
    _INNER[_p] = True
#: the positions' Zobrist keys (public: the solver module's view uses them)
ZOBRIST = _Z


@njit(cache=True)
def position_hash(s, z):
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(POS_WORDS):
        k = i * _NV + s[i] + 1
        h1 ^= z[0, k]
        h2 ^= z[1, k]
    return nonzero_key(h1, h2)


@njit(cache=True)
def tt_add(table, h1, h2):
    mask = len(table) - 1
    i = np.int64(h1 & np.uint64(mask))
    for _ in range(16):
        if (table[i, 0] == 0 and table[i, 1] == 0) or (table[i, 0] == h1 and table[i, 1] == h2):
            table[i, 0] = h1
            table[i, 1] = h2
            return
        i = (i + 1) & mask


# --- the evaluation (guides beam and move order; no soundness needed) -----------------------
_GROUP_VALUE = np.array([0, 0, 300, 1200], np.int64)  # a same-faction group of n < 4 tiles


@njit(cache=True)
def _traitors_to_go(s):
    """Traitors still to come beside the lowest ordeal before it is encountered."""
    slot = s[K.CURRENT]
    return K.ORD_TRAITORS[s[K.ORD + slot]] - s[K.BESIDE + 2 * slot] - s[K.BESIDE + 2 * slot + 1]


@njit(cache=True)
def _pile_supply(s, supply, to_go):
    """``supply`` plus the Defenders of the regular pile above its ``to_go``-th Traitor from
    the top."""
    for i in range(s[K.REG_N] - 1, -1, -1):
        if s[K.REG + i] >= K.NUM_DEFENDER_KINDS:
            to_go -= 1
            if to_go == 0:
                break
        else:
            supply += 1
    return supply


@njit(cache=True)
def _supply(s):
    """Defenders placeable before the lowest ordeal's Traitor count is reached (``hopeless``'s
    count; at the Academy and Menace, where Traitors can be discarded, only a guide)."""
    to_go = _traitors_to_go(s)
    hand = s[K.HAND]
    supply = s[K.SAFE_N] + s[K.REV_N]
    if hand >= K.NUM_DEFENDER_KINDS:
        to_go -= 1
        if to_go <= 0:
            return 0
    elif hand >= 0:
        supply += 1
    return _pile_supply(s, supply, to_go)


@njit(cache=True)
def _empty(s, r, c):
    """Can a tile still come to (r, c)? An empty cell of an existing column, or a new column
    at either end of the foundation row while the castle is under 6 wide."""
    if r < 0 or r >= K.SIZE:
        return False
    width = K.castle_width(s)
    if c < 0 or c >= width:
        return r == 0 and width < K.SIZE and (c == -1 or c == width)
    return s[K.HEIGHT + c] <= r


@njit(cache=True)
def _fits(s, comp, rows):
    """Which formations a group of 2 or 3 tiles (bits of ``comp``, shifted down ``rows``
    rows) can still grow into, given the empty cells around it: bit 0 a tower (its column
    open above), bit 1 a bastion (its 2 x 2 square's other cells open), bit 2 a line (open
    cells left and right of it)."""
    rmin = 9
    rmax = -1
    cmin = 9
    cmax = -1
    n = 0
    x = comp
    while x:
        j = K.low_bit_index(x)
        r = j // 6 + rows
        c = j % 6
        rmin = min(rmin, r)
        rmax = max(rmax, r)
        cmin = min(cmin, c)
        cmax = max(cmax, c)
        x &= x - np.int64(1)
        n += 1
    out = 0
    if cmin == cmax and rmax + (4 - n) < K.SIZE and s[K.HEIGHT + cmin] == rmax + 1:
        out |= 1
    if rmin == rmax:
        room = 0
        c = cmin - 1
        while room < 4 - n and _empty(s, rmin, c):
            room += 1
            c -= 1
        c = cmax + 1
        while room < 4 - n and _empty(s, rmin, c):
            room += 1
            c += 1
        if room >= 4 - n:
            out |= 4
    if rmax - rmin <= 1 and cmax - cmin <= 1:
        for r0 in range(max(0, rmax - 1), rmin + 1):
            for c0 in range(cmax - 1, cmin + 1):
                ok = True
                for dr in range(2):
                    for dc in range(2):
                        r = r0 + dr
                        c = c0 + dc
                        bit = (r - rows) * 6 + c
                        if c < 0 or c >= K.SIZE:
                            if not (c == -1 and r == 0):
                                ok = ok and _empty(s, r, c)
                            else:
                                ok = ok and _empty(s, r, c)
                        elif (r - rows) < 0 or not ((comp >> np.int64(bit)) & 1):
                            ok = ok and _empty(s, r, c)
                if ok:
                    out |= 2
    return out


@njit(cache=True)
def evaluate(s, level):
    """Higher is better: ordeals passed, the target card's formations, same-faction groups
    growing towards four tiles, the foundation, columns high enough for a row removal, and
    the Defenders left before the next encounter. It only guides the beam and the move
    order; nothing relies on it for soundness."""
    out = s[K.OUTCOME]
    if out == 1:
        return BIG
    if out == -1:
        return -BIG
    slot = s[K.CURRENT]
    score = np.int64(slot) * 1000000
    card = s[K.ORD + slot]
    rows = 0
    target = card
    if K.ORD_KIND[card] == K.K_ROWS:
        rows = K.ORD_ROWS[card]
        if slot < 2:
            target = s[K.ORD + slot + 1]
    nt, nb, nl = K.ORD_TOWERS[target], K.ORD_BASTIONS[target], K.ORD_LINES[target]
    t = 0
    b = 0
    li = 0
    for faction in range(4):
        board = K.faction_board(s, faction)
        if rows:
            board = board >> np.int64(6 * rows)
        while board:
            comp = K.component(board, board & -board)
            board &= ~comp
            n = K.popcount(comp)
            if n == 4:
                kind = K.shape_of_group(comp)
                if kind < 0:
                    score -= 600
                t, b, li = K.count_formation(kind, t, b, li)
            elif n < 4:
                if n == 1:
                    if comp >= np.int64(1 << 6):
                        score -= 150  # a lone tile above the foundation: clutter
                else:
                    fits = _fits(s, comp, rows)  # bit 0 tower, 1 bastion, 2 line
                    want = 0
                    if nt > 0 and fits & 1:
                        want = 1
                    if nb > 0 and fits & 2:
                        want = 1
                    if nl > 0 and fits & 4:
                        want = 1
                    score += _GROUP_VALUE[n] if want else -200
            else:
                score -= (n - 4) * 800
    score += 20000 * (min(t, nt) + min(b, nb) + min(li, nl))
    score += 1500 * (t + b + li)
    width = 0
    high = 0
    for c in range(K.SIZE):
        h = s[K.HEIGHT + c]
        if h:
            width += 1
        if h > rows:
            high += 1
    score += 600 * width + (2000 if width == K.SIZE else 0)
    if rows:
        score += 4000 * high
    score += 150 * min(_supply(s), 30)
    return score


# --- the sound bound ----------------------------------------------------------------------
@njit(cache=True)
def hopeless(s, level):
    """The School supply bound (module docstring, reduction 2): True only if lost."""
    if level != SCHOOL or s[K.OUTCOME] != 0:
        return False
    card = s[K.ORD + s[K.CURRENT]]
    to_go = _traitors_to_go(s)
    hand = s[K.HAND]
    supply = s[K.SAFE_N]  # the safe pile holds Defenders only
    if hand >= K.NUM_DEFENDER_KINDS:
        to_go -= 1
        if to_go <= 0:
            supply = 0  # the Traitor in hand triggers the encounter now
    elif hand >= 0:
        supply += 1
    if to_go > 0:
        supply = _pile_supply(s, supply, to_go)
    if K.ORD_KIND[card] == K.K_ROWS:
        need = 0
        for c in range(K.SIZE):
            need += max(0, K.ORD_ROWS[card] + 1 - s[K.HEIGHT + c])
        return need > supply
    t, b, li = K.formations(s)
    missing = (
        max(0, K.ORD_TOWERS[card] - t)
        + max(0, K.ORD_BASTIONS[card] - b)
        + max(0, K.ORD_LINES[card] - li)
    )
    return max(missing, K.SIZE - K.castle_width(s)) > supply


# --- depth-first search -----------------------------------------------------------------------
class Work(NamedTuple):
    S: np.ndarray  # (MAX_DEPTH, WORDS) int8: the row of each depth
    moves: np.ndarray  # (MAX_DEPTH, NA) int64: each depth's moves in search order
    nmoves: np.ndarray  # (MAX_DEPTH,)
    idx: np.ndarray  # (MAX_DEPTH,) the next move to try
    h: np.ndarray  # (MAX_DEPTH, 2) uint64
    mask: np.ndarray  # (NA,) bool scratch
    keys: np.ndarray  # (NA,) int64 scratch
    child: np.ndarray  # (WORDS,) int8 scratch
    table: np.ndarray  # (2^k, 2) uint64: positions proven lost
    stats: np.ndarray  # (6,) int64: nodes, pruned, line length, depth, started, -


def new_work(table_bits: int) -> Work:
    return Work(
        S=np.zeros((MAX_DEPTH, WORDS), np.int8),
        moves=np.zeros((MAX_DEPTH, NA), np.int64),
        nmoves=np.zeros(MAX_DEPTH, np.int64),
        idx=np.zeros(MAX_DEPTH, np.int64),
        h=np.zeros((MAX_DEPTH, 2), np.uint64),
        mask=np.zeros(NA, np.bool_),
        keys=np.zeros(NA, np.int64),
        child=np.zeros(WORDS, np.int8),
        table=np.zeros((1 << table_bits, 2), np.uint64),
        stats=np.zeros(6, np.int64),
    )


@njit(cache=True)
def _descend(rows, moves, idx, d, level, stats):
    """Play depth ``d``'s next move (a node) into row ``d + 1``; returns the move."""
    a = moves[d, idx[d]]
    idx[d] += 1
    rows[d + 1, :] = rows[d, :]
    K.apply(rows[d + 1], a, level)
    stats[0] += 1
    return a


@njit(cache=True)
def _legal_moves(s, level, rules, out, m):
    """The legal moves of ``s`` by action id into ``out``; returns their number."""
    K.compute_mask(s, level, rules, m)
    n = 0
    for a in range(K.NUM_ACTIONS):
        if m[a]:
            out[n] = a
            n += 1
    return n


@njit(cache=True)
def _best_first(s, level, out, n, keep, keys, child, stats):
    """The ``keep`` best of the ``n`` moves in ``out`` by ``evaluate`` of their child, best
    first, ties in their order, into ``out[:keep]``; each evaluated child costs a node."""
    for i in range(n):
        child[:] = s
        K.apply(child, out[i], level)
        stats[0] += 1
        keys[i] = -evaluate(child, level)
    perm = np.argsort(keys[:n], kind="mergesort")
    tmp = out[:n].copy()
    for i in range(keep):
        out[i] = tmp[perm[i]]


@njit(cache=True)
def _gen(s, level, rules, out, m, keys, child, order, stats):
    """Legal moves of ``s`` into ``out`` (best child first when ``order``; each evaluated
    child costs a node); returns their number."""
    n = _legal_moves(s, level, rules, out, m)
    if order and n > 1:
        _best_first(s, level, out, n, n, keys, child, stats)
    return n


@njit(cache=True)
def _pruned(s, level, rules, prune):
    """Does the bound chosen by ``prune`` (0 none, 1 the School supply bound, 2 the proofs
    of loss of ``castellion_loss``) call ``s`` lost?"""
    if prune == 1:
        return hopeless(s, level)
    if prune == 2:
        return loss_code(s, level, rules)[0] != 0
    return False


@njit(cache=True)
def _hash(s, z, canon):
    """``position_hash``, or with ``canon`` the smaller of it and its mirror image's
    (``mirror_hash``) in the draw, Defender and Traitor phases."""
    h1, h2 = position_hash(s, z)
    if canon:
        p = s[K.PHASE]
        if p == K.DRAW_PHASE or p == K.DEFENDER_PHASE or p == K.TRAITOR_PHASE:
            m1, m2 = mirror_hash(s, z)
            if m1 < h1 or (m1 == h1 and m2 < h2):
                return m1, m2
    return h1, h2


@njit(cache=True)
def mirror_hash(s, z):
    """``position_hash`` of the castle mirrored left to right (everything else unchanged).
    Every rule is symmetric under the mirror (placements at the top of a column or at either
    end, rule 3, the three patterns, splits, swaps, Pyro's moves), so a position and its
    mirror image have the same value; the scalars that name a column (Pyro's lifted tile's
    origin) are only used outside the phases where ``_hash`` uses this."""
    width = K.castle_width(s)
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(POS_WORDS):
        v = s[i]
        if K.CELL <= i < K.CELL + K.CELLS:
            c = (i - K.CELL) % K.SIZE
            if c < width:
                v = s[i - c + width - 1 - c]
        elif K.HEIGHT <= i < K.HEIGHT + K.SIZE:
            c = i - K.HEIGHT
            if c < width:
                v = s[K.HEIGHT + width - 1 - c]
        k = i * _NV + v + 1
        h1 ^= z[0, k]
        h2 ^= z[1, k]
    return nonzero_key(h1, h2)


@njit(cache=True)
def dfs(w, z, level, rules, max_nodes, prune, use_table, order, goal=3, canon=False):
    """Depth-first search from ``w.S[0]``: WIN (the line is ``w.moves[d, w.idx[d] - 1]`` for
    d < stats[2]), LOSS, or UNKNOWN_RESULT when ``max_nodes`` is spent; called again with a
    larger ``max_nodes`` it resumes where it stopped. ``prune``: 0 no bound, 1 the School
    supply bound, 2 ``castellion_loss``'s proofs of loss. A position wins once ``goal``
    ordeals are passed (3: the game is won; ``current + 1``: can the current ordeal be
    passed at all?). ``canon``: the table keys mirror images alike (``_hash``)."""
    S, moves, h = unowned(w.S), unowned(w.moves), unowned(w.h)
    nmoves, idx, stats, table = w.nmoves, w.idx, w.stats, w.table
    if stats[4] == 0:
        if S[0, K.OUTCOME] != 0 or S[0, K.CURRENT] >= goal:
            stats[2] = 0
            return LOSS if S[0, K.OUTCOME] == -1 else WIN
        stats[0] += 1
        if _pruned(S[0], level, rules, prune):
            stats[1] += 1
            return LOSS
        if use_table and tt_seen(table, _hash(S[0], z, canon), h, 0):
            return LOSS
        stats[4] = 1
        nmoves[0] = _gen(S[0], level, rules, moves[0], w.mask, w.keys, w.child, order, stats)
        idx[0] = 0
        stats[3] = 0
    d = stats[3]
    while True:
        if idx[d] < nmoves[d]:
            if stats[0] >= max_nodes:
                stats[3] = d
                return UNKNOWN_RESULT
            _descend(S, moves, idx, d, level, stats)
            c = d + 1
            out = S[c, K.OUTCOME]
            if out == 1 or (out == 0 and S[c, K.CURRENT] >= goal):
                stats[2] = c
                stats[3] = d
                return WIN
            if out == -1:
                continue
            if _pruned(S[c], level, rules, prune):
                stats[1] += 1
                continue
            if use_table and tt_seen(table, _hash(S[c], z, canon), h, c):
                continue
            if c >= MAX_DEPTH - 1:
                stats[3] = d
                return UNKNOWN_RESULT
            nmoves[c] = _gen(S[c], level, rules, moves[c], w.mask, w.keys, w.child, order, stats)
            idx[c] = 0
            d = c
        else:
            if use_table:
                tt_add(table, h[d, 0], h[d, 1])
            if d == 0:
                stats[3] = 0
                return LOSS
            d -= 1


# --- beam search over turns ---------------------------------------------------------------------
@njit(cache=True)
def _unplayed(s):
    return s[K.REG_N] + s[K.SAFE_N] + s[K.REV_N] + (1 if s[K.HAND] >= 0 else 0)


@njit(cache=True)
def _insert_hash(hset, h1, h2):
    """Add to an open-addressing set; False if it was there."""
    mask = len(hset) - 1
    i = np.int64(h1 & np.uint64(mask))
    while True:
        if hset[i, 0] == 0 and hset[i, 1] == 0:
            hset[i, 0] = h1
            hset[i, 1] = h2
            return True
        if hset[i, 0] == h1 and hset[i, 1] == h2:
            return False
        i = (i + 1) & mask


@njit(cache=True)
def beam(root, z, level, rules, width, inner, max_nodes, stats, line):
    """Beam search over turns from ``root`` (module docstring). Returns the length of a
    winning line written to ``line`` (0: none found). ``stats[0]`` counts the nodes; the
    search stops before a move once ``max_nodes`` are spent, so a win found within a budget
    is found the same way with any larger one. ``stats[1]``: the most ordeals passed at a
    kept turn end; ``stats[2]``: the last layer."""
    # turn ends kept per layer before selection; each costs a node, so no more than the
    # budget (the arrays stay small for small budgets, with the same search)
    cap = min(width * 48, max_nodes + 1)
    width = min(width, cap)
    layers = 100
    cur = np.zeros((width, WORDS), np.int8)
    ncur = 1
    cur[0, :] = root
    nxt = np.zeros((cap, WORDS), np.int8)
    nscore = np.zeros(cap, np.int64)
    nparent = np.zeros(cap, np.int64)
    nacts = np.zeros((cap, MAX_TURN), np.int16)
    nlen = np.zeros(cap, np.int64)
    parent = np.zeros((layers, width), np.int64)
    acts = np.zeros((layers, width, MAX_TURN), np.int16)
    alen = np.zeros((layers, width), np.int64)
    T = np.zeros((MAX_TURN + 1, WORDS), np.int8)
    tm = np.zeros((MAX_TURN + 1, NA), np.int64)
    tn = np.zeros(MAX_TURN + 1, np.int64)
    ti = np.zeros(MAX_TURN + 1, np.int64)
    m = np.zeros(NA, np.bool_)
    keys = np.zeros(NA, np.int64)
    child = np.zeros(WORDS, np.int8)
    path = np.zeros(MAX_TURN, np.int64)
    hset = np.zeros((1 << 16, 2), np.uint64)
    while 4 * width > (1 << 16):
        hset = np.zeros((len(hset) * 2, 2), np.uint64)
    for layer in range(layers):
        n = 0
        won = -1
        won_len = 0
        for e in range(ncur):
            T[0, :] = cur[e, :]
            start = _unplayed(T[0])
            d = 0
            tn[0] = _turn_moves(T[0], level, rules, tm[0], m, keys, child, inner, stats)
            ti[0] = 0
            while d >= 0:
                if stats[0] >= max_nodes:
                    return 0
                if ti[d] >= tn[d]:
                    d -= 1
                    continue
                a = _descend(T, tm, ti, d, level, stats)
                c = d + 1
                path[d] = a
                out = T[c, K.OUTCOME]
                if out == -1:
                    continue
                end = out == 1 or (T[c, K.PHASE] == K.DRAW_PHASE and _unplayed(T[c]) < start)
                if end:
                    if out == 1:
                        won = e
                        won_len = c
                        break
                    if T[c, K.CURRENT] > stats[1]:
                        stats[1] = T[c, K.CURRENT]
                    if n < cap:
                        nxt[n, :] = T[c, :]
                        nscore[n] = evaluate(T[c], level)
                        nparent[n] = e
                        nlen[n] = c
                        for k in range(c):
                            nacts[n, k] = path[k]
                        n += 1
                    continue
                if c >= MAX_TURN:
                    continue
                tn[c] = _turn_moves(T[c], level, rules, tm[c], m, keys, child, inner, stats)
                ti[c] = 0
                d = c
            if won >= 0:
                break
        if won >= 0:
            return _write_line(line, path, won, won_len, layer, parent, acts, alen)
        stats[2] = layer
        if n == 0 or layer == layers - 1:
            return 0
        ncur = _keep_best(
            n, width, layer, z, hset, nxt, nscore, nparent, nacts, nlen, cur, parent, acts, alen
        )
    return 0


@njit(cache=True)
def _write_line(line, path, won, won_len, layer, parent, acts, alen):
    """The winning line into ``line``: the kept turns of the winner's ancestors (layers
    before ``layer``), then this turn's ``won_len`` moves in ``path``; its length. Run once
    a search, out of the hot loop."""
    total = 0
    e = won
    for back in range(layer - 1, -1, -1):
        total += alen[back, e]
        e = parent[back, e]
    total += won_len
    pos = total - won_len
    for k in range(won_len):
        line[pos + k] = path[k]
    e = won
    for back in range(layer - 1, -1, -1):
        ln = alen[back, e]
        pos -= ln
        for k in range(ln):
            line[pos + k] = acts[back, e, k]
        e = parent[back, e]
    return total


@njit(cache=True)
def _keep_best(
    n, width, layer, z, hset, nxt, nscore, nparent, nacts, nlen, cur, parent, acts, alen
):
    """The next layer: of the ``n`` turn ends found, the best-scored ``width`` distinct
    positions (by hash) into ``cur``, with their parents and moves in row ``layer`` of
    ``parent``/``acts``/``alen``; how many were kept. Run once a layer."""
    order = np.argsort(-nscore[:n], kind="mergesort")
    hset[:, :] = 0
    kept = 0
    for j in range(n):
        i = order[j]
        h1, h2 = position_hash(nxt[i], z)
        if not _insert_hash(hset, h1, h2):
            continue
        cur[kept, :] = nxt[i, :]
        parent[layer, kept] = nparent[i]
        alen[layer, kept] = nlen[i]
        for k in range(nlen[i]):
            acts[layer, kept, k] = nacts[i, k]
        kept += 1
        if kept == width:
            break
    return kept


@njit(cache=True)
def _turn_moves(s, level, rules, out, m, keys, child, inner, stats):
    """A turn's choices at ``s``: every legal move, except in the inner phases, where only the
    ``inner`` best by ``evaluate`` are followed."""
    n = _legal_moves(s, level, rules, out, m)
    if _INNER[s[K.PHASE]] and n > inner:
        _best_first(s, level, out, n, inner, keys, child, stats)
        n = inner
    return n
