"""Castellion's rules, observation and mask as compiled per-env kernels over flat arrays: the
only implementation of its rules (``rules.State`` is a view over one row, the observation is
``encode``, the batched and compiled envs step these kernels).

A batch of games is a few arrays, one row per env, walked by kernels that allocate nothing:

- ``st`` (N, ``WORDS``) int8: the regular pile (bottom first, so its top is the last
  entry, as ``State.regular``), the safe pile, the revealed tiles, the 36 castle cells
  (row * 6 + column, -1 empty), the column heights, the discard pile and the removed
  Traitors per kind, the three ordeal cards, their face-down flags and the Traitors beside
  them, then the scalars of ``castellion.rules.State`` (pile sizes, hand, current ordeal,
  phase, tiles to destroy and why, tiles to reveal, the Chameleon's shape, Pyro's lifted
  tile and its origin, outcome) and a few scratch bytes.
- ``steps`` (N,) int64: steps this episode (for truncation).
- ``rng`` (N, 6) uint64: each env's PCG64 generator (``pcg64``), so deals match the single env.

The plain-Python reference the tests compare them with is ``tests/reference/castellion.py``
(the package's rules before this kernel took over; its methods have these functions' names):
``tests/castellion/test_one_rules.py`` and ``tests/vector/test_castellion_*`` play the same
games through both over thousands of games at every level (same seeds and actions, identical
observations, masks, rewards, terminations, saved states, views and worlds).
"""

from __future__ import annotations

import numpy as np

from ..castle_siege.kernel import sample_legal as _sample_legal
from ..castle_siege.kernel import sample_legal_rows as _sample_legal_rows
from ..core import pcg64
from ..core.jit import njit, unowned
from ..core.kernel_common import BatchStep, first_illegal_of, penalised
from . import actions as A
from . import layout as L
from .data import (
    ASSAULT,
    BLACK_TRAITOR,
    CHAMELEON,
    FORMATIONS,
    JUGGLER,
    MENACE,
    NUM_DEFENDER_KINDS,
    NUM_KINDS,
    ORDEALS,
    ORDEALS_BY_SLOT,
    REGULAR_COUNTS,
    ROWS,
    SAFE_COUNTS,
    SCHOOL,
    SEER,
    TRAITOR,
)

NUM_ACTIONS = A.NUM_ACTIONS
SIZE = A.SIZE
CELLS = SIZE * SIZE
NUM_REGULAR = sum(REGULAR_COUNTS)  # 72
NUM_SAFE = sum(SAFE_COUNTS)  # 12

# --- layout of a row of ``st`` ------------------------------------------------------------
REG = 0
SAFE = REG + NUM_REGULAR
REV = SAFE + NUM_SAFE  # 4 revealed tiles at most
CELL = REV + L.MAX_REVEALED
HEIGHT = CELL + CELLS
DISC = HEIGHT + SIZE
REMOVED = DISC + NUM_KINDS
ORD = REMOVED + NUM_KINDS
FACE = ORD + 3
BESIDE = FACE + 3  # slot * 2 + (0 normal, 1 black)
REG_N = BESIDE + 6
SAFE_N = REG_N + 1
REV_N = SAFE_N + 1
HAND = REV_N + 1
CURRENT = HAND + 1
PHASE = CURRENT + 1
DLEFT = PHASE + 1
DREASON = DLEFT + 1
RLEFT = DREASON + 1
RSHAPE = RLEFT + 1
LIFTED = RSHAPE + 1
LORIGIN = LIFTED + 1
OUTCOME = LORIGIN + 1
SCRATCH = OUTCOME + 1  # 6 bytes for _move_possible, not part of the position
WORDS = SCRATCH + SIZE  # 188

#: the rules options as bit flags (the kernels' ``rules`` argument; ``rule_flags``)
NEIGHBORS_EXEMPT = 1  # foundation_exemption == "neighbors"
TURN_START_ONLY = 2  # early_encounter == "turn_start"


def rule_flags(rules: dict) -> int:
    """The kernels' ``rules`` argument for a rules-options dict."""
    return (NEIGHBORS_EXEMPT if rules["foundation_exemption"] == "neighbors" else 0) | (
        TURN_START_ONLY if rules["early_encounter"] == "turn_start" else 0
    )


MASK_WIDTH = 144  # rows padded to whole uint64 words (for fast sampling)
#: uniform legal actions from padded mask rows (Castle Siege's sampler: it reads any width)
sample_legal = _sample_legal
sample_legal_rows = _sample_legal_rows  # the same for a row range (one per thread)

# --- phases, actions, data as module constants (numba freezes them) ------------------------
DRAW_PHASE, DEFENDER_PHASE, TRAITOR_PHASE, DESTROY_PHASE = (
    L.DRAW_PHASE,
    L.DEFENDER_PHASE,
    L.TRAITOR_PHASE,
    L.DESTROY_PHASE,
)
JUGGLE_PHASE, REVEAL_PHASE, RECOVER_PHASE = L.JUGGLE_PHASE, L.REVEAL_PHASE, L.RECOVER_PHASE
LIFT_PHASE, MOVE_PHASE, REVEAL_ORDEAL_PHASE, OVER = (
    L.LIFT_PHASE,
    L.MOVE_PHASE,
    L.REVEAL_ORDEAL_PHASE,
    L.OVER,
)
TRAITOR_COST, PYRO_DESTROY, PENALTY = L.TRAITOR_COST, L.PYRO_DESTROY, L.PENALTY
DRAW, TAKE_REVEALED, ENCOUNTER_NOW = A.DRAW, A.TAKE_REVEALED, A.ENCOUNTER_NOW
PLACE, PLACE_LEFT, DISCARD, DISCARD_POWER = A.PLACE, A.PLACE_LEFT, A.DISCARD, A.DISCARD_POWER
PLACE_TRAITOR, DISCARD_TRAITOR, DESTROY, SWAP = (
    A.PLACE_TRAITOR,
    A.DISCARD_TRAITOR,
    A.DESTROY,
    A.SWAP,
)
REVEAL, RECOVER, LIFT, REVEAL_ORDEAL = A.REVEAL, A.RECOVER, A.LIFT, A.REVEAL_ORDEAL
MAX_REVEALED = L.MAX_REVEALED
NO_TILE = L.NO_TILE

SWAP_A = np.array([a for a, _ in A.SWAP_PAIRS], np.int64)
SWAP_B = np.array([b for _, b in A.SWAP_PAIRS], np.int64)
# card kinds in the observation's one-hot order (formations, assault, rows)
K_FORMATIONS, K_ASSAULT, K_ROWS = 0, 1, 2
ORD_KIND = np.array([{FORMATIONS: 0, ASSAULT: 1, ROWS: 2}[c.kind] for c in ORDEALS], np.int64)
ORD_TRAITORS = np.array([c.traitors for c in ORDEALS], np.int64)
ORD_TOWERS = np.array([c.towers for c in ORDEALS], np.int64)
ORD_BASTIONS = np.array([c.bastions for c in ORDEALS], np.int64)
ORD_LINES = np.array([c.lines for c in ORDEALS], np.int64)
ORD_ROWS = np.array([c.rows for c in ORDEALS], np.int64)
ORD_PENALTY = np.array([c.penalty for c in ORDEALS], np.int64)
_BY_SLOT = np.zeros((3, 3, 4), np.int64)
_BY_SLOT_N = np.zeros((3, 3), np.int64)
for _lv in range(3):
    for _sl in range(3):
        _ids = ORDEALS_BY_SLOT[_lv][_sl]
        _BY_SLOT_N[_lv, _sl] = len(_ids)
        _BY_SLOT[_lv, _sl, : len(_ids)] = _ids
# the full piles in kind order (``State._deal_pile``'s ``full``)
_FULL_REGULAR = np.array([k for k in range(NUM_KINDS) for _ in range(REGULAR_COUNTS[k])], np.int64)
_FULL_SAFE = np.array([k for k in range(NUM_KINDS) for _ in range(SAFE_COUNTS[k])], np.int64)

# observation constants
_REGULAR_SCALE = L.REGULAR_SCALE.astype(np.float64)  # float32 values, multiplied in float64


# --- derived facts ------------------------------------------------------------------------
@njit(cache=True)
def castle_width(s: np.ndarray) -> int:
    w = 0
    for c in range(SIZE):
        if s[HEIGHT + c] != 0:
            w += 1
    return w


@njit(cache=True)
def castle_size(s: np.ndarray) -> int:
    n = 0
    for c in range(SIZE):
        n += s[HEIGHT + c]
    return n


@njit(cache=True)
def foundation_complete(s: np.ndarray) -> bool:
    for c in range(SIZE):
        if s[HEIGHT + c] == 0:
            return False
    return True


@njit(cache=True)
def _tiles_played(s: np.ndarray) -> bool:
    return s[REG_N] == 0 and s[SAFE_N] == 0 and s[REV_N] == 0 and s[HAND] == NO_TILE


@njit(cache=True)
def faction_board(s: np.ndarray, faction: int) -> int:
    board = np.int64(0)
    for c in range(SIZE):
        for r in range(s[HEIGHT + c]):
            i = r * SIZE + c
            if s[CELL + i] // 3 == faction:
                board |= np.int64(1) << np.int64(i)
    return board


# the rules' own group functions, compiled, so that the two cannot drift apart
component = njit(cache=True)(L.component)
_four_tile_shape = njit(cache=True)(L.four_tile_shape)


@njit(cache=True)
def popcount(x: int) -> int:
    """The number of set bits of ``x`` (tiles of a board or group bitmask)."""
    n = 0
    while x:
        x &= x - np.int64(1)
        n += 1
    return n


@njit(cache=True)
def low_bit_index(x: int) -> int:
    """The index of the lowest set bit of ``x`` (a cell of a non-empty bitmask)."""
    low = x & -x
    j = 0
    while (low >> np.int64(j)) != 1:
        j += 1
    return j


@njit(cache=True)
def count_formation(kind: int, t: int, b: int, li: int) -> tuple[int, int, int]:
    """(towers, bastions, lines) with one more of ``kind`` (``shape_of_group``; -1 none)."""
    if kind == 0:
        t += 1
    elif kind == 1:
        b += 1
    elif kind == 2:
        li += 1
    return t, b, li


@njit(cache=True)
def shape_of_group(comp: int) -> int:
    if popcount(comp) != 4:
        return -1
    return _four_tile_shape(comp)


@njit(cache=True)
def formations(s: np.ndarray) -> tuple[int, int, int]:
    """(towers, bastions, lines) now in the castle (``State.formations``)."""
    t = 0
    b = 0
    li = 0
    for faction in range(4):
        board = faction_board(s, faction)
        while board:
            comp = component(board, board & -board)
            board &= ~comp
            t, b, li = count_formation(shape_of_group(comp), t, b, li)
    return t, b, li


# --- legality ------------------------------------------------------------------------------
@njit(cache=True)
def _shape_clash(s: np.ndarray, kind: int, r: int, c: int, rules: int) -> bool:
    shape = kind % 3
    if not (r == 1 and (rules & NEIGHBORS_EXEMPT)) and s[CELL + (r - 1) * SIZE + c] % 3 == shape:
        return True
    if c > 0 and s[HEIGHT + c - 1] > r and s[CELL + r * SIZE + c - 1] % 3 == shape:
        return True
    if c < SIZE - 1 and s[HEIGHT + c + 1] > r and s[CELL + r * SIZE + c + 1] % 3 == shape:
        return True
    return False


@njit(cache=True)
def placements(
    s: np.ndarray, m: np.ndarray, kind: int, rule3: bool, exclude: int, rules: int
) -> None:
    width = castle_width(s)
    if width == 0:
        if exclude != 0:
            m[PLACE] = True
        return
    for c in range(width):
        r = s[HEIGHT + c]
        if r < SIZE and c != exclude and not (rule3 and _shape_clash(s, kind, r, c, rules)):
            m[PLACE + c] = True
    if width < SIZE:
        if exclude != width:
            m[PLACE + width] = True
        if exclude != -1:
            m[PLACE_LEFT] = True


@njit(cache=True)
def _splits(s: np.ndarray, c: int) -> bool:
    return s[HEIGHT + c] == 1 and 0 < c < castle_width(s) - 1


@njit(cache=True, inline="always")
def _room_beside(s: np.ndarray, heights: int, width: int, k: int) -> bool:
    """Can column ``k``'s top tile go elsewhere: a new column fits, or another of the
    ``width`` columns (heights at ``s[heights:]``) is below the top row?"""
    if width < SIZE:
        return True
    for c in range(width):
        if c != k and s[heights + c] < SIZE:
            return True
    return False


@njit(cache=True)
def _move_possible(s: np.ndarray, dec: int) -> bool:
    """``rules._move_possible`` of the heights with column ``dec`` one lower."""
    width = 0
    total = 0
    for c in range(SIZE):
        h = s[HEIGHT + c] - (1 if c == dec else 0)
        if h:
            s[SCRATCH + width] = h
            width += 1
            total += h
    if total < 2:
        return False
    for k in range(width):
        if s[SCRATCH + k] == 1:
            if 0 < k < width - 1:
                continue
            return True
        if _room_beside(s, SCRATCH, width, k):
            return True
    return False


@njit(cache=True)
def _power_ok(s: np.ndarray, kind: int) -> bool:
    faction = kind // 3
    if faction == JUGGLER:
        return castle_size(s) >= 2
    if faction == SEER:
        return s[REV_N] < MAX_REVEALED and (s[REG_N] > 0 or s[SAFE_N] > 0)
    if faction == CHAMELEON:
        for f in range(4):
            if f != CHAMELEON and s[DISC + f * 3 + kind % 3]:
                return True
        return False
    for c in range(SIZE):
        if s[HEIGHT + c] and not _splits(s, c) and _move_possible(s, c):
            return True
    return False


@njit(cache=True)
def _lift_ok(s: np.ndarray, c: int) -> bool:
    h = s[HEIGHT + c]
    if h == 0 or _splits(s, c):
        return False
    if castle_size(s) < 2:
        return False
    return h == 1 or _room_beside(s, HEIGHT, castle_width(s), c)


@njit(cache=True)
def compute_mask(s: np.ndarray, level: int, rules: int, m: np.ndarray) -> None:
    """``State.legal_action_mask`` into the row ``m`` (every entry is written)."""
    for k in range(m.shape[0]):
        m[k] = False
    phase = s[PHASE]
    if phase == DRAW_PHASE:
        n = s[REV_N]
        if n:
            for i in range(n):
                m[TAKE_REVEALED + i] = True
        else:
            m[DRAW] = s[REG_N] > 0
            m[DRAW + 1] = s[SAFE_N] > 0
        m[ENCOUNTER_NOW] = level != SCHOOL
    elif phase == DEFENDER_PHASE:
        hand = s[HAND]
        placements(s, m, hand, True, 99, rules)
        m[DISCARD] = True
        m[DISCARD_POWER] = level != SCHOOL and _power_ok(s, hand)
        m[ENCOUNTER_NOW] = level != SCHOOL and not (rules & TURN_START_ONLY)
    elif phase == TRAITOR_PHASE:
        m[PLACE_TRAITOR] = True
        m[DISCARD_TRAITOR] = level != SCHOOL and s[HAND] != BLACK_TRAITOR
        m[ENCOUNTER_NOW] = level != SCHOOL and not (rules & TURN_START_ONLY)
    elif phase == DESTROY_PHASE:
        pyro = s[DREASON] == PYRO_DESTROY
        for c in range(SIZE):
            h = s[HEIGHT + c]
            if h and not _splits(s, c) and (not pyro or _move_possible(s, c)):
                for r in range(h):
                    m[DESTROY + r * SIZE + c] = True
    elif phase == JUGGLE_PHASE:
        for i in range(SWAP_A.shape[0]):
            if s[CELL + SWAP_A[i]] >= 0 and s[CELL + SWAP_B[i]] >= 0:
                m[SWAP + i] = True
    elif phase == REVEAL_PHASE:
        m[REVEAL] = s[REG_N] > 0
        m[REVEAL + 1] = s[SAFE_N] > 0
    elif phase == RECOVER_PHASE:
        shape = s[RSHAPE]
        for f in range(4):
            kind = f * 3 + shape
            if f != CHAMELEON and s[DISC + kind]:
                m[RECOVER + kind] = True
    elif phase == LIFT_PHASE:
        for c in range(SIZE):
            m[LIFT + c] = _lift_ok(s, c)
    elif phase == MOVE_PHASE:
        placements(s, m, s[LIFTED], False, s[LORIGIN], rules)
    elif phase == REVEAL_ORDEAL_PHASE:
        for slot in range(s[CURRENT], 3):
            m[REVEAL_ORDEAL + slot] = s[FACE + slot] != 0


# --- changing the castle --------------------------------------------------------------------
@njit(cache=True)
def _shift(s: np.ndarray, by: int) -> None:
    """Shift the castle ``by`` columns right (negative: left)."""
    if by > 0:
        for c in range(SIZE - 1, -1, -1):
            src = c - by
            for r in range(SIZE):
                s[CELL + r * SIZE + c] = s[CELL + r * SIZE + src] if src >= 0 else NO_TILE
            s[HEIGHT + c] = s[HEIGHT + src] if src >= 0 else 0
    else:
        by = -by
        for c in range(SIZE):
            src = c + by
            for r in range(SIZE):
                s[CELL + r * SIZE + c] = s[CELL + r * SIZE + src] if src < SIZE else NO_TILE
            s[HEIGHT + c] = s[HEIGHT + src] if src < SIZE else 0


@njit(cache=True)
def put(s: np.ndarray, kind: int, column: int) -> int:
    if column < 0:
        _shift(s, 1)
        column = 0
    r = s[HEIGHT + column]
    cell = r * SIZE + column
    s[CELL + cell] = kind
    s[HEIGHT + column] = r + 1
    return cell


@njit(cache=True)
def take(s: np.ndarray, r: int, c: int) -> int:
    kind = s[CELL + r * SIZE + c]
    h = s[HEIGHT + c]
    for row in range(r, h - 1):
        s[CELL + row * SIZE + c] = s[CELL + (row + 1) * SIZE + c]
    s[CELL + (h - 1) * SIZE + c] = NO_TILE
    s[HEIGHT + c] = h - 1
    return kind


@njit(cache=True)
def left_align(s: np.ndarray) -> None:
    if s[HEIGHT] == 0:
        for c in range(1, SIZE):
            if s[HEIGHT + c]:
                _shift(s, -c)
                return


@njit(cache=True)
def remove_rows(s: np.ndarray, rows: int) -> None:
    for c in range(SIZE):
        h = s[HEIGHT + c]
        for r in range(min(rows, h)):
            s[DISC + s[CELL + r * SIZE + c]] += 1
        for r in range(SIZE):
            src = r + rows
            s[CELL + r * SIZE + c] = s[CELL + src * SIZE + c] if src < h else NO_TILE
        s[HEIGHT + c] = max(0, h - rows)
    left_align(s)


# --- applying moves ---------------------------------------------------------------------------
@njit(cache=True)
def _conclude(s: np.ndarray, passed: bool) -> bool:
    if not passed:
        s[OUTCOME] = -1
        s[PHASE] = OVER
        return True
    slot = s[CURRENT]
    s[REMOVED + TRAITOR] += s[BESIDE + 2 * slot]
    s[REMOVED + BLACK_TRAITOR] += s[BESIDE + 2 * slot + 1]
    s[BESIDE + 2 * slot] = 0
    s[BESIDE + 2 * slot + 1] = 0
    s[CURRENT] = slot + 1
    if slot + 1 == 3:
        s[OUTCOME] = 1
        s[PHASE] = OVER
    return True


@njit(cache=True)
def encounter(s: np.ndarray) -> bool:
    """Encounter the lowest ordeal; False while its penalty awaits the player's choices."""
    slot = s[CURRENT]
    card = s[ORD + slot]
    s[FACE + slot] = 0
    kind = ORD_KIND[card]
    if kind == K_ROWS:
        remove_rows(s, ORD_ROWS[card])
        return _conclude(s, foundation_complete(s))
    towers, bastions, lines = formations(s)
    met = towers >= ORD_TOWERS[card] and bastions >= ORD_BASTIONS[card] and lines >= ORD_LINES[card]
    if kind == K_FORMATIONS or met:
        return _conclude(s, met and foundation_complete(s))
    penalty = max(0, ORD_PENALTY[card] - 4 * bastions)
    if not penalty:
        return _conclude(s, foundation_complete(s))
    if not foundation_complete(s) or castle_size(s) - penalty < SIZE:
        return _conclude(s, False)  # the loss is certain (State._encounter)
    s[DLEFT] = penalty
    s[DREASON] = PENALTY
    s[PHASE] = DESTROY_PHASE
    return False


@njit(cache=True)
def _resume(s: np.ndarray) -> None:
    """After an encounter: the turn goes on with the tile in hand, else a new turn."""
    if s[OUTCOME] == 0 and s[HAND] >= 0:
        s[PHASE] = DEFENDER_PHASE if s[HAND] < NUM_DEFENDER_KINDS else TRAITOR_PHASE
        return
    _end_turn(s)


@njit(cache=True)
def _end_turn(s: np.ndarray) -> None:
    """Resolve what the rules force (complete castle, tiles exhausted), then a new turn."""
    while s[OUTCOME] == 0:
        if castle_size(s) == CELLS or _tiles_played(s):
            if not encounter(s):
                return
            continue
        s[PHASE] = DRAW_PHASE
        return
    s[PHASE] = OVER


@njit(cache=True)
def _after_place(s: np.ndarray, level: int, cell: int) -> None:
    """Menace: completing a tower turns up a face-down ordeal of the player's choice."""
    if level == MENACE:
        any_down = False
        for slot in range(s[CURRENT], 3):
            if s[FACE + slot]:
                any_down = True
        if any_down:
            board = faction_board(s, s[CELL + cell] // 3)
            if shape_of_group(component(board, np.int64(1) << np.int64(cell))) == 0:
                s[PHASE] = REVEAL_ORDEAL_PHASE
                return
    _end_turn(s)


@njit(cache=True)
def _apply_draw(s: np.ndarray, action: int) -> None:
    """The draw phase: encounter early, draw from a pile or take a revealed tile."""
    if action == ENCOUNTER_NOW:
        if encounter(s):
            _end_turn(s)
        return
    if action == DRAW:
        s[REG_N] -= 1
        s[HAND] = s[REG + s[REG_N]]
        s[REG + s[REG_N]] = NO_TILE
    elif action == DRAW + 1:
        s[SAFE_N] -= 1
        s[HAND] = s[SAFE + s[SAFE_N]]
        s[SAFE + s[SAFE_N]] = NO_TILE
    else:
        i = action - TAKE_REVEALED
        s[HAND] = s[REV + i]
        n = s[REV_N]
        for j in range(i, n - 1):
            s[REV + j] = s[REV + j + 1]
        s[REV + n - 1] = NO_TILE
        s[REV_N] = n - 1
    s[PHASE] = DEFENDER_PHASE if s[HAND] < NUM_DEFENDER_KINDS else TRAITOR_PHASE


@njit(cache=True)
def _apply_defender(s: np.ndarray, action: int, level: int) -> None:
    """A Defender in hand: place it, or discard it (and its faction's power)."""
    kind = s[HAND]
    s[HAND] = NO_TILE
    if action < DISCARD:
        _after_place(s, level, put(s, kind, action - PLACE if action < PLACE_LEFT else -1))
        return
    s[DISC + kind] += 1
    if action == DISCARD:
        _end_turn(s)
        return
    faction = kind // 3
    if faction == JUGGLER:
        s[PHASE] = JUGGLE_PHASE
    elif faction == SEER:
        s[RLEFT] = min(MAX_REVEALED - s[REV_N], s[REG_N] + s[SAFE_N])
        s[PHASE] = REVEAL_PHASE
    elif faction == CHAMELEON:
        s[RSHAPE] = kind % 3
        s[PHASE] = RECOVER_PHASE
    else:
        s[DLEFT] = 1
        s[DREASON] = PYRO_DESTROY
        s[PHASE] = DESTROY_PHASE


@njit(cache=True)
def _apply_traitor(s: np.ndarray, action: int, level: int) -> None:
    """A Traitor in hand: beside the current ordeal, or discarded at a cost."""
    kind = s[HAND]
    s[HAND] = NO_TILE
    if action == PLACE_TRAITOR:
        slot = s[CURRENT]
        s[BESIDE + 2 * slot + (1 if kind == BLACK_TRAITOR else 0)] += 1
        count = s[BESIDE + 2 * slot] + s[BESIDE + 2 * slot + 1]
        if count >= ORD_TRAITORS[s[ORD + slot]] and not encounter(s):
            return
        _end_turn(s)
        return
    s[DISC + kind] += 1
    cost = 4
    if level == MENACE:
        cost = max(0, cost - formations(s)[2])
    cost = min(cost, castle_size(s))
    if cost:
        s[DLEFT] = cost
        s[DREASON] = TRAITOR_COST
        s[PHASE] = DESTROY_PHASE
    else:
        _end_turn(s)


@njit(cache=True)
def _apply_destroy(s: np.ndarray, action: int) -> None:
    """One tile destroyed (a Pyromancer's, a Traitor's cost or a penalty)."""
    cell = action - DESTROY
    s[DISC + take(s, cell // SIZE, cell % SIZE)] += 1
    left_align(s)
    s[DLEFT] -= 1
    if s[DLEFT] and castle_size(s):
        return
    reason = s[DREASON]
    s[DLEFT] = 0
    s[DREASON] = 0
    if reason == PYRO_DESTROY:
        s[PHASE] = LIFT_PHASE
    elif reason == PENALTY:
        _conclude(s, foundation_complete(s))
        _resume(s)
    else:
        _end_turn(s)


@njit(cache=True)
def _apply_reveal(s: np.ndarray, action: int) -> None:
    """A Seer's reveal: the top tile of a pile turned up beside them."""
    if action == REVEAL:
        s[REG_N] -= 1
        kind = s[REG + s[REG_N]]
        s[REG + s[REG_N]] = NO_TILE
    else:
        s[SAFE_N] -= 1
        kind = s[SAFE + s[SAFE_N]]
        s[SAFE + s[SAFE_N]] = NO_TILE
    s[REV + s[REV_N]] = kind
    s[REV_N] += 1
    s[RLEFT] -= 1
    if not s[RLEFT]:
        _end_turn(s)


@njit(cache=True)
def _apply_lift(s: np.ndarray, action: int) -> None:
    """After a Pyromancer: the top tile of a column lifted, to move."""
    c = action - LIFT
    s[LIFTED] = take(s, s[HEIGHT + c] - 1, c)
    if s[HEIGHT + c]:
        s[LORIGIN] = c
    elif c == 0:
        left_align(s)
        s[LORIGIN] = -1
    else:
        s[LORIGIN] = c
    s[PHASE] = MOVE_PHASE


@njit(cache=True)
def apply(s: np.ndarray, action: int, level: int) -> None:
    """``State.apply_legal``: the action is known to be legal. One branch a phase."""
    phase = s[PHASE]
    if phase == DRAW_PHASE:
        _apply_draw(s, action)
    elif action == ENCOUNTER_NOW:
        if encounter(s):
            _resume(s)
    elif phase == DEFENDER_PHASE:
        _apply_defender(s, action, level)
    elif phase == TRAITOR_PHASE:
        _apply_traitor(s, action, level)
    elif phase == DESTROY_PHASE:
        _apply_destroy(s, action)
    elif phase == JUGGLE_PHASE:
        a = CELL + SWAP_A[action - SWAP]
        b = CELL + SWAP_B[action - SWAP]
        t = s[a]
        s[a] = s[b]
        s[b] = t
        _end_turn(s)
    elif phase == REVEAL_PHASE:
        _apply_reveal(s, action)
    elif phase == RECOVER_PHASE:
        kind = action - RECOVER
        s[DISC + kind] -= 1
        s[HAND] = kind
        s[RSHAPE] = -1
        s[PHASE] = DEFENDER_PHASE
    elif phase == LIFT_PHASE:
        _apply_lift(s, action)
    elif phase == MOVE_PHASE:
        kind = s[LIFTED]
        s[LIFTED] = NO_TILE
        s[LORIGIN] = 0
        _after_place(s, level, put(s, kind, action - PLACE if action < PLACE_LEFT else -1))
    elif phase == REVEAL_ORDEAL_PHASE:
        s[FACE + action - REVEAL_ORDEAL] = 0
        _end_turn(s)


# --- the deal ---------------------------------------------------------------------------------
@njit(cache=True)
def clear(s: np.ndarray) -> None:
    """An empty position (``State.__init__``): empty piles, castle, hand; draw phase."""
    for k in range(WORDS):
        s[k] = 0
    for k in range(REG, HEIGHT):
        s[k] = NO_TILE
    s[HAND] = NO_TILE
    s[RSHAPE] = -1
    s[LIFTED] = NO_TILE


@njit(cache=True)
def deal(s: np.ndarray, w: np.ndarray, level: int) -> None:
    """``State.new_game(rng, level)``: both piles shuffled by ``Generator.permutation`` and one
    ordeal card per slot by ``Generator.integers``, from the env's generator ``w``."""
    clear(s)
    _deal_pile(s, w, REG, _FULL_REGULAR)
    _deal_pile(s, w, SAFE, _FULL_SAFE)
    s[REG_N] = NUM_REGULAR
    s[SAFE_N] = NUM_SAFE
    for slot in range(3):
        n = _BY_SLOT_N[level, slot]
        s[ORD + slot] = _BY_SLOT[level, slot, pcg64.integers(w, n)]
        s[FACE + slot] = 1 if level == MENACE else 0


@njit(cache=True)
def _deal_pile(s: np.ndarray, w: np.ndarray, base: int, full: np.ndarray) -> None:
    """``State._deal_pile`` without options: ``rest = full[permutation(n)]``, reversed (the
    pile's top is its last entry); the permutation is built in the pile's own region."""
    n = full.shape[0]
    pile = s[base : base + n]
    pcg64.permutation_into(w, pile)
    for i in range(n // 2):
        t = pile[i]
        pile[i] = pile[n - 1 - i]
        pile[n - 1 - i] = t
    for i in range(n):
        pile[i] = full[pile[i]]


# --- what the player sees -----------------------------------------------------------------------
@njit(cache=True)
def encode(s: np.ndarray, level: int, rules: int, obs: np.ndarray) -> None:
    """``observation.encode`` into the row ``obs`` (every entry is written)."""
    for k in range(L.OBS_SIZE):
        obs[k] = 0.0
    for i in range(CELLS):
        kind = s[CELL + i]
        if kind >= 0:
            obs[L.CELL_OFF + 7 * i + kind // 3] = 1.0
            obs[L.CELL_OFF + 7 * i + 4 + kind % 3] = 1.0
    held = s[HAND] if s[HAND] >= 0 else s[LIFTED]
    if held >= 0:
        obs[L.HAND_OFF + held] = 1.0
    for slot in range(s[REV_N]):
        obs[L.REVEALED_OFF + slot * NUM_KINDS + s[REV + slot]] = 1.0
    # tiles left per kind: NumPy multiplies the int64 counts by the float32 scales in float64
    n_reg = s[REG_N]
    for i in range(n_reg):
        obs[L.REGULAR_OFF + s[REG + i]] += 1.0
    for k in range(NUM_KINDS):
        count = obs[L.REGULAR_OFF + k]
        if count != 0.0:
            obs[L.REGULAR_OFF + k] = np.float32(np.float64(count) * _REGULAR_SCALE[k])
    for i in range(s[SAFE_N]):
        obs[L.SAFE_OFF + s[SAFE + i]] = 1.0
    for k in range(NUM_DEFENDER_KINDS):
        obs[L.DISCARD_OFF + k] = np.float32(s[DISC + k]) / np.float32(6.0)
    current = s[CURRENT]
    for slot in range(3):
        base = L.ORDEAL_OFF + slot * L.ORDEAL_WIDTH
        beside = s[BESIDE + 2 * slot] + s[BESIDE + 2 * slot + 1]
        if slot < current:
            obs[base + 2] = 1.0
        elif s[FACE + slot]:
            obs[base] = 1.0
            obs[base + 3] = np.float32(beside / 2)
            continue
        else:
            obs[base + 1] = 1.0
        card = s[ORD + slot]
        obs[base + 3] = np.float32(beside / ORD_TRAITORS[card])
        obs[base + 4] = np.float32(ORD_TOWERS[card] / 5)
        obs[base + 5] = np.float32(ORD_BASTIONS[card] / 5)
        obs[base + 6] = np.float32(ORD_LINES[card] / 5)
        obs[base + 7] = np.float32(ORD_ROWS[card] / 3)
        obs[base + 8] = np.float32(ORD_PENALTY[card] / 42)
        obs[base + 9 + ORD_KIND[card]] = 1.0
    obs[L.PHASE_OFF + s[PHASE]] = 1.0
    obs[L.LEVEL_OFF + level] = 1.0
    towers, bastions, lines = formations(s)
    sc = L.SCALAR_OFF
    obs[sc] = np.float32(towers / 9)
    obs[sc + 1] = np.float32(bastions / 9)
    obs[sc + 2] = np.float32(lines / 9)
    obs[sc + 3] = np.float32(castle_size(s) / 36)
    obs[sc + 4] = np.float32(n_reg / 72)
    obs[sc + 5] = np.float32(s[SAFE_N] / 12)
    obs[sc + 6] = np.float32(s[DLEFT] / 42)
    obs[sc + 7] = np.float32(s[RLEFT] / 4)
    if s[RSHAPE] >= 0:
        obs[sc + 8 + s[RSHAPE]] = 1.0
    obs[sc + 11] = foundation_complete(s)
    if s[PHASE] == MOVE_PHASE:
        origin = s[LORIGIN]
        obs[sc + 12 + (origin if origin >= 0 else 6)] = 1.0
    obs[sc + 19] = rules & NEIGHBORS_EXEMPT


# --- the batch ------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def reset_rows(
    lo: int,
    hi: int,
    st: np.ndarray,
    steps: np.ndarray,
    rng: np.ndarray,
    level: int,
    rules: int,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """A new game from its generator in envs ``lo`` to ``hi - 1``, observation and mask."""
    st, rng, obs, mask = unowned(st), unowned(rng), unowned(obs), unowned(mask)
    for i in range(lo, hi):
        deal(st[i], rng[i], level)
        steps[i] = 0
        encode(st[i], level, rules, obs[i])
        compute_mask(st[i], level, rules, mask[i])


@njit(cache=True, nogil=True)
def reset_all(
    st: np.ndarray,
    steps: np.ndarray,
    rng: np.ndarray,
    level: int,
    rules: int,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    reset_rows(0, st.shape[0], st, steps, rng, level, rules, obs, mask)


@njit(cache=True, nogil=True)
def refresh_all(st: np.ndarray, level: int, rules: int, obs: np.ndarray, mask: np.ndarray) -> None:
    for i in range(st.shape[0]):
        encode(st[i], level, rules, obs[i])
        compute_mask(st[i], level, rules, mask[i])


@njit(cache=True)
def _reward(s: np.ndarray, before: int, ordeals_reward: bool) -> float:
    if ordeals_reward:
        return (s[CURRENT] - before) / 3.0
    return 1.0 if s[OUTCOME] == 1 else 0.0


@njit(cache=True)
def step_one(
    s: np.ndarray,
    steps: np.ndarray,
    action: int,
    level: int,
    rules: int,
    ordeals_reward: bool,
    max_steps: int,
    obs: np.ndarray,
    m: np.ndarray,
    out: np.ndarray,
) -> None:
    """One legal step of one env, no autoreset: ``out`` = (reward, terminated, truncated);
    ``steps`` is a one-entry array, this env's step count."""
    before = s[CURRENT]
    apply(s, action, level)
    steps[0] += 1
    term = s[OUTCOME] != 0
    out[0] = _reward(s, before, ordeals_reward)
    out[1] = term
    out[2] = (not term) and steps[0] >= max_steps
    encode(s, level, rules, obs)
    compute_mask(s, level, rules, m)


# The batch entry points take a row range and touch only those rows, and release the GIL
# (``nogil``): ``RowThreads`` (``_threads.py``) steps contiguous ranges on several Python
# threads at once, with exactly the results of one thread.
@njit(cache=True, nogil=True)
def step_rows(
    lo: int,
    hi: int,
    st: np.ndarray,
    steps: np.ndarray,
    rng: np.ndarray,
    actions: np.ndarray,
    level: int,
    rules: int,
    ordeals_reward: bool,
    obs: np.ndarray,
    mask: np.ndarray,
    step: tuple,
) -> None:
    """One step of envs ``lo`` to ``hi - 1`` with autoreset in the same step: a finished
    env's last observation goes to ``out.final_obs`` and its row of ``obs``/``mask`` shows
    the next game (``step``: a plain tuple of ``BatchStep``'s fields, which numba types
    faster than the named tuple), its last state row to ``out.final_rows`` (the info's)."""
    st, rng = unowned(st), unowned(rng)  # no reference counting for row views: core.jit.unowned
    out = BatchStep(*step)
    obs, mask, final_obs = unowned(obs), unowned(mask), unowned(out.final_obs)
    final_rows = unowned(out.final_rows)
    for i in range(lo, hi):
        s = st[i]
        a = actions[i]
        if not penalised(i, a, NUM_ACTIONS, mask, out):
            before = s[CURRENT]
            apply(s, a, level)
            steps[i] += 1
            term = s[OUTCOME] != 0
            out.terminated[i] = term
            out.truncated[i] = (not term) and steps[i] >= out.max_steps
            out.won[i] = s[OUTCOME] == 1
            out.rewards[i] = _reward(s, before, ordeals_reward)
        finished = out.terminated[i] or out.truncated[i]
        out.done[i] = finished
        if finished:
            encode(s, level, rules, final_obs[i])
            for k in range(s.shape[0]):
                final_rows[i, k] = s[k]
            deal(s, rng[i], level)
            steps[i] = 0
        encode(s, level, rules, obs[i])
        compute_mask(s, level, rules, mask[i])


@njit(cache=True, nogil=True)
def step_batch(
    st: np.ndarray,
    steps: np.ndarray,
    rng: np.ndarray,
    actions: np.ndarray,
    level: int,
    rules: int,
    ordeals_reward: bool,
    obs: np.ndarray,
    mask: np.ndarray,
    step: tuple,
) -> None:
    """One step of every env (``step_rows``), on this thread."""
    step_rows(
        0, st.shape[0], st, steps, rng, actions, level, rules, ordeals_reward, obs, mask, step
    )


@njit(cache=True, nogil=True)
def first_illegal(mask: np.ndarray, actions: np.ndarray) -> int:
    """The first env whose action is out of range or masked out, or -1."""
    return first_illegal_of(mask, actions, NUM_ACTIONS)
