"""Castellion move features, compiled: one row of features per legal move.

``move_rows(s, level, rules, feats, ids, valid, t, u, m)`` fills, for the position in the
kernel row ``s`` (``castellion.kernel``'s layout), ``feats`` (capacity, ``NUM_FEATURES``)
float32, ``ids`` (capacity,) int64 action ids and ``valid`` (capacity,) bool, legal moves in
increasing id order, and returns the number of legal moves. ``t``, ``u`` are scratch state
rows and ``m`` a scratch mask row. The layout is ``FEATURES`` (docs/move_features.md).

A row says what the move spends (the tile it places, discards, takes, destroys, lifts or
recovers), where (row, column, a new column), and what it triggers: the castle it leaves
(formations, foundation, size, dead cells), each formation it completes or cancels, the
Traitors beside the lowest ordeal and whether the move brings its encounter and would pass
it, a Traitor discard's cost, and the *plan cost* of the position after the move: the
tiles the castle still needs for the lowest ordeal and the two after it
(``castellion.plan.castle_cost``, the Castellion planner's estimate, with its Assault
and row-removal rules), averaged over the cards a face-down ordeal may be.

It reads only what the player sees: the castle, hand, revealed tiles, the piles' contents by
kind (never their order), the discard pile, the face-up ordeals and the Traitors beside
each; a face-down ordeal counts as each card its slot may hold.
(``tests/vector/test_castellion_moves.py`` re-deals the piles and the face-down cards and
checks the rows do not change.) The Python env, the compiled single env and the batched env
all call this kernel, so the three views agree exactly.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from castle_envs.castellion import kernel as K
from castle_envs.castellion.data import (
    ASSAULT,
    BLACK_TRAITOR,
    LEVELS,
    MENACE,
    NUM_DEFENDER_KINDS,
    ORDEALS,
    ROWS,
    TRAITOR,
)
from castle_envs.castellion.plan import BIG, castle_cost, dead_cells, frame, orders_for
from castle_envs.core.jit import njit
from castle_envs.core.moves import KernelMoves, feature_columns

SIZE, CELLS = K.SIZE, K.CELLS

KINDS = (
    "draw_regular",
    "draw_safe",
    "take_revealed",
    "encounter_now",
    "place",
    "pyro_move",
    "discard",
    "discard_power",
    "place_traitor",
    "discard_traitor",
    "destroy",
    "swap",
    "reveal_regular",
    "reveal_safe",
    "recover",
    "lift",
    "reveal_ordeal",
)

if TYPE_CHECKING:
    from castle_envs.castellion.rules import State
FEATURES = (
    *KINDS,
    # the tile the move spends or touches (placed, discarded, taken, destroyed, lifted,
    # recovered; a swap: the tile at its first cell)
    "tile_seer",
    "tile_chameleon",
    "tile_juggler",
    "tile_pyro",
    "tile_triangle",
    "tile_square",
    "tile_circle",
    "tile_traitor",
    "tile_black_traitor",
    # where: the cell placed, destroyed or lifted (after a left shift: its column then)
    "row/5",
    "column/5",
    "new_column",
    "foundation_cell",
    "swap_vertical",
    # the castle the move leaves (for moves that do not touch it: the castle now)
    "castle_size/36",
    "width/6",
    "foundation_complete",
    "foundation/6",
    "towers/9",
    "bastions/9",
    "lines/9",
    "completes_tower",
    "completes_bastion",
    "completes_line",
    "cancels_formation",
    "group/8",
    "group_can_form",
    "dead_cells/30",
    "completes_castle",
    # plan cost (tiles still needed) of the lowest unresolved ordeal and the two after it
    "cost_current/60",
    "cost_next/60",
    "cost_third/60",
    "cost_falls/10",
    "cost_rises/10",
    # the lowest ordeal's Traitors and encounter
    "traitors_beside/5",
    "traitors_to_trigger/5",
    "triggers_encounter",
    "encounter_passes",
    "encounter_unknown",
    "penalty/42",
    "traitor_discard_cost/4",
    # draws and reveals
    "pile_size/72",
    "traitor_chance",
    "next_traitor_triggers",
    # a tile to take or recover: the best plan cost among its placements
    "best_cost_if_placed/60",
    "placeable",
    "ordeal_slot_1",
    "ordeal_slot_2",
    "ordeal_slot_3",
    # the position (the same in every row)
    "level_school",
    "level_academy",
    "level_menace",
    "ordeals_passed/3",
    "current_face_down",
    "current_formations",
    "current_assault",
    "current_rows",
    "cost_now/60",
    "regular_size/72",
    "safe_size/12",
    "destroy_left/42",
)
NUM_FEATURES = len(FEATURES)
COL = feature_columns(FEATURES)
CAPACITY = K.NUM_ACTIONS

TILE, WHERE, AFTER, COST, ORDEAL = (
    COL["tile_seer"],
    COL["row/5"],
    COL["castle_size/36"],
    COL["cost_current/60"],
    COL["traitors_beside/5"],
)
PILE, TAKE, SLOT, CONTEXT = (
    COL["pile_size/72"],
    COL["best_cost_if_placed/60"],
    COL["ordeal_slot_1"],
    COL["level_school"],
)
DEAD = COL["dead_cells/30"]
PASSES = COL["encounter_passes"]
UNKNOWN = COL["encounter_unknown"]
GROUP = COL["group/8"]
CAN_FORM = COL["group_can_form"]
PENALTY_COL = COL["penalty/42"]
DISCARD_COST = COL["traitor_discard_cost/4"]
FILLS = COL["completes_castle"]

# the ordeal cards as arrays: kind (0 formations, 1 assault, 2 rows), needs, and their
# formation orders for castle_cost padded into one array
_KIND = np.array([{"formations": 0, ASSAULT: 1, ROWS: 2}[c.kind] for c in ORDEALS], np.int64)
_TRAITORS = np.array([c.traitors for c in ORDEALS], np.int64)
_NEED = np.array([(c.towers, c.bastions, c.lines) for c in ORDEALS], np.int64)
_ROWS = np.array([c.rows for c in ORDEALS], np.int64)
_PENALTY = np.array([c.penalty for c in ORDEALS], np.int64)
_ORDER_LIST = [
    orders_for(c.towers, c.bastions, c.lines) if c.kind != ROWS else np.zeros((1, 0), np.int64)
    for c in ORDEALS
]
_ORDERS = np.zeros(
    (len(ORDEALS), max(len(o) for o in _ORDER_LIST), max(max(o.shape[1] for o in _ORDER_LIST), 1)),
    np.int64,
)
_N_ORDERS = np.array([len(o) for o in _ORDER_LIST], np.int64)
_N_ITEMS = np.array([o.shape[1] for o in _ORDER_LIST], np.int64)
for _i, _o in enumerate(_ORDER_LIST):
    _ORDERS[_i, : len(_o), : _o.shape[1]] = _o
_BY_SLOT, _BY_SLOT_N = K._BY_SLOT, K._BY_SLOT_N


@njit(cache=True)
def _card_cost(cells: np.ndarray, card: int, avail: np.ndarray, size: int, bast: int) -> float:
    """The planner's cost of one card (``PlannerPolicy._card_cost``)."""
    if _KIND[card] == 2:
        return float(castle_cost(cells, _ORDERS[card, :1, :0], avail, _ROWS[card] + 1))
    plan = castle_cost(cells, _ORDERS[card, : _N_ORDERS[card], : _N_ITEMS[card]], avail, 1)
    if _KIND[card] == 1 and plan > 0:
        left = max(0, _PENALTY[card] - 4 * bast)
        if left + SIZE <= CELLS:
            found = 0
            for c in range(SIZE):
                if cells[c] < 0:
                    found += 1
            plan = min(plan, max(0, left + SIZE - size, found))
    return float(plan)


@njit(cache=True)
def _slot_cost(t: np.ndarray, level: int, slot: int, avail: np.ndarray) -> float:
    """The cost of ordeal ``slot`` for the castle in row ``t``, averaged over the cards a
    face-down slot may hold; 0 past the last ordeal."""
    if slot >= 3:
        return 0.0
    cells = t[K.CELL : K.CELL + CELLS]
    size = K.castle_size(t)
    bast = K.formations(t)[1]
    if t[K.FACE + slot]:
        total = 0.0
        n = _BY_SLOT_N[level, slot]
        for j in range(n):
            total += _card_cost(cells, _BY_SLOT[level, slot, j], avail, size, bast)
        return total / n
    return _card_cost(cells, t[K.ORD + slot], avail, size, bast)


@njit(cache=True)
def _costs(
    t: np.ndarray, u: np.ndarray, level: int, avail: np.ndarray
) -> tuple[float, float, float]:
    """(lowest, next, third) ordeals' plan costs for the castle in ``t`` (0 past the last);
    each later ordeal is scored on the castle the face-up row-removal cards before it will
    leave, as the planner scores them (``u`` scratch)."""
    slot = t[K.CURRENT]
    out = np.zeros(3)
    u[:] = t
    for k in range(3):
        if slot + k >= 3:
            break
        out[k] = _slot_cost(u, level, slot + k, avail)
        card = u[K.ORD + slot + k]
        if not u[K.FACE + slot + k] and _KIND[card] == 2:
            K.remove_rows(u, _ROWS[card])
            _close_up(u)
    return out[0], out[1], out[2]


@njit(cache=True)
def planner_value(
    s: np.ndarray,
    u: np.ndarray,
    level: int,
    weights: np.ndarray,
    pressure: float,
    useful: float,
    grow: float,
    info: float,
    scout: float,
) -> float:
    """A planner's score of the non-final position in row ``s`` (the lab's Castellion
    planner plays by it: 1000 x ordeals passed, less the
    weighted plan costs of the lowest ordeal and the two after it and the ``pressure`` on
    the lowest one's missing tiles beyond what the draws before its trigger may bring; at
    the Menace plus ``grow`` per castle tile, less ``info`` per ordeal still face down and,
    while one is, ``scout`` per tile the castle needs for one more tower, ``tower_cost``).
    ``u`` is a scratch row; ``weights`` the three cost weights. The arithmetic is done in
    the planner's order, so the value is the same to the last bit."""
    avail = _avail(s)
    c0, c1, c2 = _costs(s, u, level, avail)
    current = np.int64(s[K.CURRENT])
    total = 1000.0 * current
    total -= weights[0] * c0
    total -= weights[1] * c1
    total -= weights[2] * c2
    n_regular = np.int64(s[K.REG_N])
    traitors = 0
    for i in range(n_regular):
        if s[K.REG + i] == TRAITOR or s[K.REG + i] == BLACK_TRAITOR:
            traitors += 1
    if s[K.FACE + current]:
        need = 2
    else:
        need = _TRAITORS[s[K.ORD + current]]
    left = need - np.int64(s[K.BESIDE + 2 * current]) - np.int64(s[K.BESIDE + 2 * current + 1])
    gap = (n_regular - traitors) / (traitors + 1)
    slack = useful * ((left - 1 + 0.5) * gap + np.int64(s[K.SAFE_N]))
    total -= pressure * max(0.0, c0 - slack)
    if level == MENACE:
        total += grow * np.int64(K.castle_size(s))
        down = 0
        for slot in range(current, 3):
            down += np.int64(s[K.FACE + slot])
        if s[K.PHASE] == K.REVEAL_ORDEAL_PHASE:
            down -= 1
        total -= info * down
        if down > 0 and scout != 0:
            total -= scout * tower_cost(s, avail)
    return total


@njit(cache=True)
def tower_cost(s: np.ndarray, avail: np.ndarray) -> float:
    """The tiles (``castle_cost``'s estimate) the castle in row ``s`` needs to hold one
    tower more than it holds now: completing a tower is how a player turns up a face-down
    Assault at the Menace, and an Assault known is one the castle can be built for."""
    more = np.zeros((1, np.int64(K.formations(s)[0]) + 1), np.int64)  # towers only
    return float(castle_cost(s[K.CELL : K.CELL + CELLS], more, avail, 0))


@njit(cache=True)
def _close_up(u: np.ndarray) -> None:
    """Empty columns closed up, as the planner scores a castle after a row removal (one
    that leaves a gap has lost anyway: its foundation is incomplete)."""
    w = 0
    for c in range(SIZE):
        h = u[K.HEIGHT + c]
        if h == 0:
            continue
        if w != c:
            for r in range(SIZE):
                u[K.CELL + r * SIZE + w] = u[K.CELL + r * SIZE + c]
                u[K.CELL + r * SIZE + c] = -1
            u[K.HEIGHT + w] = h
            u[K.HEIGHT + c] = 0
        w += 1


@njit(cache=True)
def _avail(s: np.ndarray) -> np.ndarray:
    """Defenders per faction still to come: piles, revealed tiles, hand, lifted tile."""
    avail = np.zeros(4, np.int64)
    for i in range(s[K.REG_N]):
        k = s[K.REG + i]
        if k < NUM_DEFENDER_KINDS:
            avail[k // 3] += 1
    for i in range(s[K.SAFE_N]):
        avail[s[K.SAFE + i] // 3] += 1
    for i in range(s[K.REV_N]):
        k = s[K.REV + i]
        if k < NUM_DEFENDER_KINDS:
            avail[k // 3] += 1
    for k in (s[K.HAND], s[K.LIFTED]):
        if 0 <= k < NUM_DEFENDER_KINDS:
            avail[k // 3] += 1
    return avail


@njit(cache=True)
def _group(t: np.ndarray, cell: int) -> tuple[int, bool]:
    """(size, could still form) of the same-faction group holding ``cell``."""
    comp = K.component(K.faction_board(t, t[K.CELL + cell] // 3), np.int64(1) << np.int64(cell))
    n = 0
    r_lo, r_hi, c_lo, c_hi = SIZE, -1, SIZE, -1
    x = comp
    while x:
        low = x & -x
        i = 0
        while (np.int64(1) << np.int64(i)) != low:
            i += 1
        r, c = i // SIZE, i % SIZE
        r_lo, r_hi, c_lo, c_hi = min(r_lo, r), max(r_hi, r), min(c_lo, c), max(c_hi, c)
        n += 1
        x ^= low
    rows, cols = r_hi - r_lo + 1, c_hi - c_lo + 1
    fits = n <= 4 and (
        (rows == 1 and cols <= 4) or (cols == 1 and rows <= 4) or (rows <= 2 and cols <= 2)
    )
    return n, fits


@njit(cache=True)
def _dead_cells(t: np.ndarray) -> int:
    fb = np.zeros(4, np.int64)
    sb = np.zeros(3, np.int64)
    occ = frame(t[K.CELL : K.CELL + CELLS], 0, fb, sb)
    return K.popcount(dead_cells(occ, sb))


@njit(cache=True)
def _passes(t: np.ndarray, level: int, slot: int, card: int) -> float:
    """1 when encountering ``card`` in ``slot`` now passes without a penalty, else 0."""
    kind = _KIND[card]
    if kind == 2:
        if not K.foundation_complete(t):
            return 0.0
        for c in range(SIZE):
            if t[K.HEIGHT + c] <= _ROWS[card]:
                return 0.0
        return 1.0
    towers, bastions, lines = K.formations(t)
    met = towers >= _NEED[card, 0] and bastions >= _NEED[card, 1] and lines >= _NEED[card, 2]
    if met or (kind == 1 and _PENALTY[card] - 4 * bastions <= 0):
        return 1.0 if K.foundation_complete(t) else 0.0
    return 0.0


@njit(cache=True)
def _encounter(f: np.ndarray, t: np.ndarray, level: int) -> None:
    """The lowest ordeal's encounter for the castle in ``t``: the share of the cards it may
    be that pass without penalty, unknown (face down), the penalty of a face-up Assault."""
    slot = t[K.CURRENT]
    if slot >= 3:
        return
    if t[K.FACE + slot]:
        n = _BY_SLOT_N[level, slot]
        total = 0.0
        for j in range(n):
            total += _passes(t, level, slot, _BY_SLOT[level, slot, j])
        f[PASSES] = total / n
        f[UNKNOWN] = 1.0
        return
    card = t[K.ORD + slot]
    f[PASSES] = _passes(t, level, slot, card)
    if _KIND[card] == 1:
        f[PENALTY_COL] = max(0, _PENALTY[card] - 4 * K.formations(t)[1]) / 42.0


@njit(cache=True)
def _trigger(s: np.ndarray, slot: int) -> int:
    """Traitors that bring ordeal ``slot``'s encounter (a face-down card: 2, as every
    Assault)."""
    if s[K.FACE + slot]:
        return 2
    return _TRAITORS[s[K.ORD + slot]]


@njit(cache=True)
def _pile(f: np.ndarray, s: np.ndarray, regular: bool) -> None:
    """A draw's or a reveal's pile: its size and its share of Traitors (by counting)."""
    if regular:
        n = s[K.REG_N]
        traitors = 0
        for i in range(n):
            traitors += s[K.REG + i] >= TRAITOR
        f[PILE] = n / 72.0
        f[PILE + 1] = traitors / max(n, 1)
    else:
        f[PILE] = s[K.SAFE_N] / 72.0


@njit(cache=True)
def _tile(f: np.ndarray, kind: int) -> None:
    if kind < 0:
        return
    if kind == TRAITOR:
        f[TILE + 7] = 1.0
    elif kind == BLACK_TRAITOR:
        f[TILE + 8] = 1.0
    else:
        f[TILE + kind // 3] = 1.0
        f[TILE + 4 + kind % 3] = 1.0


@njit(cache=True)
def _take_tile(
    f: np.ndarray,
    t: np.ndarray,
    s: np.ndarray,
    level: int,
    avail: np.ndarray,
    u: np.ndarray,
    before: tuple[int, int, int],
    cost_before: float,
    r: int,
    c: int,
) -> None:
    """A move that takes the tile at row ``r``, column ``c`` off the castle (a destroy, a
    Pyro lift): where it stood, then the castle after, ``t`` (a copy of ``s``)."""
    _tile(f, s[K.CELL + r * SIZE + c])
    f[WHERE] = r / 5.0
    f[WHERE + 1] = c / 5.0
    f[WHERE + 3] = r == 0
    K.take(t, r, c)
    K.left_align(t)
    _castle(f, t, s, level, avail, u, before, cost_before)


@njit(cache=True)
def _castle(
    f: np.ndarray,
    t: np.ndarray,
    s: np.ndarray,
    level: int,
    avail: np.ndarray,
    u: np.ndarray,
    before: tuple[int, int, int],
    cost_before: float,
) -> None:
    """The castle-after columns and the plan costs for the position ``t``."""
    size = K.castle_size(t)
    f[AFTER] = size / 36.0
    f[AFTER + 1] = K.castle_width(t) / 6.0
    f[AFTER + 2] = K.foundation_complete(t)
    found = 0
    for c in range(SIZE):
        found += t[K.HEIGHT + c] > 0
    f[AFTER + 3] = found / 6.0
    towers, bastions, lines = K.formations(t)
    f[AFTER + 4] = towers / 9.0
    f[AFTER + 5] = bastions / 9.0
    f[AFTER + 6] = lines / 9.0
    f[AFTER + 7] = towers > before[0]
    f[AFTER + 8] = bastions > before[1]
    f[AFTER + 9] = lines > before[2]
    f[AFTER + 10] = towers < before[0] or bastions < before[1] or lines < before[2]
    f[DEAD] = min(_dead_cells(t), 30) / 30.0
    now, nxt, third = _costs(t, u, level, avail)
    f[COST] = min(now, BIG) / BIG
    f[COST + 1] = min(nxt, BIG) / BIG
    f[COST + 2] = min(third, BIG) / BIG
    f[COST + 3] = min(max(cost_before - now, 0.0), 10.0) / 10.0
    f[COST + 4] = min(max(now - cost_before, 0.0), 10.0) / 10.0


@njit(cache=True)
def _best_placement(
    s: np.ndarray,
    t: np.ndarray,
    u: np.ndarray,
    m: np.ndarray,
    level: int,
    rules: int,
    kind: int,
    avail: np.ndarray,
) -> tuple[float, bool]:
    """(best current plan cost over the legal placements of ``kind``, any placement)."""
    best = BIG * 1.0
    t[:] = s
    K.placements(t, m, kind, True, 99, rules)
    placeable = False
    for a in range(K.PLACE, K.PLACE_LEFT + 1):
        if not m[a]:
            continue
        m[a] = False
        placeable = True
        t[:] = s
        K.put(t, kind, a - K.PLACE if a < K.PLACE_LEFT else -1)
        avail[kind // 3] -= 1
        now = _slot_cost(t, level, t[K.CURRENT], avail)
        avail[kind // 3] += 1
        best = min(best, now)
    return best, placeable


@njit(cache=True)
def _place(
    f: np.ndarray,
    s: np.ndarray,
    a: int,
    level: int,
    t: np.ndarray,
    u: np.ndarray,
    avail: np.ndarray,
    before: tuple[int, int, int],
    cost_before: float,
) -> None:
    """A Defender placed (or a lifted one moved): where it lands and the castle after."""
    phase = s[K.PHASE]
    kind = s[K.HAND] if phase == K.DEFENDER_PHASE else s[K.LIFTED]
    _tile(f, kind)
    column = a - K.PLACE if a < K.PLACE_LEFT else -1
    width = K.castle_width(s)
    f[WHERE + 2] = column == -1 or column == width
    cell = K.put(t, kind, column)
    f[WHERE] = (cell // SIZE) / 5.0
    f[WHERE + 1] = (cell % SIZE) / 5.0
    f[WHERE + 3] = cell < SIZE
    avail[kind // 3] -= 1
    _castle(f, t, s, level, avail, u, before, cost_before)
    avail[kind // 3] += 1
    n, fits = _group(t, cell)
    f[GROUP] = min(n, 8) / 8.0
    f[CAN_FORM] = fits
    f[FILLS] = K.castle_size(t) == CELLS


@njit(cache=True)
def _traitor(
    f: np.ndarray, s: np.ndarray, a: int, level: int, t: np.ndarray, before: tuple[int, int, int]
) -> None:
    """A Traitor beside the current ordeal (and whether it triggers it), or discarded."""
    slot = s[K.CURRENT]
    _tile(f, s[K.HAND])
    if a == K.PLACE_TRAITOR and slot < 3:
        beside = s[K.BESIDE + 2 * slot] + s[K.BESIDE + 2 * slot + 1] + 1
        f[ORDEAL] = min(beside, 5) / 5.0
        f[ORDEAL + 1] = max(_trigger(s, slot) - beside, 0) / 5.0
        if beside >= _trigger(s, slot):
            f[ORDEAL + 2] = 1.0
            _encounter(f, t, level)
    elif a == K.DISCARD_TRAITOR:
        cost = 4
        if level == MENACE:
            cost = max(0, cost - before[2])
        f[DISCARD_COST] = min(cost, K.castle_size(s)) / 4.0


@njit(cache=True)
def _fill(
    f: np.ndarray,
    s: np.ndarray,
    a: int,
    level: int,
    rules: int,
    t: np.ndarray,
    u: np.ndarray,
    m: np.ndarray,
    avail: np.ndarray,
    before: tuple[int, int, int],
    cost_before: float,
    base: np.ndarray,
) -> None:
    """Row ``f`` of legal move ``a``; ``base``: the castle columns of the position as it is
    (copied for the moves that leave the castle alone)."""
    for k in range(f.shape[0]):
        f[k] = 0.0
    phase = s[K.PHASE]
    t[:] = s
    slot = s[K.CURRENT]
    kind_col = -1
    if a < K.TAKE_REVEALED:  # draw
        kind_col = a - K.DRAW
        _pile(f, s, a == K.DRAW)
        if slot < 3 and s[K.BESIDE + 2 * slot] + s[K.BESIDE + 2 * slot + 1] + 1 >= _trigger(
            s, slot
        ):
            f[PILE + 2] = 1.0
    elif a < K.ENCOUNTER_NOW:  # take a revealed tile
        kind_col = 2
        kind = s[K.REV + a - K.TAKE_REVEALED]
        _tile(f, kind)
        if kind < NUM_DEFENDER_KINDS:
            best, ok = _best_placement(s, t, u, m, level, rules, kind, avail)
            f[TAKE] = min(best, BIG) / BIG
            f[TAKE + 1] = ok
            t[:] = s
    elif a == K.ENCOUNTER_NOW:
        kind_col = 3
        _tile(f, s[K.HAND])
        _encounter(f, t, level)
    elif a <= K.PLACE_LEFT:  # place, or Pyro's move
        kind_col = 4 if phase == K.DEFENDER_PHASE else 5
        _place(f, s, a, level, t, u, avail, before, cost_before)
    elif a == K.DISCARD or a == K.DISCARD_POWER:
        kind_col = 6 if a == K.DISCARD else 7
        _tile(f, s[K.HAND])
    elif a == K.PLACE_TRAITOR or a == K.DISCARD_TRAITOR:
        kind_col = 8 if a == K.PLACE_TRAITOR else 9
        _traitor(f, s, a, level, t, before)
    elif a < K.SWAP:  # destroy
        kind_col = 10
        cell = a - K.DESTROY
        _take_tile(f, t, s, level, avail, u, before, cost_before, cell // SIZE, cell % SIZE)
    elif a < K.REVEAL:  # Juggler swap
        kind_col = 11
        i = a - K.SWAP
        x, y = K.SWAP_A[i], K.SWAP_B[i]
        _tile(f, s[K.CELL + x])
        f[WHERE] = (x // SIZE) / 5.0
        f[WHERE + 1] = (x % SIZE) / 5.0
        f[WHERE + 4] = y - x == SIZE
        t[K.CELL + x], t[K.CELL + y] = s[K.CELL + y], s[K.CELL + x]
        _castle(f, t, s, level, avail, u, before, cost_before)
    elif a < K.RECOVER:  # Seer reveal
        kind_col = 12 + a - K.REVEAL
        _pile(f, s, a == K.REVEAL)
    elif a < K.LIFT:  # Chameleon recover
        kind_col = 14
        kind = a - K.RECOVER
        _tile(f, kind)
        best, ok = _best_placement(s, t, u, m, level, rules, kind, avail)
        f[TAKE] = min(best, BIG) / BIG
        f[TAKE + 1] = ok
        t[:] = s
    elif a < K.REVEAL_ORDEAL:  # Pyro lift
        kind_col = 15
        c = a - K.LIFT
        _take_tile(f, t, s, level, avail, u, before, cost_before, s[K.HEIGHT + c] - 1, c)
    else:  # turn up an ordeal
        kind_col = 16
        f[SLOT + a - K.REVEAL_ORDEAL] = 1.0
    f[kind_col] = 1.0
    if not (
        K.DESTROY <= a < K.REVEAL or K.LIFT <= a < K.REVEAL_ORDEAL or K.PLACE <= a <= K.PLACE_LEFT
    ):
        f[AFTER : COST + 5] = base[AFTER : COST + 5]  # the castle stays as it is


@njit(cache=True)
def _context(f: np.ndarray, s: np.ndarray, level: int, cost_before: float) -> None:
    f[CONTEXT + level] = 1.0
    slot = s[K.CURRENT]
    f[CONTEXT + 3] = slot / 3.0
    if slot < 3:
        f[CONTEXT + 4] = s[K.FACE + slot] != 0
        if not s[K.FACE + slot]:
            f[CONTEXT + 5 + _KIND[s[K.ORD + slot]]] = 1.0
        f[ORDEAL] = max(
            f[ORDEAL], min(s[K.BESIDE + 2 * slot] + s[K.BESIDE + 2 * slot + 1], 5) / 5.0
        )
    f[CONTEXT + 8] = min(cost_before, BIG) / BIG
    f[CONTEXT + 9] = s[K.REG_N] / 72.0
    f[CONTEXT + 10] = s[K.SAFE_N] / 12.0
    f[CONTEXT + 11] = s[K.DLEFT] / 42.0


@njit(cache=True)
def move_rows(
    s: np.ndarray,
    level: int,
    rules: int,
    feats: np.ndarray,
    ids: np.ndarray,
    valid: np.ndarray,
    t: np.ndarray,
    u: np.ndarray,
    m: np.ndarray,
) -> int:
    """The rows of the position in ``s``; returns its number of legal moves (rows past
    ``feats.shape[0]`` are dropped: the default capacity holds every action)."""
    for k in range(ids.shape[0]):
        ids[k] = 0
        valid[k] = False
        for j in range(feats.shape[1]):
            feats[k, j] = 0.0
    if s[K.PHASE] == K.OVER:
        return 0
    K.compute_mask(s, level, rules, m)
    avail = _avail(s)
    before = K.formations(s)
    cost_before = _slot_cost(s, level, s[K.CURRENT], avail)
    base = np.zeros(NUM_FEATURES, np.float32)
    _castle(base, s, s, level, avail, t, before, cost_before)
    legal = 0
    for a in range(K.NUM_ACTIONS):
        if not m[a]:
            continue
        if legal < feats.shape[0]:
            ids[legal] = a
            valid[legal] = True
            _fill(
                feats[legal],
                s,
                a,
                level,
                rules,
                t,
                u,
                m[K.MASK_WIDTH :],
                avail,
                before,
                cost_before,
                base,
            )
            _context(feats[legal], s, level, cost_before)
        legal += 1
    return legal


@njit(cache=True)
def move_rows_batch(
    st: np.ndarray,
    level: int,
    rules: int,
    feats: np.ndarray,
    ids: np.ndarray,
    valid: np.ndarray,
    legal: np.ndarray,
    t: np.ndarray,
    u: np.ndarray,
    m: np.ndarray,
) -> None:
    """``move_rows`` for every row of a batch; ``legal[i]`` gets env i's legal move count."""
    for i in range(st.shape[0]):
        legal[i] = move_rows(st[i], level, rules, feats[i], ids[i], valid[i], t, u, m)


class Scratch:
    """The scratch rows ``move_rows`` works in (one set per thread)."""

    def __init__(self) -> None:
        from castle_envs.core.batched import state_dtype

        self.t = np.zeros(K.WORDS, state_dtype())
        self.u = np.zeros(K.WORDS, state_dtype())
        # the position's mask, then room for a placement mask
        self.m = np.zeros(2 * K.MASK_WIDTH, np.bool_)

    def args(self) -> tuple:
        return self.t, self.u, self.m


LEVEL_INDEX = {name: i for i, name in enumerate(LEVELS)}


class CastellionMoves(KernelMoves):
    """Castellion move views from a rules ``State`` or from kernel rows (one compiled
    kernel, this module's ``move_rows``, for the Python, compiled and batched envs)."""

    game = "castellion"

    def __init__(self, capacity: int = 137) -> None:
        from castle_envs.core.batched import state_dtype

        super().__init__(capacity, NUM_FEATURES)
        self._M, self._K = sys.modules[__name__], K
        self.scratch = Scratch()
        self._s = np.zeros(K.WORDS, state_dtype())

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        return FEATURES

    def observation(self, state: State) -> np.ndarray:
        from castle_envs.castellion.observation import encode

        return encode(state)

    def from_rows(self, s: np.ndarray, level: int, rules: int, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel row; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        return int(
            self._M.move_rows(
                s, level, rules, out["move_features"], out["move_ids"], valid, *self.scratch.args()
            )
        )

    def from_state(self, state: State, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castellion.rules.State`` (and its legal move count)."""
        from castle_envs.castellion.vector import write_state

        out = self.empty() if out is None else out
        rules = state.rule_options()
        write_state(self._s, state, state.level, rules)
        return out, self.from_rows(self._s, state.level, self._K.rule_flags(rules), out)

    def from_env(self, env: Any, out: dict) -> int:
        """Fill ``out`` from the compiled single env ``env`` (``CompiledCastellionEnv``)."""
        return self.from_rows(env._s, env.level_index, env.rule_flags, out)

    def batch(self, st: np.ndarray, level: int, rules: int, out: dict, legal: np.ndarray) -> None:
        self._batch((st, level, rules), out, legal)
