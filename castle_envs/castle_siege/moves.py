"""Castle Siege move features, compiled: one row of features per legal move.

``move_rows(b, v, recent, capacity, feats, ids, valid, scratch_f, scratch_i)`` fills, for the
position in kernel rows ``b``/``v`` (``castle_siege.kernel``'s layout), ``feats`` (capacity,
``NUM_FEATURES``) float32, ``ids`` (capacity,) int64 action ids and ``valid`` (capacity,)
bool, and returns ``(legal moves, moves kept)``. The layout of a row is
``castle_envs.moves.SIEGE_FEATURES`` (documented in docs/move_features.md); the last 30
columns are exactly the linear scorer's features (``scoring``) divided by ``LINEAR_SCALE``,
so a linear scorer is one linear layer over these rows.

Candidates come in the linear scorer's order (legal plays by action id, then Regroup, then
*end battle phase*; recycles by card id; castles by index; discards by slot). When a
position has more legal moves than ``capacity`` (early Very Hard turns reach ~700 of the
1676 ids), the moves kept are the end of the battle phase, Regroup, captures, Royal
Assaults, Precision Strikes and Flush Sieges first, then the plays spending the fewest
cards with the least overkill; the kept moves stay in candidate order.

The Python env, the compiled single env and the batched env all call this kernel (the
Python env through ``vector.write_state`` into scratch rows), so the three views agree
exactly.
"""

from __future__ import annotations

import sys
from typing import Any

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
from castle_envs.castle_siege.rules import DISCARD, PRECISION, ROYAL, State
from castle_envs.castle_siege.scoring import (
    ATTACK,
    CAPTURE,
    NO_MOVE,
    ROYAL_MOVE,
    battle_kind,
    battle_setup,
    captures_next,
    recycle_terms,
    royals_held,
)
from castle_envs.core.jit import njit
from castle_envs.core.moves import KernelMoves

_RANK = RANK.astype(np.int64)
_SUIT = SUIT.astype(np.int64)

# --- the columns (names in castle_envs.moves.SIEGE_FEATURES) --------------------------------
KIND = 0  # 8 one-hot: end battle, regroup, attack, capture, royal attack, recycle,
# royal capture, discard
SPENT = 8  # cards spent / 5, rank sum / 65
RANK_HIST = 10  # 13: cards spent of rank r / 4
SUIT_COUNT = 23  # 4: cards spent of suit s / 5
TARGET = 27  # target rank / 13, suit one-hot (4), castle/column one-hot (4),
# column length / 44, depth from the newest / 44, is the newest,
# the column's castle rank / 13
TRIGGER = 40  # exact (Precision Strike), Flush Siege, clears the column,
# cards left in hand / 5, their rank sum / 65
LINEAR = 45  # 18 battle + 9 recycle + 3 royal features of the linear scorer, scaled
N_LINEAR = 30
NUM_FEATURES = LINEAR + N_LINEAR  # 75
#: the linear scorer's feature = this column times LINEAR_SCALE
LINEAR_SCALE = np.array(
    [
        1,
        1,
        1,
        1,
        5,
        65,
        64,
        13,
        1,
        1,
        1,
        1,
        1,
        5,
        5,
        5,
        1,
        5,
        12,
        13,
        1,
        4,
        1,
        1,
        1,
        1,
        1,
        44,
        572,
        13,
    ],
    dtype=np.float64,
)
_INV = (1.0 / LINEAR_SCALE).astype(np.float32)
MAX_CANDIDATES = 31 * NUM_CARDS + NUM_CARDS + 8  # more than any position has


@njit(cache=True)
def _spend(f: np.ndarray, b: np.ndarray, bits: int, held: int) -> tuple[int, int]:
    """Columns SPENT..SUIT_COUNT for the hand slots in ``bits``; returns (cards, rank sum)."""
    n = 0
    total = 0
    for i in range(held):
        if bits >> i & 1:
            card = b[HAND + i]
            r = _RANK[card]
            n += 1
            total += r
            f[RANK_HIST + r - 1] += 0.25
            f[SUIT_COUNT + _SUIT[card]] += 0.2
    f[SPENT] = n / 5.0
    f[SPENT + 1] = total / 65.0
    return n, total


@njit(cache=True)
def _target(f: np.ndarray, b: np.ndarray, v: np.ndarray, card: int, col: int, depth: int) -> None:
    """Columns TARGET..: the target card and, when ``col >= 0``, its column."""
    f[TARGET] = _RANK[card] / 13.0
    f[TARGET + 1 + _SUIT[card]] = 1.0
    if col >= 0:
        n = v[CLEN + col]
        f[TARGET + 5 + col] = 1.0
        f[TARGET + 9] = n / 44.0
        if depth >= 0:
            f[TARGET + 10] = depth / 44.0
            f[TARGET + 11] = 1.0 if depth == 0 else 0.0
        f[TARGET + 12] = _RANK[b[CASTLES + col]] / 13.0


@njit(cache=True)
def candidates(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    F: np.ndarray,
    IDS: np.ndarray,
    K: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> int:
    """Every legal move of the position: features in ``F`` (rows), action id in ``IDS``,
    keep-priority in ``K`` (lower is kept first); returns their number."""
    phase = v[PHASE]
    n = 0
    if phase == PRECISION:
        return _recycles(b, v, F, IDS, K)
    if phase == ROYAL:
        for c in range(4):
            if b[CAPTURED + c]:
                continue
            f = F[n]
            f[:] = 0.0
            f[KIND + 6] = 1.0
            ranks = 0
            for p in range(v[CLEN + c]):
                ranks += _RANK[b[COLS + c * NUM_CARDS + p]]
            _target(f, b, v, b[CASTLES + c], c, -1)
            f[LINEAR + 27] = v[CLEN + c] * _INV[27]
            f[LINEAR + 28] = ranks * _INV[28]
            f[LINEAR + 29] = _RANK[b[CASTLES + c]] * _INV[29]
            IDS[n] = ROYAL_BASE + c
            K[n] = 0
            n += 1
        return n
    if phase == DISCARD:
        held = v[HSIZE]
        for i in range(held):
            f = F[n]
            f[:] = 0.0
            f[KIND + 7] = 1.0
            _spend(f, b, 1 << i, held)
            IDS[n] = DISCARD_BASE + i
            K[n] = 0
            n += 1
        return n
    return _battle(b, v, recent, F, IDS, K, sums, sizes, one_suit, royal, tmp)


@njit(cache=True)
def _recycles(b: np.ndarray, v: np.ndarray, F: np.ndarray, IDS: np.ndarray, K: np.ndarray) -> int:
    has = np.zeros(14, np.bool_)
    for i in range(v[HSIZE]):
        has[_RANK[b[HAND + i]]] = True
    soon = 1.0 if v[DSIZE] <= 8 else 0.0
    n = 0
    for card in range(NUM_CARDS):
        if not b[DISCARDED + card]:
            continue
        f = F[n]
        f[:] = 0.0
        f[KIND + 5] = 1.0
        rank = _RANK[card]
        _target(f, b, v, card, -1, -1)
        dist, matches = recycle_terms(b, v, rank)
        is_royal = rank >= 11
        missing = is_royal and not has[rank]
        L = LINEAR + 18
        if dist < 99:
            f[L] = dist * _INV[18]
            f[L + 2] = 1.0 if dist == 0 else 0.0
        f[L + 1] = rank * _INV[19]
        f[L + 3] = matches * _INV[21]
        f[L + 4] = 1.0 if is_royal else 0.0
        f[L + 5] = 1.0 if missing else 0.0
        f[L + 6] = soon
        f[L + 7] = soon if dist == 0 else 0.0
        f[L + 8] = soon if missing else 0.0
        IDS[n] = RECYCLE_BASE + card
        K[n] = 0
        n += 1
    return n


@njit(cache=True)
def _depths(b: np.ndarray, v: np.ndarray, depth_of: np.ndarray) -> np.ndarray:
    """``depth_of[card]``: how many defenders lie above ``card`` in its column (-1: none)."""
    for card in range(NUM_CARDS):
        depth_of[card] = -1
    for c in range(4):
        m = v[CLEN + c]
        for p in range(m):
            depth_of[b[COLS + c * NUM_CARDS + p]] = m - 1 - p
    return depth_of


@njit(cache=True)
def _battle(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    F: np.ndarray,
    IDS: np.ndarray,
    K: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> int:
    (held, royals_in, column_of, attackable, open_castle, defenders, focus, target_col, late) = (
        battle_setup(b, v, recent, sums, sizes, one_suit, royal, tmp)
    )
    top = 1 << held
    hand_total = 0
    for i in range(held):
        hand_total += _RANK[b[HAND + i]]
    depth_of = _depths(b, v, tmp[188:240])
    n = 0
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
            f = F[n]
            f[:] = 0.0
            if capture:
                f[KIND + 3] = 1.0
            elif royal_move:
                f[KIND + 4] = 1.0
            else:
                f[KIND + 2] = 1.0
            _spend(f, b, bits, held)
            _target(f, b, v, t, col, -1 if capture else depth_of[t])
            exact = attack and total == rank
            flush_trigger = (not capture) and one_suit[bits] and v[DSIZE] > 0
            clear = (not capture) and v[CLEN + col] == 1
            f[TRIGGER] = 1.0 if exact else 0.0
            f[TRIGGER + 1] = 1.0 if flush_trigger else 0.0
            f[TRIGGER + 2] = 1.0 if clear else 0.0
            f[TRIGGER + 3] = (held - size) / 5.0
            f[TRIGGER + 4] = (hand_total - total) / 65.0
            # the linear scorer's battle features (castle_siege_linear.battle_features)
            L = LINEAR
            f[L] = 1.0 if capture else 0.0
            f[L + 1] = 1.0 if royal_move else 0.0
            f[L + 2] = 1.0 if royal_move and col == target_col else 0.0
            f[L + 3] = 1.0 if attack else 0.0
            f[L + 4] = size * _INV[4]
            f[L + 5] = total * _INV[5]
            if attack:
                f[L + 6] = (total - rank) * _INV[6]
            if not capture:
                f[L + 7] = rank * _INV[7]
            f[L + 8] = 1.0 if attack and col == focus else 0.0
            if attack and v[CLEN + col] == 1:
                f[L + 9] = 1.0
                if captures_next(sums, top, bits, _RANK[b[CASTLES + col]]):
                    f[L + 10] = 1.0
            f[L + 11] = 1.0 if exact else 0.0
            lin_flush = attack and not exact and size >= 2 and one_suit[bits] and v[DSIZE] > 0
            f[L + 12] = 1.0 if lin_flush else 0.0
            spent = 0 if royal_move else royals_in[bits]
            f[L + 13] = spent * _INV[13]
            f[L + 14] = spent * late * _INV[14]
            f[L + 15] = size * late * _INV[15]
            IDS[n] = (bits - 1) * NUM_CARDS + t
            special = capture or royal_move or exact or lin_flush
            K[n] = 0 if special else 1 + size * 100 + (total - rank)
            n += 1
    if not v[REGROUPED] and defenders == 0 and not can_capture:
        f = F[n]
        f[:] = 0.0
        f[KIND + 1] = 1.0
        _spend(f, b, top - 1, held)
        f[LINEAR + 16] = 1.0
        f[LINEAR + 17] = royals_held(b, v) * _INV[17]
        IDS[n] = REGROUP
        K[n] = -1
        n += 1
    f = F[n]
    f[:] = 0.0
    f[KIND] = 1.0
    f[TRIGGER + 3] = held / 5.0
    f[TRIGGER + 4] = hand_total / 65.0
    IDS[n] = END_BATTLE
    K[n] = -1
    return n + 1


class Scratch:
    """The work arrays of ``move_rows`` (allocated once per env, reused every call)."""

    def __init__(self) -> None:
        self.F = np.zeros((MAX_CANDIDATES, NUM_FEATURES), np.float32)
        self.IDS = np.zeros(MAX_CANDIDATES, np.int64)
        self.K = np.zeros(MAX_CANDIDATES, np.int64)
        self.sums = np.zeros(64, np.int64)
        self.sizes = np.zeros(64, np.int64)
        self.one_suit = np.zeros(32, np.bool_)
        self.royal = np.zeros(32, np.bool_)
        self.tmp = np.zeros(256, np.int64)

    def args(self) -> tuple:
        return (
            self.F,
            self.IDS,
            self.K,
            self.sums,
            self.sizes,
            self.one_suit,
            self.royal,
            self.tmp,
        )


@njit(cache=True)
def move_rows(
    b: np.ndarray,
    v: np.ndarray,
    recent: bool,
    feats: np.ndarray,
    ids: np.ndarray,
    valid: np.ndarray,
    F: np.ndarray,
    IDS: np.ndarray,
    K: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> tuple[int, int]:
    """Fill one env's move view; returns (legal moves, moves kept)."""
    capacity = feats.shape[0]
    n = candidates(b, v, recent, F, IDS, K, sums, sizes, one_suit, royal, tmp)
    feats[:] = 0.0
    ids[:] = 0
    valid[:] = False
    if n <= capacity:
        for j in range(n):
            feats[j] = F[j]
            ids[j] = IDS[j]
            valid[j] = True
        return n, n
    # too many: keep the lowest priorities, ties by candidate order, in candidate order
    order = np.argsort((K[:n] + 1) * MAX_CANDIDATES + np.arange(n), kind="mergesort")
    keep = np.sort(order[:capacity])
    for j in range(capacity):
        feats[j] = F[keep[j]]
        ids[j] = IDS[keep[j]]
        valid[j] = True
    return n, capacity


@njit(cache=True)
def move_rows_batch(
    cards: np.ndarray,
    ints: np.ndarray,
    recent: bool,
    feats: np.ndarray,
    ids: np.ndarray,
    valid: np.ndarray,
    legal: np.ndarray,
    F: np.ndarray,
    IDS: np.ndarray,
    K: np.ndarray,
    sums: np.ndarray,
    sizes: np.ndarray,
    one_suit: np.ndarray,
    royal: np.ndarray,
    tmp: np.ndarray,
) -> int:
    """``move_rows`` for every row of a batch; ``legal[i]`` gets env i's legal move count."""
    kept = 0
    for i in range(cards.shape[0]):
        n, k = move_rows(
            cards[i],
            ints[i],
            recent,
            feats[i],
            ids[i],
            valid[i],
            F,
            IDS,
            K,
            sums,
            sizes,
            one_suit,
            royal,
            tmp,
        )
        legal[i] = n
        kept += k
    return kept


# --- the view (feature names, and the rows of a state, an env or a batch) --------------

SIEGE_FEATURES = (
    # move kind, one-hot
    "end_battle",
    "regroup",
    "attack",
    "capture",
    "royal_attack",
    "recycle",
    "royal_capture",
    "discard",
    # what it spends (plays, Regroup: the whole hand, discard: the card)
    "cards_spent/5",
    "rank_sum_spent/65",
    *[
        f"spent_rank_{r}/4"
        for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    ],
    *[f"spent_suit_{s}/5" for s in ("spades", "clubs", "hearts", "diamonds")],
    # what it targets (attacked defender, captured castle, recycled card, royal castle)
    "target_rank/13",
    *[f"target_suit_{s}" for s in ("spades", "clubs", "hearts", "diamonds")],
    *[f"target_column_{c}" for c in range(4)],
    "column_length/44",
    "target_depth_from_newest/44",
    "target_is_newest",
    "column_castle_rank/13",
    # what it triggers
    "precision_strike",
    "flush_siege",
    "clears_column",
    "hand_left/5",
    "rank_sum_left/65",
    # the linear scorer's features (``scoring``), each / LINEAR_SCALE
    *[
        f"linear.battle.{n}"
        for n in (
            "capture",
            "royal",
            "royal_own_column",
            "attack",
            "cards",
            "rank_spent",
            "overkill",
            "target_rank",
            "focus",
            "clear",
            "capture_next",
            "precision",
            "flush",
            "royals_spent",
            "royals_spent_late",
            "cards_late",
            "regroup",
            "regroup_royals",
        )
    ],
    *[
        f"linear.recycle.{n}"
        for n in (
            "castle_distance",
            "rank",
            "castle_exact",
            "defender_match",
            "royal_rank",
            "royal_missing",
            "soon",
            "soon_castle_exact",
            "soon_royal_missing",
        )
    ],
    *[f"linear.royal.{n}" for n in ("defenders", "defender_ranks", "castle_rank")],
)


class SiegeMoves(KernelMoves):
    """Castle Siege move views from a rules ``State`` or from kernel rows."""

    game = "castle-siege"

    def __init__(self, capacity: int = 256) -> None:
        from castle_envs.castle_siege import kernel as K
        from castle_envs.core.batched import state_dtype
        from castle_envs.core.jit import HAVE_NUMBA

        super().__init__(capacity, NUM_FEATURES)
        self._M = sys.modules[__name__]
        self.scratch = Scratch()
        self._b = np.zeros(K.CARD_WORDS, state_dtype())
        self._v = np.zeros(K.INT_WORDS, np.int32 if HAVE_NUMBA else np.int64)

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        return SIEGE_FEATURES

    def observation(self, state: State) -> np.ndarray:
        from castle_envs.castle_siege.observation import encode

        return encode(state)

    def from_rows(self, b: np.ndarray, v: np.ndarray, recent: bool, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel rows; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        n, _ = self._M.move_rows(
            b, v, recent, out["move_features"], out["move_ids"], valid, *self.scratch.args()
        )
        return int(n)

    def from_state(self, state: State, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castle_siege.rules.State`` (and its legal move count)."""
        from castle_envs.castle_siege.vector import write_state

        out = self.empty() if out is None else out
        if state.outcome:  # the game is over: no legal move
            for a in out.values():
                a[:] = 0
            return out, 0
        write_state(
            self._b,
            self._v,
            state,
            state.rows,
            state.rule_options(),
        )
        return out, self.from_rows(self._b, self._v, state.attack == "most_recent", out)

    def from_env(self, env: Any, out: dict) -> int:
        """Fill ``out`` from the compiled single env ``env`` (``CompiledCastleSiegeEnv``)."""
        return self.from_rows(env._b, env._v, env.recent, out)

    def batch(
        self, cards: np.ndarray, ints: np.ndarray, recent: bool, out: dict, legal: np.ndarray
    ) -> None:
        self._batch((cards, ints, recent), out, legal)
