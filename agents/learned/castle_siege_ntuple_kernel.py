"""Castle Siege afterstate value of n-tuple tables, learned by TD(lambda): the compiled part.

The value of a position after a move, seen from the player's seat and before any card the
move draws is known (the *afterstate*, as in Szubert and Jaskowski's 2048 learner), is
``sigmoid(sum of table entries)``: each table is indexed by a small tuple of what the player
knows (``features``), and a position looks up about a hundred entries. The player plays the
legal move whose afterstate is worth most (``best_move``): one evaluation per legal move, no
search.

Why the afterstate, and how it hides the draws: applying a move through the rules
(``kernel.apply`` on a copy of the rows) may draw unseen cards (a Flush Siege, Regroup, the
end of turn's new defenders and reinforcement). Those cards' identities are what the player
does not know yet, so ``features`` reads every card that was unseen before the move
(``mark_unseen``) and sits now in the hand or a column as a *pending* card: counted (so many
cards still to come to the hand, so many new defenders in column c), never named. The unseen
cards are read as a set (their ranks counted), never in their deck order, so two worlds that
differ only in the order of the unseen cards give every move the same value.

Learning (``play_games``): self-play of the greedy policy (with ``eps`` random moves), each
game's afterstates kept with their features, and at the game's end every one moved towards
its lambda-return (the end's value: 1 for a win, else ``shaped`` times the share of castles
captured) by the logistic loss's gradient, ``lr / features`` a feature.
"""

from __future__ import annotations

import numpy as np
from castle_envs.agents.solvers.castle_siege_nested_kernel import Scratch, candidates

from castle_envs.castle_siege.actions import (
    NUM_ACTIONS,
    RECYCLE_BASE,
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
    MASK_WIDTH,
    NEED,
    OUTCOME,
    PHASE,
    RECYCLED,
    REGROUPED,
    apply,
    compute_mask,
    load_deal,
)
from castle_envs.core.jit import njit

_RANK = RANK.astype(np.int64)
_SUIT = SUIT.astype(np.int64)

# --- the tables: (name, size); ``features`` writes one index per lookup ---------------------
TABLES = (
    ("clock", 5 * 45 * 16),  # castles taken x deck size x defenders standing (capped 15)
    ("castle_deck", 13 * 8 * 12),  # a standing castle: rank x defenders (7+) x deck/4
    ("castle_exact", 13 * 6 * 5 * 2),  # rank x fewest hand cards summing to it x defenders x draws
    ("column", 5 * 14 * 14 * 2),  # known defenders x strongest x rank sum/3 x a new one coming
    ("defender", 13 * 6 * 2 * 5),  # rank x fewest hand cards beating it x exact x column size
    ("hand", 14**5),  # the hand's ranks, sorted
    ("suits", 6 * 6 * 6),  # most cards of one suit x hand size x cards still to draw
    ("royal", 2 * 4 * 13 * 12),  # J Q K of three suits held x J/Q/K ranks held x unseen x deck/4
    ("castle_unseen", 13 * 5 * 4 * 12),  # rank x unseen cards of that rank x defenders x deck/4
    ("recycled", 11 * 21 * 14),  # recycled in deck x unseen in deck x next recycled rank
    ("phase", 4 * 2 * 6 * 2),  # phase x Regroup used x cards to draw x any defender standing
    ("castle_pair", 13 * 13 * 13 * 2),  # castle rank x two hand ranks x column empty
    ("castle_recycled", 13 * 3 * 13 * 3),  # castle rank x recycled place (3) x its rank x defenders
    ("lengths", 8**4 * 12),  # the standing columns' lengths, sorted (7+; 4 captured: 0) x deck/4
    ("clear_capture", 13 * 6 * 2 * 3),  # castle rank x fewest cards beating its one defender and
    # capturing it exactly with the rest (0 none) x draws to come x known defenders (0, 1, 2+)
    ("castle_discard", 13 * 4 * 4),  # castle rank x discarded cards of that rank x defenders
)
OFFSETS = np.cumsum([0] + [n for _, n in TABLES]).astype(np.int64)
N_WEIGHTS = int(OFFSETS[-1])
(
    T_CLOCK,
    T_CASTLE_DECK,
    T_CASTLE_EXACT,
    T_COLUMN,
    T_DEFENDER,
    T_HAND,
    T_SUITS,
    T_ROYAL,
    T_CASTLE_UNSEEN,
    T_RECYCLED,
    T_PHASE,
    T_CASTLE_PAIR,
    T_CASTLE_RECYCLED,
    T_LENGTHS,
    T_CLEAR_CAPTURE,
    T_CASTLE_DISCARD,
) = (int(o) for o in OFFSETS[:-1])
MAX_DEFENDER_LOOKUPS = 32
MAX_FEATURES = 128  # lookups a position makes at most (about 100)
MAX_STEPS = 1024  # decisions a game keeps for learning (games take about 100)
WORK = 4 * NUM_CARDS + 64  # scratch words of ``features``


@njit(cache=True)
def mark_unseen(b: np.ndarray, v: np.ndarray, unseen_flag: np.ndarray, ranks: np.ndarray) -> None:
    """Flag the cards the player has not seen (those in the deck that were not recycled to
    its bottom: a set) and count them by rank (``ranks[1..13]``)."""
    for c in range(NUM_CARDS):
        unseen_flag[c] = 0
    for r in range(14):
        ranks[r] = 0
    head = v[HEAD]
    for p in range(v[DSIZE]):
        card = b[DECK + (head + p) % NUM_CARDS]
        if not b[RECYCLED + card]:
            unseen_flag[card] = 1
            ranks[_RANK[card]] += 1


@njit(cache=True)
def sorted_known_hand(
    b: np.ndarray, v: np.ndarray, unseen_flag: np.ndarray, hand_r: np.ndarray, hand_s: np.ndarray
) -> tuple[int, int]:
    """The hand cards the player knows, sorted by rank into ``hand_r``/``hand_s`` (at most
    five); returns (how many known, how many pending: drawn by the move, still unseen)."""
    known = 0
    pending_hand = 0
    for i in range(v[HSIZE]):
        card = b[HAND + i]
        if unseen_flag[card]:
            pending_hand += 1
        elif known < 5:
            r = _RANK[card]
            j = known
            while j > 0 and hand_r[j - 1] > r:
                hand_r[j] = hand_r[j - 1]
                hand_s[j] = hand_s[j - 1]
                j -= 1
            hand_r[j] = r
            hand_s[j] = _SUIT[card]
            known += 1
    return known, pending_hand


@njit(cache=True)
def fewest_cards(hand_r: np.ndarray, known: int, ge: np.ndarray, eq: np.ndarray) -> None:
    """The fewest known hand cards reaching (``ge[r]``) or summing exactly to (``eq[r]``)
    each rank r of 1..13 (0: none can)."""
    for r in range(14):
        ge[r] = 0
        eq[r] = 0
    for mask in range(1, 1 << known):
        total = 0
        cards = 0
        for i in range(known):
            if mask >> i & 1:
                total += hand_r[i]
                cards += 1
        for r in range(1, min(total, 13) + 1):
            if ge[r] == 0 or cards < ge[r]:
                ge[r] = cards
        if total <= 13 and (eq[total] == 0 or cards < eq[total]):
            eq[total] = cards


@njit(cache=True)
def recycled_ranks(b: np.ndarray, v: np.ndarray, rec: np.ndarray) -> int:
    """The ranks of the recycled cards in the deck, in the order they will be drawn (the
    first 16, into ``rec``); returns how many there are."""
    n_rec = 0
    head = v[HEAD]
    for p in range(v[DSIZE]):
        card = b[DECK + (head + p) % NUM_CARDS]
        if b[RECYCLED + card]:
            if n_rec < 16:
                rec[n_rec] = _RANK[card]
            n_rec += 1
    return n_rec


@njit(cache=True)
def fewest_clear_capture(hand_r: np.ndarray, known: int, need: int, castle_rank: int) -> int:
    """The fewest known hand cards that beat a lone defender of rank ``need`` and capture
    the castle exactly with the rest (two disjoint subsets); 0 when none can."""
    clear = 0
    full = (1 << known) - 1
    for sa in range(1, full + 1):
        ta = 0
        ca = 0
        for i in range(known):
            if sa >> i & 1:
                ta += hand_r[i]
                ca += 1
        if ta < need:
            continue
        rest = full & ~sa
        sb = rest
        while sb > 0:
            tb = 0
            cb = 0
            for i in range(known):
                if sb >> i & 1:
                    tb += hand_r[i]
                    cb += 1
            if tb == castle_rank and (clear == 0 or ca + cb < clear):
                clear = ca + cb
            sb = (sb - 1) & rest
    return clear


@njit(cache=True)
def castle_lookups(
    b: np.ndarray,
    v: np.ndarray,
    c: int,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    known: int,
    pending_hand: int,
    n_rec: int,
    db: int,
    idx: np.ndarray,
    n: int,
    n_def: int,
) -> tuple[int, int]:
    """The lookups of standing castle ``c`` and its column, appended to ``idx`` from ``n``
    (``work``: the hand, ``fewest_cards`` and the recycled ranks as ``features`` laid them
    out); returns the new ``n`` and how many defender lookups were made in all."""
    hand_r = work[0:6]
    ge = work[16:30]
    eq = work[30:44]
    rec = work[44:60]
    rc = _RANK[b[CASTLES + c]]
    length = v[CLEN + c]
    base = COLS + c * NUM_CARDS
    n_known = 0
    top = 0
    total = 0
    for p in range(length):
        card = b[base + p]
        if unseen_flag[card]:
            continue
        r = _RANK[card]
        n_known += 1
        total += r
        top = max(top, r)
    pending_col = length - n_known
    idx[n] = T_CASTLE_DECK + ((rc - 1) * 8 + min(length, 7)) * 12 + db
    idx[n + 1] = (
        T_CASTLE_EXACT + (((rc - 1) * 6 + eq[rc]) * 5 + min(length, 4)) * 2 + (pending_hand > 0)
    )
    idx[n + 2] = (
        T_COLUMN + ((min(n_known, 4) * 14 + top) * 14 + min(total, 41) // 3) * 2 + (pending_col > 0)
    )
    idx[n + 3] = T_CASTLE_UNSEEN + ((rc - 1) * 5 + ranks[rc]) * 4 * 12 + min(length, 3) * 12 + db
    n += 4
    for p in range(length):
        card = b[base + p]
        if unseen_flag[card] or n_def >= MAX_DEFENDER_LOOKUPS:
            continue
        r = _RANK[card]
        idx[n] = T_DEFENDER + (((r - 1) * 6 + ge[r]) * 2 + (eq[r] > 0)) * 5 + min(length, 4)
        n += 1
        n_def += 1
    clear = fewest_clear_capture(hand_r, known, top, rc) if n_known == 1 else 0
    idx[n] = (
        T_CLEAR_CAPTURE
        + (((rc - 1) * 6 + min(clear, 5)) * 2 + (pending_hand > 0)) * 3
        + min(n_known, 2)
    )
    n += 1
    in_discard = 0
    for s_ in range(4):
        in_discard += b[DISCARDED + s_ * 13 + rc - 1]
    idx[n] = T_CASTLE_DISCARD + ((rc - 1) * 4 + min(in_discard, 3)) * 4 + min(length, 3)
    n += 1
    empty = length == 0
    for i in range(known):
        for j in range(i + 1, known):
            idx[n] = (
                T_CASTLE_PAIR + (((rc - 1) * 13 + hand_r[i] - 1) * 13 + hand_r[j] - 1) * 2 + empty
            )
            n += 1
    for k in range(min(n_rec, 3)):
        idx[n] = T_CASTLE_RECYCLED + (((rc - 1) * 3 + k) * 13 + rec[k] - 1) * 3 + min(length, 2)
        n += 1
    return n, n_def


@njit(cache=True)
def lengths_code(b: np.ndarray, v: np.ndarray, lens: np.ndarray) -> int:
    """The standing columns' lengths (capped at 7), sorted, as one base-8 number of four
    digits (a captured castle's digit is 0)."""
    m = 0
    for c in range(4):
        if not b[CAPTURED + c]:
            x = min(v[CLEN + c], 7)
            j = m
            while j > 0 and lens[j - 1] > x:
                lens[j] = lens[j - 1]
                j -= 1
            lens[j] = x
            m += 1
    code = 0
    for k in range(4):
        code = code * 8 + (lens[k] if k < m else 0)
    return code


@njit(cache=True)
def hand_lookups(
    hand_r: np.ndarray,
    hand_s: np.ndarray,
    known: int,
    pending_hand: int,
    ranks: np.ndarray,
    db: int,
    idx: np.ndarray,
    n: int,
) -> int:
    """The hand's own lookups (its sorted ranks, its suits, its royals against the unseen
    ones), appended to ``idx`` from ``n``; returns the new ``n``."""
    code = 0
    for i in range(5):
        code = code * 14 + (hand_r[i] if i < known else 0)
    idx[n] = T_HAND + code
    most = 0
    for s in range(4):
        count = 0
        for i in range(known):
            count += hand_s[i] == s
        most = max(most, count)
    idx[n + 1] = T_SUITS + (most * 6 + known) * 6 + min(pending_hand, 5)
    triple = 0  # a J, Q and K of three different suits
    for i in range(known):
        if hand_r[i] != 11:
            continue
        for j in range(known):
            if hand_r[j] != 12 or hand_s[j] == hand_s[i]:
                continue
            for k in range(known):
                if hand_r[k] == 13 and hand_s[k] != hand_s[i] and hand_s[k] != hand_s[j]:
                    triple = 1
    held = 0
    for r in range(11, 14):
        for i in range(known):
            if hand_r[i] == r:
                held += 1
                break
    unseen_royal = ranks[11] + ranks[12] + ranks[13]
    idx[n + 2] = T_ROYAL + ((triple * 4 + held) * 13 + unseen_royal) * 12 + db
    return n + 3


@njit(cache=True)
def features(
    b: np.ndarray,
    v: np.ndarray,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    idx: np.ndarray,
) -> int:
    """The table entries the afterstate in ``b``/``v`` looks up, into ``idx``; returns how
    many. ``unseen_flag``/``ranks``: ``mark_unseen`` of the position before the move (cards
    flagged there and now in the hand or a column were drawn by the move: pending)."""
    deck = v[DSIZE]
    db = min(deck, 47) // 4
    hand_r = work[0:6]
    hand_s = work[6:12]
    known, pending_hand = sorted_known_hand(b, v, unseen_flag, hand_r, hand_s)
    fewest_cards(hand_r, known, work[16:30], work[30:44])
    rec = work[44:60]
    n_rec = recycled_ranks(b, v, rec)
    captured = 0
    standing = 0
    for c in range(4):
        if b[CAPTURED + c]:
            captured += 1
        else:
            standing += v[CLEN + c]
    n = 0
    n_def = 0
    for c in range(4):
        if not b[CAPTURED + c]:
            n, n_def = castle_lookups(
                b, v, c, unseen_flag, ranks, work, known, pending_hand, n_rec, db, idx, n, n_def
            )
    idx[n] = T_LENGTHS + lengths_code(b, v, work[60:64]) * 12 + db
    idx[n + 1] = T_CLOCK + (captured * 45 + min(deck, 44)) * 16 + min(standing, 15)
    n = hand_lookups(hand_r, hand_s, known, pending_hand, ranks, db, idx, n + 2)
    idx[n] = (
        T_RECYCLED + (min(n_rec, 10) * 21 + min(deck - n_rec, 20)) * 14 + (rec[0] if n_rec else 0)
    )
    idx[n + 1] = (
        T_PHASE + ((v[PHASE] * 2 + v[REGROUPED]) * 6 + min(pending_hand, 5)) * 2 + (standing > 0)
    )
    return n + 2


@njit(cache=True)
def value_of(weights: np.ndarray, idx: np.ndarray, n: int) -> float:
    z = 0.0
    for k in range(n):
        z += weights[idx[k]]
    return 1.0 / (1.0 + np.exp(-z))


@njit(cache=True)
def end_value(b: np.ndarray, v: np.ndarray, shaped: float) -> float:
    """A finished game's value: 1 won, else ``shaped`` times the share of castles taken."""
    if v[OUTCOME] == 1:
        return 1.0
    taken = b[CAPTURED] + b[CAPTURED + 1] + b[CAPTURED + 2] + b[CAPTURED + 3]
    return shaped * taken / 4.0


@njit(cache=True)
def worth_trying(b: np.ndarray, v: np.ndarray, action: int) -> bool:
    """``prune``'s filter: every move but an attack that carries a card it does not need
    (some card could be left out and the rest still beat the defender) without being a
    Precision Strike (exact), a Flush Siege (two or more cards of one suit) or a Royal
    Assault (J, Q, K): such a card is spent for nothing."""
    if action >= RECYCLE_BASE:
        return True
    subset = action // NUM_CARDS + 1
    target = action % NUM_CARDS
    for c in range(4):
        if b[CASTLES + c] == target:
            return True  # a capture is exact
    need = _RANK[target]
    total = 0
    low = 99
    cards = 0
    suit = -1
    one_suit = True
    jack = queen = king = False
    for i in range(5):
        if subset >> i & 1:
            card = b[HAND + i]
            r = _RANK[card]
            total += r
            low = min(low, r)
            if cards and _SUIT[card] != suit:
                one_suit = False
            suit = _SUIT[card]
            cards += 1
            jack |= r == 11
            queen |= r == 12
            king |= r == 13
    if total == need or (cards >= 2 and one_suit) or (jack and queen and king):
        return True
    return total - low < need


@njit(cache=True)
def best_move(
    b: np.ndarray,
    v: np.ndarray,
    weights: np.ndarray,
    recent: bool,
    leave: bool,
    prune: bool,
    shaped: float,
    eps: float,
    bb: np.ndarray,
    vv: np.ndarray,
    mask: np.ndarray,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    idx: np.ndarray,
    values: np.ndarray,
) -> tuple[int, float, int]:
    """The legal move of ``b``/``v`` whose afterstate is worth most (ties: the first; with
    probability ``eps`` a uniformly random legal move, numba's generator), its value and how
    many table entries its afterstate looks up (``idx`` holds them; 0 for a finished game).
    ``values[a]`` gets every evaluated move's value. The rows are not changed."""
    compute_mask(b, v, recent, mask)
    mark_unseen(b, v, unseen_flag, ranks)
    legal = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            legal += 1
    pick = -1
    if eps > 0.0 and np.random.random() < eps:
        pick = np.random.randint(legal)
    best = -1
    best_v = -1.0
    seen = 0
    for a in range(NUM_ACTIONS):
        if not mask[a]:
            continue
        seen += 1
        if pick >= 0 and seen - 1 != pick:
            continue
        if prune and pick < 0 and not worth_trying(b, v, a):
            continue
        val, nf = look(b, v, a, weights, leave, shaped, bb, vv, unseen_flag, ranks, work, idx)
        values[a] = val
        if val > best_v:
            best_v = val
            best = a
    val, nf = look(b, v, best, weights, leave, shaped, bb, vv, unseen_flag, ranks, work, idx)
    return best, best_v, nf


@njit(cache=True)
def afterstate(
    b: np.ndarray, v: np.ndarray, action: int, leave: bool, bb: np.ndarray, vv: np.ndarray
) -> None:
    """``bb``/``vv``: the position of ``b``/``v`` after ``action`` (the rows unchanged)."""
    for k in range(NEED):  # the position; the rest of a row is the kernel's scratch
        bb[k] = b[k]
    for k in range(INT_WORDS):
        vv[k] = v[k]
    apply(bb, vv, action, leave)


@njit(cache=True)
def look(
    b: np.ndarray,
    v: np.ndarray,
    action: int,
    weights: np.ndarray,
    leave: bool,
    shaped: float,
    bb: np.ndarray,
    vv: np.ndarray,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    idx: np.ndarray,
) -> tuple[float, int]:
    """The value of ``action``'s afterstate and how many table entries it looks up (into
    ``idx``; 0 when the move ends the game). ``unseen_flag``/``ranks``: ``mark_unseen``."""
    afterstate(b, v, action, leave, bb, vv)
    if vv[OUTCOME] != 0:
        return end_value(bb, vv, shaped), 0
    nf = features(bb, vv, unseen_flag, ranks, work, idx)
    return value_of(weights, idx, nf), nf


@njit(cache=True)
def update(
    weights: np.ndarray,
    feats: np.ndarray,
    nfeat: np.ndarray,
    targets: np.ndarray,
    steps: int,
    lr: float,
) -> float:
    """Move each of ``steps`` afterstates' value towards its target by the logistic loss's
    gradient (``lr`` shared among its lookups); returns the summed squared error before."""
    err = 0.0
    for t in range(steps):
        n = nfeat[t]
        if n == 0:
            continue
        row = feats[t]
        delta = targets[t] - value_of(weights, row, n)
        err += delta * delta
        step = lr * delta / n
        for k in range(n):
            weights[row[k]] += step
    return err


@njit(cache=True)
def play_games(
    decks: np.ndarray,
    rows: np.ndarray,
    weights: np.ndarray,
    learn: bool,
    lr: float,
    lam: float,
    eps: float,
    shaped: float,
    prune: bool,
    seed: int,
    guide: float,
    guide_weights: np.ndarray,
    x: Scratch,
    won: np.ndarray,
    stats: np.ndarray,
) -> None:
    """Play a game from each deck (``decks[g]``, top first, ``rows[g]`` defender rows) by the
    greedy policy; with ``learn``, move the weights after each game (TD(lambda), the module
    docstring), and play a game with probability ``guide`` by the linear move scorer
    ``guide_weights`` instead (``x``: its scratch; ``eps`` random moves still), whose games
    show the value what play that wins looks like before its own greedy play wins any. ``won[g]``: the game was won. ``stats``: [decisions, summed squared TD
    error, afterstates learned from]."""
    np.random.seed(seed)
    b = np.zeros(CARD_WORDS, np.int8)
    v = np.zeros(INT_WORDS, np.int32)
    bb = np.zeros(CARD_WORDS, np.int8)
    vv = np.zeros(INT_WORDS, np.int32)
    mask = np.zeros(MASK_WIDTH, np.bool_)
    unseen_flag = np.zeros(NUM_CARDS, np.int64)
    ranks = np.zeros(14, np.int64)
    work = np.zeros(WORK, np.int64)
    idx = np.zeros(MAX_FEATURES, np.int64)
    values = np.zeros(NUM_ACTIONS, np.float64)
    feats = np.zeros((MAX_STEPS, MAX_FEATURES), np.int64)
    nfeat = np.zeros(MAX_STEPS, np.int64)
    vals = np.zeros(MAX_STEPS + 1, np.float64)
    targets = np.zeros(MAX_STEPS, np.float64)
    for g in range(decks.shape[0]):
        load_deal(b, v, rows[g], decks[g])
        steps = 0
        guided = learn and guide > 0.0 and np.random.random() < guide
        while v[OUTCOME] == 0:
            if guided and not (eps > 0.0 and np.random.random() < eps):
                candidates(b, v, False, guide_weights, 2, x.cand[0], x)  # its best first
                a = x.cand[0, 0]
                mark_unseen(b, v, unseen_flag, ranks)
                val, nf = look(
                    b, v, a, weights, False, shaped, bb, vv, unseen_flag, ranks, work, idx
                )
            else:
                a, val, nf = best_move(
                    b, v, weights, False, False, prune, shaped, eps if learn else 0.0,
                    bb, vv, mask, unseen_flag, ranks, work, idx, values,
                )  # fmt: skip
            if steps < MAX_STEPS:
                for k in range(nf):
                    feats[steps, k] = idx[k]
                nfeat[steps] = nf
                vals[steps] = val
                steps += 1
            apply(b, v, a, False)
        stats[0] += steps
        won[g] = v[OUTCOME] == 1
        if not learn:
            continue
        # lambda-returns, last decision first: G_t = (1 - lam) V_{t+1} + lam G_{t+1}
        end = end_value(b, v, shaped)
        g_next = end
        for t in range(steps - 1, -1, -1):
            v_next = vals[t + 1] if t + 1 < steps else end
            g_next = (1.0 - lam) * v_next + lam * g_next if t + 1 < steps else end
            targets[t] = g_next
        stats[1] += update(weights, feats, nfeat, targets, steps, lr)
        for t in range(steps):
            stats[2] += nfeat[t] > 0


@njit(cache=True)
def best_reply(
    b: np.ndarray,
    v: np.ndarray,
    weights: np.ndarray,
    recent: bool,
    leave: bool,
    prune: bool,
    shaped: float,
    bb: np.ndarray,
    vv: np.ndarray,
    mask: np.ndarray,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    idx: np.ndarray,
) -> float:
    """The value of the best next move's afterstate from ``b``/``v`` (the player's turn
    goes on), as ``best_move`` rates it: 1-ply from here."""
    compute_mask(b, v, recent, mask)
    mark_unseen(b, v, unseen_flag, ranks)
    best_v = -1.0
    for a in range(NUM_ACTIONS):
        if not mask[a] or (prune and not worth_trying(b, v, a)):
            continue
        val, nf = look(b, v, a, weights, leave, shaped, bb, vv, unseen_flag, ranks, work, idx)
        best_v = max(best_v, val)
    return best_v


@njit(cache=True)
def best_move2(
    b: np.ndarray,
    v: np.ndarray,
    weights: np.ndarray,
    recent: bool,
    leave: bool,
    prune: bool,
    shaped: float,
    rows: np.ndarray,
    ints: np.ndarray,
    masks: np.ndarray,
    unseen_flag: np.ndarray,
    ranks: np.ndarray,
    work: np.ndarray,
    idx: np.ndarray,
    values: np.ndarray,
) -> int:
    """A two-ply player (a small search, not the value alone): a move that draws no unseen
    card leaves a position the player knows whole, where it moves again, so the move is
    worth its best next move's afterstate (``best_reply``); a move that draws (the turn's
    end, a Flush Siege, Regroup) is worth its afterstate's value, which already averages
    over the draw. Ends of games are worth ``end_value``. ``rows``/``ints``/``masks``:
    scratch of two positions (``CARD_WORDS``/``INT_WORDS``/``MASK_WIDTH`` columns);
    ``unseen_flag``/``ranks``: two rows each. ``values[a]``: every rated move's value.
    Returns the best move (the first of equals). The rows are not changed."""
    compute_mask(b, v, recent, masks[0])
    mark_unseen(b, v, unseen_flag[0], ranks[0])
    bb, vv = rows[0], ints[0]
    best = -1
    best_v = -2.0
    for a in range(NUM_ACTIONS):
        if not masks[0, a] or (prune and not worth_trying(b, v, a)):
            continue
        afterstate(b, v, a, leave, bb, vv)
        if vv[OUTCOME] != 0:
            val = end_value(bb, vv, shaped)
        elif vv[DSIZE] < v[DSIZE]:
            nf = features(bb, vv, unseen_flag[0], ranks[0], work, idx)
            val = value_of(weights, idx, nf)
        else:
            val = best_reply(
                bb, vv, weights, recent, leave, prune, shaped, rows[1], ints[1], masks[1],
                unseen_flag[1], ranks[1], work, idx,
            )  # fmt: skip
        values[a] = val
        if val > best_v:
            best_v = val
            best = a
    return best


@njit(cache=True)
def play_games2(
    decks: np.ndarray,
    rows: np.ndarray,
    weights: np.ndarray,
    prune: bool,
    shaped: float,
    won: np.ndarray,
) -> None:
    """Play a game from each deck (``decks[g]``, ``rows[g]`` defender rows) by
    ``best_move2``; ``won[g]``: the game was won. No learning."""
    b = np.zeros(CARD_WORDS, np.int8)
    v = np.zeros(INT_WORDS, np.int32)
    scratch_rows = np.zeros((2, CARD_WORDS), np.int8)
    ints = np.zeros((2, INT_WORDS), np.int32)
    masks = np.zeros((2, MASK_WIDTH), np.bool_)
    unseen_flag = np.zeros((2, NUM_CARDS), np.int64)
    ranks = np.zeros((2, 14), np.int64)
    work = np.zeros(WORK, np.int64)
    idx = np.zeros(MAX_FEATURES, np.int64)
    values = np.zeros(NUM_ACTIONS, np.float64)
    for g in range(decks.shape[0]):
        load_deal(b, v, rows[g], decks[g])
        while v[OUTCOME] == 0:
            a = best_move2(
                b, v, weights, False, False, prune, shaped, scratch_rows, ints, masks,
                unseen_flag, ranks, work, idx, values,
            )  # fmt: skip
            apply(b, v, a, False)
        won[g] = v[OUTCOME] == 1
