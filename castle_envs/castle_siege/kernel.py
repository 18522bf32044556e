"""Castle Siege's rules, observation and mask: compiled per-env kernels over flat arrays.

These kernels are the game's rules, written once: ``rules.State`` is a Python view over one
row of each array, ``CastleSiegeEnv`` steps through it, and the batched env, the solver,
the nested search and the search agents run the same functions over many rows. A batch of
games is three arrays, one row per env, so the whole batch is a few contiguous blocks that
a kernel walks without allocating:

- ``cards`` (N, ``CARD_WORDS``) int8: the deck ring buffer, the sorted hand, the four
  defender columns (oldest first), the castle cards, and per-card flags (captured castles,
  discard pile, out of the game, recycled to the deck's bottom), and 84 bytes of scratch for
  the mask. Empty places hold ``NO_CARD``.
- ``ints`` (N, ``INT_WORDS``) int32: deck head and size, hand size, column lengths, phase,
  Regroup used, turn, outcome, steps this episode, event counters, and the rules option
  ``victory`` (``STRICT``: the ``attack``/``defeated`` options are kernel arguments, this
  one lives in the row so that ``apply``'s callers need not pass it).
- ``rng`` (N, 6) uint64: each env's PCG64 generator (``core.pcg64``), so deals match the
  single env.

``tests/reference/castle_siege.py`` is an independent plain-Python implementation of the
same rules (the package's rules before these kernels took over); ``tests/castle_siege/
test_one_rules.py`` and ``tests/vector`` play thousands of games through both and compare
every mask, observation, reward and saved state.
"""

from __future__ import annotations

import numpy as np

from castle_envs.castle_siege import layout as L

from ..core import pcg64
from ..core.jit import njit, unowned
from ..core.kernel_common import BatchStep, first_illegal_of, penalised, xorshift_star
from .actions import (
    DISCARD_BASE,
    END_BATTLE,
    NUM_ACTIONS,
    NUM_SUBSETS,
    RECYCLE_BASE,
    REGROUP,
    ROYAL_BASE,
)
from .cards import NUM_CARDS, RANK, SUIT
from .layout import BATTLE, DISCARD, NO_CARD, PRECISION, ROYAL

# --- layout of a row of ``cards`` ---------------------------------------------------------
DECK = 0
HAND = DECK + NUM_CARDS  # 7 entries: 6 cards at most, one spare for sorting
COLS = HAND + 7  # 4 x 52
CASTLES = COLS + 4 * NUM_CARDS
CAPTURED = CASTLES + 4
DISCARDED = CAPTURED + 4
OUT = DISCARDED + NUM_CARDS
RECYCLED = OUT + NUM_CARDS
# not part of the position: scratch for compute_mask and update_obs, and what the
# observation row shows now (update_obs writes only what differs from it)
NEED = RECYCLED + NUM_CARDS  # per target card the rank to reach
SUMS = NEED + NUM_CARDS  # per hand subset its rank sum
AT_MOST = SUMS + 32  # per rank r, the targets of rank r or less (14)
CODE = AT_MOST + 14  # per card its location code
SHOWN_LOC = CODE + NUM_CARDS  # per card the location code set in the row (-1: none)
SHOWN_HAND = SHOWN_LOC + NUM_CARDS  # per hand slot (6) the card shown there
SHOWN_NEWEST = SHOWN_HAND + 6  # per column the newest defender shown
MOVED = SHOWN_NEWEST + 4  # the cards moved since the row was written (MOVED_CAP,
MOVED_CAP = 32  # then one entry that later moves overwrite)
CARD_WORDS = MOVED + MOVED_CAP + 1  # 676

# --- layout of a row of ``ints`` ----------------------------------------------------------
HEAD, DSIZE, HSIZE, CLEN = 0, 1, 2, 3  # CLEN..CLEN+3: column lengths
PHASE, REGROUPED, TURN, OUTCOME, STEPS, EVENTS = 7, 8, 9, 10, 11, 12  # EVENTS..+7
EV_PRECISION, EV_FLUSH, EV_FLUSH_DRAW, EV_ROYAL, EV_REGROUP, EV_CAPTURED, EV_DEFEATED, EV_TURNS = (
    range(8)
)
DIRTY = EVENTS + 8  # bit c: column c changed since the observation was written
SHOWN_RECYCLED = DIRTY + 1  # recycled cards whose depth the observation shows
NMOVED = SHOWN_RECYCLED + 1  # entries of MOVED (past MOVED_CAP: compare every card)
STRICT = NMOVED + 1  # rules option victory: 1 "deck_left", 0 "any_time" (set
# by the writer: write_state, the envs; kept by the deal)
COUNTS = STRICT + 1  # legal actions per row of the mask (one row per hand
INT_WORDS = COUNTS + NUM_SUBSETS + 1  # subset, 52 targets; then the rest): 56 words
MASK_WIDTH = NUM_ACTIONS + 4  # rows padded to whole uint64 words (for fast sampling)
HAND_SLOTS = 5

_RANK = RANK.astype(np.int64)
_SUIT = SUIT.astype(np.int64)
_RANK_LOW = L.RANK_LOW  # float32 rank / 13, index NO_CARD -> 0
_NC = NO_CARD


# --- card movements -----------------------------------------------------------------------
# Every movement also sets the card's location code (CODE: the observation's location
# one-hot index) and lists the card in MOVED, so update_obs looks at the moved cards only.
# (Branch-free on purpose: a branch here kept numba's reference counting of the row arrays
# in the inlined callers, which made ``apply`` nearly three times slower.)
@njit(cache=True, inline="always")
def _moved(b: np.ndarray, v: np.ndarray, card: int, code: int) -> None:
    b[CODE + card] = code
    n = v[NMOVED]
    b[MOVED + min(n, MOVED_CAP)] = card
    v[NMOVED] = n + 1


@njit(cache=True, inline="always")
def _pop_deck(b: np.ndarray, v: np.ndarray) -> int:
    head = v[HEAD]
    card = b[DECK + head]
    b[DECK + head] = _NC
    v[HEAD] = (head + 1) % NUM_CARDS
    v[DSIZE] -= 1
    b[RECYCLED + card] = 0
    return card


@njit(cache=True, inline="always")
def _to_deck_bottom(b: np.ndarray, v: np.ndarray, card: int) -> None:
    b[DECK + (v[HEAD] + v[DSIZE]) % NUM_CARDS] = card
    v[DSIZE] += 1
    b[RECYCLED + card] = 1
    _moved(b, v, card, L.RECYCLED)


@njit(cache=True, inline="always")
def _draw(b: np.ndarray, v: np.ndarray) -> bool:
    if v[DSIZE] == 0:
        return False
    card = _pop_deck(b, v)
    j = v[HSIZE]
    while j > 0 and b[HAND + j - 1] > card:  # keep the hand sorted by card id
        b[HAND + j] = b[HAND + j - 1]
        j -= 1
    b[HAND + j] = card
    v[HSIZE] += 1
    _moved(b, v, card, L.HAND)
    return True


@njit(cache=True, inline="always")
def _draw_to(b: np.ndarray, v: np.ndarray, n: int) -> None:
    while v[HSIZE] < n and _draw(b, v):
        pass


@njit(cache=True, inline="always")
def _remove_slots(b: np.ndarray, v: np.ndarray, bitmask: int) -> None:
    """Discard the hand slots in ``bitmask``; the rest close up in order."""
    n = v[HSIZE]
    kept = 0
    for i in range(n):
        card = b[HAND + i]
        if bitmask >> i & 1:
            b[DISCARDED + card] = 1
            _moved(b, v, card, L.DISCARD_PILE)
        else:
            b[HAND + kept] = card
            kept += 1
    for i in range(kept, 7):
        b[HAND + i] = _NC
    v[HSIZE] = kept


@njit(cache=True, inline="always")
def _push_defender(b: np.ndarray, v: np.ndarray, castle: int, card: int) -> None:
    b[COLS + castle * NUM_CARDS + v[CLEN + castle]] = card
    v[CLEN + castle] += 1
    _moved(b, v, card, L.DEFENDER0 + castle)
    v[DIRTY] |= 1 << castle  # every change to a column marks it for update_obs


@njit(cache=True, inline="always")
def _remove_defender(b: np.ndarray, v: np.ndarray, card: int, leave: bool) -> None:
    for c in range(4):
        base = COLS + c * NUM_CARDS
        n = v[CLEN + c]
        for p in range(n):
            if b[base + p] == card:
                for q in range(p, n - 1):
                    b[base + q] = b[base + q + 1]
                b[base + n - 1] = _NC
                v[CLEN + c] = n - 1
                v[DIRTY] |= 1 << c
                b[(OUT if leave else DISCARDED) + card] = 1
                _moved(b, v, card, L.OUT if leave else L.DISCARD_PILE)
                return


@njit(cache=True, inline="always")
def _capture(b: np.ndarray, v: np.ndarray, castle: int, royal: bool, leave: bool) -> None:
    b[CAPTURED + castle] = 1
    _moved(b, v, b[CASTLES + castle], L.CASTLE_TAKEN)
    n = v[CLEN + castle]
    base = COLS + castle * NUM_CARDS
    for p in range(n):  # Royal Assault sweeps the castle's remaining defenders away
        b[(OUT if leave else DISCARDED) + b[base + p]] = 1
        _moved(b, v, b[base + p], L.OUT if leave else L.DISCARD_PILE)
        b[base + p] = _NC
    v[CLEN + castle] = 0
    v[DIRTY] |= 1 << castle
    if not royal:
        v[EVENTS + EV_CAPTURED] += 1
    if b[CAPTURED] and b[CAPTURED + 1] and b[CAPTURED + 2] and b[CAPTURED + 3]:
        v[OUTCOME] = 1


@njit(cache=True, inline="always")
def _start_turn(b: np.ndarray, v: np.ndarray) -> None:
    v[TURN] += 1
    v[EVENTS + EV_TURNS] = v[TURN]
    v[REGROUPED] = 0
    v[PHASE] = BATTLE
    _draw_to(b, v, HAND_SLOTS)


@njit(cache=True, inline="always")
def _end_turn(b: np.ndarray, v: np.ndarray) -> None:
    for c in range(4):
        if not b[CAPTURED + c] and v[DSIZE]:
            _push_defender(b, v, c, _pop_deck(b, v))
    if v[DSIZE] == 0:
        v[OUTCOME] = -1  # interpretation 9
        return
    _start_turn(b, v)


@njit(cache=True, inline="always")
def _is_royal(b: np.ndarray, bitmask: int) -> bool:
    """A Jack, a Queen and a King of three different suits among the hand slots played."""
    for i in range(HAND_SLOTS):
        if not bitmask >> i & 1 or _RANK[b[HAND + i]] != 11:
            continue
        for j in range(HAND_SLOTS):
            if (
                not bitmask >> j & 1
                or _RANK[b[HAND + j]] != 12
                or _SUIT[b[HAND + j]] == _SUIT[b[HAND + i]]
            ):
                continue
            for k in range(HAND_SLOTS):
                if (
                    bitmask >> k & 1
                    and _RANK[b[HAND + k]] == 13
                    and _SUIT[b[HAND + k]] != _SUIT[b[HAND + i]]
                    and _SUIT[b[HAND + k]] != _SUIT[b[HAND + j]]
                ):
                    return True
    return False


@njit(cache=True, inline="always")
def _play(b: np.ndarray, v: np.ndarray, bitmask: int, target: int, leave: bool) -> None:
    # read the played cards before they leave the hand
    n = 0
    total = 0
    suit = -1
    one_suit = True
    for i in range(HAND_SLOTS):
        if bitmask >> i & 1:
            card = b[HAND + i]
            total += _RANK[card]
            if n and _SUIT[card] != suit:
                one_suit = False
            suit = _SUIT[card]
            n += 1
    royal = _is_royal(b, bitmask)
    _remove_slots(b, v, bitmask)
    for c in range(4):
        if b[CASTLES + c] == target:
            _capture(b, v, c, False, leave)
            return
    _remove_defender(b, v, target, leave)
    v[EVENTS + EV_DEFEATED] += 1
    if n >= 2 and one_suit:  # Flush Siege
        v[EVENTS + EV_FLUSH] += 1
        if _draw(b, v):
            v[EVENTS + EV_FLUSH_DRAW] += 1
    if royal:
        v[EVENTS + EV_ROYAL] += 1
        v[PHASE] = ROYAL
    elif total == _RANK[target]:  # Precision Strike
        v[EVENTS + EV_PRECISION] += 1
        v[PHASE] = PRECISION


@njit(cache=True)
def load_position(B: np.ndarray, V: np.ndarray, row: int, b: np.ndarray, v: np.ndarray) -> None:
    """Copy the position in ``b``/``v`` into row ``row`` of ``B``/``V``: the card row's first
    ``NEED`` words only (its tail is the env's scratch, which searches never read)."""
    for k in range(NEED):
        B[row, k] = b[k]
    for k in range(INT_WORDS):
        V[row, k] = v[k]


@njit(cache=True)
def captured_and_standing(b: np.ndarray, v: np.ndarray) -> tuple[int, int]:
    """(castles captured, defenders standing at the others)."""
    captured = 0
    standing = 0
    for c in range(4):
        if b[CAPTURED + c]:
            captured += 1
        else:
            standing += v[CLEN + c]
    return captured, standing


@njit(cache=True)
def unseen(b: np.ndarray, v: np.ndarray) -> int:
    """How many cards at the deck's top the player has not seen: those above the recycled
    ones, whose order the player knows (``State.player_view``). With none left the player
    knows the whole position."""
    head = v[HEAD]
    n = 0
    while n < v[DSIZE] and not b[RECYCLED + b[DECK + (head + n) % NUM_CARDS]]:
        n += 1
    return n


@njit(cache=True)
def apply(b: np.ndarray, v: np.ndarray, action: int, leave: bool) -> None:
    """``State.apply_legal``: the action is known to be legal."""
    if action < RECYCLE_BASE:
        _play(b, v, action // NUM_CARDS + 1, action % NUM_CARDS, leave)
    elif action < ROYAL_BASE:
        card = action - RECYCLE_BASE
        b[DISCARDED + card] = 0
        _to_deck_bottom(b, v, card)
        v[PHASE] = BATTLE
    elif action < REGROUP:
        _capture(b, v, action - ROYAL_BASE, True, leave)
        v[PHASE] = BATTLE
    elif action == REGROUP:
        v[REGROUPED] = 1
        v[EVENTS + EV_REGROUP] += 1
        for i in range(v[HSIZE]):
            b[DISCARDED + b[HAND + i]] = 1
            _moved(b, v, b[HAND + i], L.DISCARD_PILE)
        for i in range(7):
            b[HAND + i] = _NC
        v[HSIZE] = 0
        _draw_to(b, v, HAND_SLOTS)
    elif action == END_BATTLE:
        if v[HSIZE] > HAND_SLOTS:
            v[PHASE] = DISCARD
        else:
            _end_turn(b, v)
    else:
        _remove_slots(b, v, 1 << (action - DISCARD_BASE))
        if v[HSIZE] <= HAND_SLOTS:
            v[PHASE] = BATTLE
            _end_turn(b, v)
    if v[STRICT] and v[OUTCOME] == 0 and v[DSIZE] == 0:
        v[OUTCOME] = -1  # victory="deck_left": the deck ran out while a castle stands


# --- the deal -----------------------------------------------------------------------------
@njit(cache=True)
def deal(b: np.ndarray, v: np.ndarray, w: np.ndarray, rows: int) -> None:
    """``State.new_game`` with the deck ``Generator.permutation(52)`` of the env's rng."""
    pcg64.permutation_into(w, b[DECK : DECK + NUM_CARDS])
    _deal_from_deck(b, v, rows)


@njit(cache=True)
def load_deal(b: np.ndarray, v: np.ndarray, rows: int, order: np.ndarray) -> None:
    """``State.new_game`` with the given deck order."""
    for k in range(NUM_CARDS):
        b[DECK + k] = order[k]
    _deal_from_deck(b, v, rows)


@njit(cache=True)
def _deal_from_deck(b: np.ndarray, v: np.ndarray, rows: int) -> None:
    """Deal from the full deck (top first) held in the deck region."""
    for k in range(HAND, CAPTURED):
        b[k] = _NC
    for k in range(CAPTURED, NEED):  # the rest is scratch, or encode's to set
        b[k] = 0
    strict = v[STRICT]  # a rules option, not part of the position: kept
    for k in range(INT_WORDS):
        v[k] = 0
    v[STRICT] = strict
    for c in range(4):
        b[CASTLES + c] = b[DECK + c]
    dealt = 4
    for _ in range(rows):
        for c in range(4):
            _push_defender(b, v, c, b[DECK + dealt])
            dealt += 1
    for k in range(NUM_CARDS - dealt):
        b[DECK + k] = b[DECK + dealt + k]
    for k in range(NUM_CARDS - dealt, NUM_CARDS):
        b[DECK + k] = _NC
    v[DSIZE] = NUM_CARDS - dealt
    _start_turn(b, v)


# --- what the player sees -----------------------------------------------------------------
# Most of a position survives a step, so the observation row is updated, not rewritten: the
# kernel remembers what the row shows (SHOWN_* in ``cards``, SHOWN_RECYCLED and the DIRTY
# column bits in ``ints``) and writes only the entries that differ. ``encode`` writes a whole
# row (after a deal or ``set_state``); ``update_obs`` brings a row ``encode`` wrote, and only
# the kernels touched since, to the current position. The mask changes with every hand, so it
# is rewritten each step.


@njit(cache=True)
def compute_mask(b: np.ndarray, v: np.ndarray, recent: bool, m: np.ndarray) -> None:
    """``State._compute_mask`` into the row ``m`` (every entry is written) and the number of
    legal actions per row of it into ``v[COUNTS:]`` (for ``sample_counted``)."""
    battle = v[OUTCOME] == 0 and v[PHASE] == BATTLE
    can_capture = False
    if not battle:
        for k in range(RECYCLE_BASE):
            m[k] = False
        for s in range(NUM_SUBSETS):
            v[COUNTS + s] = 0
    else:
        held = min(v[HSIZE], HAND_SLOTS)
        k = (1 << held) - 1
        b[SUMS] = 0  # SUMS[bitmask]: rank sum of those hand slots (at most 65)
        for i in range(held):
            rank = _RANK[b[HAND + i]]
            for bits in range(1 << i):
                b[SUMS + (bits | 1 << i)] = b[SUMS + bits] + rank
        # NEED[t]: the rank a subset must reach to attack card t (99: t is no target), so
        # each subset's row of 52 targets is one contiguous, branch-free (SIMD) pass
        for t in range(NUM_CARDS):
            b[NEED + t] = 99
        # AT_MOST[r]: how many targets a sum r reaches (all of them from 13 on)
        for r in range(14):
            b[AT_MOST + r] = 0
        for c in range(4):
            n = v[CLEN + c]
            base = COLS + c * NUM_CARDS
            for p in range(max(n - 1 if recent else 0, 0), n):
                b[NEED + b[base + p]] = _RANK[b[base + p]]
                b[AT_MOST + _RANK[b[base + p]]] += 1
        for r in range(1, 14):
            b[AT_MOST + r] += b[AT_MOST + r - 1]
        for s in range(NUM_SUBSETS):
            row = s * NUM_CARDS
            total = b[SUMS + s + 1] if s < k else np.int8(-1)  # int8 lanes
            for t in range(NUM_CARDS):
                m[row + t] = total >= b[NEED + t]
            v[COUNTS + s] = b[AT_MOST + min(total, 13)] if s < k else 0
        for c in range(4):  # captures need an exact sum (castles are never in NEED)
            if v[CLEN + c] or b[CAPTURED + c]:
                continue
            target = b[CASTLES + c]
            for s in range(k):
                exact = b[SUMS + s + 1] == _RANK[target]
                m[s * NUM_CARDS + target] = exact
                v[COUNTS + s] += exact
                can_capture |= exact
    for k in range(RECYCLE_BASE, NUM_ACTIONS):
        m[k] = False
    rest = 0
    if v[OUTCOME] == 0:
        phase = v[PHASE]
        if phase == PRECISION:
            for c in range(NUM_CARDS):
                m[RECYCLE_BASE + c] = b[DISCARDED + c] != 0
                rest += b[DISCARDED + c] != 0
        elif phase == ROYAL:
            for c in range(4):
                m[ROYAL_BASE + c] = b[CAPTURED + c] == 0
                rest += b[CAPTURED + c] == 0
        elif phase == DISCARD:
            for i in range(v[HSIZE]):
                m[DISCARD_BASE + i] = True
            rest = v[HSIZE]
        else:
            defenders = v[CLEN] + v[CLEN + 1] + v[CLEN + 2] + v[CLEN + 3]
            regroup = not v[REGROUPED] and defenders == 0 and not can_capture
            m[REGROUP] = regroup
            m[END_BATTLE] = True
            rest = 1 + regroup
    v[COUNTS + NUM_SUBSETS] = rest


@njit(cache=True)
def encode(
    b: np.ndarray, v: np.ndarray, rows: int, recent: bool, leave: bool, obs: np.ndarray
) -> None:
    """``observation.encode`` into the row ``obs`` (every entry is written)."""
    for k in range(L.OBS_SIZE):
        obs[k] = 0.0
    # the row shows nothing yet: update_obs writes every entry that is not zero
    for card in range(NUM_CARDS):
        b[SHOWN_LOC + card] = -1
    for i in range(6):
        b[SHOWN_HAND + i] = _NC
    for c in range(4):
        b[SHOWN_NEWEST + c] = _NC
        obs[L.CASTLE_OFF + 18 * c - 1 + _RANK[b[CASTLES + c]]] = 1.0  # fixed for a game
    v[SHOWN_RECYCLED] = 0
    v[DIRTY] = 15
    obs[L.DIFF_OFF + rows - 1] = 1.0
    _all_codes(b, v)
    v[NMOVED] = MOVED_CAP + 1  # every card's location is written
    update_obs(b, v, recent, leave, obs)


@njit(cache=True)
def _all_codes(b: np.ndarray, v: np.ndarray) -> None:
    """Every card's location code (CODE), from the position: the flags exclude each other,
    and cards in hand, columns and castles have all flags clear."""
    for card in range(NUM_CARDS):
        b[CODE + card] = (
            L.RECYCLED * b[RECYCLED + card]
            + L.DISCARD_PILE * b[DISCARDED + card]
            + L.OUT * b[OUT + card]
        )
    for i in range(v[HSIZE]):
        b[CODE + b[HAND + i]] = L.HAND
    for c in range(4):
        base = COLS + c * NUM_CARDS
        for p in range(v[CLEN + c]):
            b[CODE + b[base + p]] = L.DEFENDER0 + c
        b[CODE + b[CASTLES + c]] = L.CASTLE_OPEN + b[CAPTURED + c]


@njit(cache=True)
def update_obs(b: np.ndarray, v: np.ndarray, recent: bool, leave: bool, obs: np.ndarray) -> None:
    """Make the row ``obs``, last written by ``encode``/``update_obs`` for this env, show its
    current position (``observation.encode``): only entries that change are written."""
    # where each card is, as the player sees it (the location one-hot's index): the card
    # movements keep CODE up to date and list the cards they moved (all of them after
    # encode, or when more moved than MOVED lists)
    discards = 0
    recycled = 0
    for card in range(NUM_CARDS):
        discards += b[DISCARDED + card]
        recycled += b[RECYCLED + card]
    # (written out here: as an inline helper, this loop took 20 ns per card)
    listed = v[NMOVED] <= MOVED_CAP
    for k in range(v[NMOVED] if listed else NUM_CARDS):
        card = b[MOVED + k] if listed else k
        new = b[CODE + card]
        old = b[SHOWN_LOC + card]
        if new != old:
            if old >= 0:
                obs[L.LOC_OFF + card * L.N_LOCATIONS + old] = 0.0
            obs[L.LOC_OFF + card * L.N_LOCATIONS + new] = 1.0
            b[SHOWN_LOC + card] = new
    v[NMOVED] = 0
    for i in range(6):  # hand slots, sorted by card id
        new = b[HAND + i] if i < v[HSIZE] else _NC
        old = b[SHOWN_HAND + i]
        if new != old:
            base = L.HAND_OFF + 18 * i
            if old != _NC:
                obs[base + _RANK[old]] = 0.0
                obs[base + 14 + _SUIT[old]] = 0.0
            obs[base] = new != _NC
            if new != _NC:
                obs[base + _RANK[new]] = 1.0
                obs[base + 14 + _SUIT[new]] = 1.0
            b[SHOWN_HAND + i] = new
    dirty = v[DIRTY]
    if dirty:
        for c in range(4):  # a card is the newest of one column at most: clear, then set
            if dirty >> c & 1 and b[SHOWN_NEWEST + c] != _NC:
                obs[L.NEWEST_OFF + b[SHOWN_NEWEST + c]] = 0.0
        for c in range(4):
            if dirty >> c & 1:
                _column_obs(b, v, c, obs)
        v[DIRTY] = 0
    for c in range(4):
        obs[L.CASTLE_OFF + 18 * c + 13] = b[CAPTURED + c]
    for p in range(4):
        obs[L.PHASE_OFF + p] = v[PHASE] == p
    dsize = v[DSIZE]
    if recycled or v[SHOWN_RECYCLED]:  # recycled cards are the deck's bottom
        for card in range(NUM_CARDS):
            obs[L.DEPTH_OFF + card] = 0.0
        for depth in range(dsize - recycled, dsize):
            card = b[DECK + (v[HEAD] + depth) % NUM_CARDS]
            obs[L.DEPTH_OFF + card] = np.float32((depth + 1) / NUM_CARDS)
        v[SHOWN_RECYCLED] = recycled
    captured = b[CAPTURED] + b[CAPTURED + 1] + b[CAPTURED + 2] + b[CAPTURED + 3]
    s = L.SCALAR_OFF
    obs[s] = np.float32(dsize / NUM_CARDS)
    obs[s + 1] = np.float32(discards / NUM_CARDS)
    obs[s + 2] = np.float32(v[HSIZE] / 6)
    obs[s + 3] = np.float32(min(v[TURN], 50) / 50)
    obs[s + 4] = v[REGROUPED]
    obs[s + 5] = np.float32(captured / 4)
    obs[s + 6] = recent
    obs[s + 7] = leave


@njit(cache=True, inline="always")
def _column_obs(b: np.ndarray, v: np.ndarray, c: int, obs: np.ndarray) -> None:
    """Column ``c``'s entries: its newest defender, count, newest rank and rank sum."""
    n = v[CLEN + c]
    base = COLS + c * NUM_CARDS
    # NumPy's float32 sum of the 52 entries: eight pairwise accumulators over the first 48,
    # then the rest in order. Entries past the column's end are NO_CARD, rank 0: adding
    # them is exact, so whole blocks of eight are summed without a branch.
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = np.float32(0.0)
    for p in range(0, min(n, 48), 8):
        a0 += _RANK_LOW[b[base + p]]
        a1 += _RANK_LOW[b[base + p + 1]]
        a2 += _RANK_LOW[b[base + p + 2]]
        a3 += _RANK_LOW[b[base + p + 3]]
        a4 += _RANK_LOW[b[base + p + 4]]
        a5 += _RANK_LOW[b[base + p + 5]]
        a6 += _RANK_LOW[b[base + p + 6]]
        a7 += _RANK_LOW[b[base + p + 7]]
    col_sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    for p in range(48, n):
        col_sum += _RANK_LOW[b[base + p]]
    newest = b[base + n - 1] if n else _NC
    if n:
        obs[L.NEWEST_OFF + newest] = 1.0
    row = L.CASTLE_OFF + 18 * c
    obs[row + 14] = np.float32(n / 13)
    obs[row + 15] = _RANK_LOW[newest]
    obs[row + 16] = min(col_sum * np.float32(0.25), np.float32(1.0))
    b[SHOWN_NEWEST + c] = newest


# --- the batch ----------------------------------------------------------------------------
@njit(cache=True)
def _refresh(b: np.ndarray, v: np.ndarray, recent: bool, m: np.ndarray) -> None:
    compute_mask(b, v, recent, m)


@njit(cache=True, nogil=True)
def reset_rows(
    lo: int,
    hi: int,
    cards: np.ndarray,
    ints: np.ndarray,
    rng: np.ndarray,
    rows: int,
    recent: bool,
    leave: bool,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """A new game from its generator in envs ``lo`` to ``hi - 1``, observation and mask."""
    cards, ints, rng, obs, mask = (
        unowned(cards),
        unowned(ints),
        unowned(rng),
        unowned(obs),
        unowned(mask),
    )
    for i in range(lo, hi):
        deal(cards[i], ints[i], rng[i], rows)
        encode(cards[i], ints[i], rows, recent, leave, obs[i])
        _refresh(cards[i], ints[i], recent, mask[i])


@njit(cache=True, nogil=True)
def reset_all(
    cards: np.ndarray,
    ints: np.ndarray,
    rng: np.ndarray,
    rows: int,
    recent: bool,
    leave: bool,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    reset_rows(0, cards.shape[0], cards, ints, rng, rows, recent, leave, obs, mask)


@njit(cache=True, nogil=True)
def refresh_all(
    cards: np.ndarray,
    ints: np.ndarray,
    rows: int,
    recent: bool,
    leave: bool,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    for i in range(cards.shape[0]):
        encode(cards[i], ints[i], rows, recent, leave, obs[i])
        _refresh(cards[i], ints[i], recent, mask[i])


@njit(cache=True)
def _rewarded(b: np.ndarray, v: np.ndarray, action: int, leave: bool, shaped: bool) -> float:
    """Plays a legal ``action``; returns its reward (1 for the win; ``shaped`` adds 0.01 per
    defender defeated and 0.1 per castle captured)."""
    defeated = v[EVENTS + EV_DEFEATED]
    taken = b[CAPTURED] + b[CAPTURED + 1] + b[CAPTURED + 2] + b[CAPTURED + 3]
    apply(b, v, action, leave)
    r = 1.0 if v[OUTCOME] == 1 else 0.0
    if shaped:
        r = (
            r
            + 0.01 * (v[EVENTS + EV_DEFEATED] - defeated)
            + 0.1 * (b[CAPTURED] + b[CAPTURED + 1] + b[CAPTURED + 2] + b[CAPTURED + 3] - taken)
        )
    return r


@njit(cache=True)
def _played(b: np.ndarray, v: np.ndarray, action: int, leave: bool, shaped: bool) -> float:
    """``_rewarded``, and the episode's step counted."""
    r = _rewarded(b, v, action, leave, shaped)
    v[STEPS] += 1
    return r


@njit(cache=True)
def step_one(
    b: np.ndarray,
    v: np.ndarray,
    action: int,
    rows: int,
    recent: bool,
    leave: bool,
    shaped: bool,
    max_steps: int,
    obs: np.ndarray,
    m: np.ndarray,
    out: np.ndarray,
) -> None:
    """One legal step of one env, no autoreset: ``out`` = (reward, terminated, truncated)."""
    out[0] = _played(b, v, action, leave, shaped)
    term = v[OUTCOME] != 0
    out[1] = term
    out[2] = (not term) and v[STEPS] >= max_steps
    update_obs(b, v, recent, leave, obs)
    compute_mask(b, v, recent, m)


@njit(cache=True)
def play_shown(
    b: np.ndarray,
    v: np.ndarray,
    action: int,
    rows: int,
    recent: bool,
    leave: bool,
    shaped: bool,
    obs: np.ndarray,
    m: np.ndarray,
) -> float:
    """One legal step of a ``rules.State``'s rows, as ``CastleSiegeEnv.step`` takes it in
    one call: ``apply``, then the whole observation (``encode``, into ``obs``) and the mask
    (``compute_mask``, into ``m``); returns the step's reward (``_rewarded``: no
    episode step count: the Python env counts its own steps)."""
    r = _rewarded(b, v, action, leave, shaped)
    encode(b, v, rows, recent, leave, obs)
    compute_mask(b, v, recent, m)
    return r


# The batch entry points take a row range and touch only those rows, and release the GIL
# (``nogil``): ``RowThreads`` (``_threads.py``) steps contiguous ranges on several Python
# threads at once, with exactly the results of one thread. They take their arrays
# ``unowned`` (``core.jit``): the row views the helpers work on then need no atomic reference
# counting, which was about 15% of a step.
@njit(cache=True, nogil=True)
def step_rows(
    lo: int,
    hi: int,
    cards: np.ndarray,
    ints: np.ndarray,
    rng: np.ndarray,
    actions: np.ndarray,
    rows: int,
    recent: bool,
    leave: bool,
    shaped: bool,
    obs: np.ndarray,
    mask: np.ndarray,
    step: tuple,
) -> None:
    """One step of envs ``lo`` to ``hi - 1`` with autoreset in the same step: a finished
    env's last observation goes to ``out.final_obs`` and its row of ``obs``/``mask`` shows
    the next game (``step``: a plain tuple of ``BatchStep``'s fields, which numba types
    faster than the named tuple), its last ``ints`` row to ``out.final_rows`` (the info's
    event counters). The row of ``obs`` must hold what the last step (or reset) wrote
    there: it is updated in place."""
    cards, ints, rng = unowned(cards), unowned(ints), unowned(rng)  # see core.jit.unowned
    out = BatchStep(*step)
    obs, mask, final_obs = unowned(obs), unowned(mask), unowned(out.final_obs)
    final_rows = unowned(out.final_rows)
    for i in range(lo, hi):
        b = cards[i]
        v = ints[i]
        a = actions[i]
        if not penalised(i, a, NUM_ACTIONS, mask, out):
            out.rewards[i] = _played(b, v, a, leave, shaped)
            term = v[OUTCOME] != 0
            out.terminated[i] = term
            out.truncated[i] = (not term) and v[STEPS] >= out.max_steps
            out.won[i] = v[OUTCOME] == 1
        finished = out.terminated[i] or out.truncated[i]
        out.done[i] = finished
        update_obs(b, v, recent, leave, obs[i])
        if finished:
            for k in range(L.OBS_SIZE):  # (a slice assignment would allocate a temporary)
                final_obs[i, k] = obs[i, k]
            for k in range(v.shape[0]):
                final_rows[i, k] = v[k]
            deal(b, v, rng[i], rows)
            encode(b, v, rows, recent, leave, obs[i])
        compute_mask(b, v, recent, mask[i])


@njit(cache=True, nogil=True)
def step_batch(
    cards: np.ndarray,
    ints: np.ndarray,
    rng: np.ndarray,
    actions: np.ndarray,
    rows: int,
    recent: bool,
    leave: bool,
    shaped: bool,
    obs: np.ndarray,
    mask: np.ndarray,
    step: tuple,
) -> None:
    """One step of every env (``step_rows``), on this thread."""
    step_rows(
        0, cards.shape[0], cards, ints, rng, actions, rows, recent, leave, shaped, obs, mask, step
    )


@njit(cache=True, nogil=True)
def first_illegal(mask: np.ndarray, actions: np.ndarray) -> int:
    """The first env whose action is out of range or masked out, or -1."""
    return first_illegal_of(mask, actions, NUM_ACTIONS)


@njit(cache=True, nogil=True)
def sample_legal(mask: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal action per row of a padded mask (``MASK_WIDTH`` columns),
    from per-row xorshift64* states ``words``; -1 where no action is legal."""
    sample_legal_rows(0, mask.shape[0], mask, words, out)


@njit(cache=True, nogil=True)
def sample_legal_rows(
    lo: int, hi: int, mask: np.ndarray, words: np.ndarray, out: np.ndarray
) -> None:
    """``sample_legal`` for rows ``lo`` to ``hi - 1`` only (each row has its own state, so
    ranges drawn on different threads give what one call draws)."""
    ones = np.uint64(0x0101010101010101)
    mask = unowned(mask)
    for i in range(lo, hi):
        row = mask[i].view(np.uint64)
        total = 0
        for k in range(row.shape[0]):
            total += np.int64((row[k] * ones) >> np.uint64(56))  # type: ignore[assignment, unused-ignore]  # int64 in numba
        if total == 0:
            out[i] = -1
            continue
        pick = np.int64((xorshift_star(words, i) >> np.uint64(11)) % np.uint64(total))
        for k in range(row.shape[0]):
            c = np.int64((row[k] * ones) >> np.uint64(56))
            if pick < c:
                base = k * 8
                for j in range(8):
                    if mask[i, base + j]:
                        if pick == 0:
                            out[i] = base + j
                            break
                        pick -= 1
                break
            pick -= c


@njit(cache=True, nogil=True)
def sample_counted(mask: np.ndarray, ints: np.ndarray, words: np.ndarray, out: np.ndarray) -> None:
    """What ``sample_legal`` draws (a uniformly random legal action per env, -1 where none),
    faster: the per-row legal counts ``compute_mask`` left in ``ints`` pick the row, and
    only that row of the mask is scanned. The mask and ``ints`` must be the env's, as the
    last step or reset left them."""
    sample_counted_rows(0, mask.shape[0], mask, ints, words, out)


@njit(cache=True, nogil=True)
def sample_counted_rows(
    lo: int, hi: int, mask: np.ndarray, ints: np.ndarray, words: np.ndarray, out: np.ndarray
) -> None:
    """``sample_counted`` for rows ``lo`` to ``hi - 1`` only."""
    ints = unowned(ints)
    for i in range(lo, hi):
        v = ints[i]
        total = 0
        for r in range(NUM_SUBSETS + 1):
            total += v[COUNTS + r]
        if total == 0:
            out[i] = -1
            continue
        # 53 random bits scaled to [0, total): the bias is below total / 2**53, as with the
        # modulo that sample_legal takes, and a multiply is cheaper than a division
        bits = xorshift_star(words, i) >> np.uint64(11)
        pick = np.int64((bits * np.uint64(total)) >> np.uint64(53))
        r = 0
        while pick >= v[COUNTS + r]:  # the row holding the pick-th legal action
            pick -= v[COUNTS + r]
            r += 1
        for a in range(r * NUM_CARDS, NUM_ACTIONS):
            pick -= mask[i, a]  # no branch per entry: legal ones are random
            if pick < 0:
                out[i] = a
                break
