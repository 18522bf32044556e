"""Castellion formation planner: how many more tiles a castle needs to meet an ordeal.

``castle_cost`` answers, for one castle and one requirement (towers, bastions, lines, and
the rows that must be complete), an estimate of the tiles still to place: it picks, greedily
and for every order of the required formation kinds, one *formation site* per required
formation (a pattern of cells, a faction), and counts the empty cells of the chosen sites,
the empty cells under them (a tile stands on a tile) and the empty foundation cells. A site
is usable only when

- its filled cells already hold its faction, and no tile of its faction touches it from
  outside (that tile would join the group and cancel the formation);
- none of its empty cells (or the cells under them) is *dead*: an empty cell whose filled
  neighbours below, left and right already show all three shapes can never be filled
  (rule 3);
- it does not overlap another chosen site, nor touch one of its own faction;
- the unseen tiles of its faction (the piles and the revealed tiles: public by counting)
  can still fill the chosen sites of that faction.

The castle may still grow to either side while it is narrower than 6: every placement of
the castle in a 6-wide frame is tried and the cheapest kept. Everything here reads the
castle and tile counts only; nothing hidden.
"""

from __future__ import annotations

import itertools

import numpy as np

from castle_envs.castellion.kernel import component, popcount, shape_of_group
from castle_envs.core.jit import njit

SIZE = 6
BIG = 60
_ROW0 = (1 << SIZE) - 1
_COL0 = sum(1 << (r * SIZE) for r in range(SIZE))
_NOT_COL0 = ((1 << 36) - 1) & ~_COL0
_NOT_COL5 = ((1 << 36) - 1) & ~(_COL0 << (SIZE - 1))


def _sites() -> tuple:
    """Every formation pattern in the 6 x 6 frame: (kind, cells, outside neighbours,
    cells under it), kind 0 tower, 1 bastion, 2 line (the order of ``formations()``)."""
    out = []
    shapes = {
        0: [(0, 0), (1, 0), (2, 0), (3, 0)],  # (row, col) offsets
        1: [(0, 0), (0, 1), (1, 0), (1, 1)],
        2: [(0, 0), (0, 1), (0, 2), (0, 3)],
    }
    for kind, offs in shapes.items():
        rows = 1 + max(r for r, _ in offs)
        cols = 1 + max(c for _, c in offs)
        for r0 in range(SIZE - rows + 1):
            for c0 in range(SIZE - cols + 1):
                cells = [(r0 + r, c0 + c) for r, c in offs]
                p = sum(1 << (r * SIZE + c) for r, c in cells)
                n = 0
                under = 0
                for r, c in cells:
                    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                        rr, cc = r + dr, c + dc
                        if 0 <= rr < SIZE and 0 <= cc < SIZE:
                            n |= 1 << (rr * SIZE + cc)
                    for rr in range(r):
                        under |= 1 << (rr * SIZE + c)
                out.append((kind, p, n & ~p, under & ~p))
    out.sort(key=lambda s: s[0])
    kinds = np.array([s[0] for s in out], np.int64)
    starts = np.searchsorted(kinds, np.arange(4)).astype(np.int64)
    return (
        starts,
        np.array([s[1] for s in out], np.int64),
        np.array([s[2] for s in out], np.int64),
        np.array([s[3] for s in out], np.int64),
    )


SITE_START, SITE_P, SITE_N, SITE_U = _sites()


def orders_for(towers: int, bastions: int, lines: int) -> np.ndarray:
    """Every distinct order of the required formation kinds (rows of kind ids)."""
    items = [0] * towers + [1] * bastions + [2] * lines
    if not items:
        return np.zeros((1, 0), np.int64)
    perms = sorted(set(itertools.permutations(items)))
    return np.array(perms, np.int64)


@njit(cache=True)
def frame(cells: np.ndarray, off: int, fb: np.ndarray, sb: np.ndarray) -> int:
    """The castle's boards shifted ``off`` columns right in the frame; returns occupied."""
    occ = 0
    for f in range(4):
        fb[f] = 0
    for s in range(3):
        sb[s] = 0
    for r in range(SIZE):
        for c in range(SIZE - off):
            k = cells[r * SIZE + c]
            if k >= 0:
                bit = np.int64(1) << (r * SIZE + c + off)
                occ |= bit
                fb[k // 3] |= bit
                sb[k % 3] |= bit
    return occ


@njit(cache=True)
def dead_cells(occ: int, sb: np.ndarray) -> int:
    """Empty cells above the foundation that no shape may fill (rule 3)."""
    dead = ~occ & ~np.int64(_ROW0) & np.int64((1 << 36) - 1)
    for s in range(3):
        b = sb[s]
        touch = (b << SIZE) | ((b << 1) & _NOT_COL0) | ((b >> 1) & _NOT_COL5)
        dead &= touch
    return dead


@njit(cache=True)
def _plan(
    occ: int,
    fb: np.ndarray,
    dead: int,
    order: np.ndarray,
    avail: np.ndarray,
    need_rows: int,
    sp: np.ndarray,
    sn: np.ndarray,
    su: np.ndarray,
    starts: np.ndarray,
    chosen_p: np.ndarray,
    chosen_f: np.ndarray,
) -> int:
    """Tiles still needed for the formations of ``order`` (kind ids) plus the complete
    rows ``need_rows`` (a mask); BIG when some formation has no usable site."""
    union = np.int64(0)
    used = np.zeros(4, np.int64)
    total = 0
    n = order.shape[0]
    for step in range(n):
        kind = order[step]
        best = BIG
        best_i = -1
        best_f = -1
        for i in range(starts[kind], starts[kind + 1]):
            p = sp[i]
            need = (p | su[i]) & ~occ
            if need & dead:
                continue
            empties = popcount(p & ~occ)
            extra = popcount(need & ~union)
            if extra >= best:
                continue
            for f in range(4):
                if p & occ & ~fb[f]:
                    continue
                if sn[i] & fb[f]:
                    continue
                if used[f] + empties > avail[f]:
                    continue
                ok = True
                for j in range(step):
                    if chosen_p[j] & p:
                        ok = False
                        break
                    if chosen_f[j] == f and (chosen_p[j] & sn[i]):
                        ok = False
                        break
                if not ok:
                    continue
                best = extra
                best_i = i
                best_f = f
                break
        if best_i < 0:
            return BIG
        p = sp[best_i]
        chosen_p[step] = p
        chosen_f[step] = best_f
        used[best_f] += popcount(p & ~occ)
        union |= (p | su[best_i]) & ~occ
        total += best
    total += popcount(need_rows & ~occ & ~union)
    total += 3 * popcount(need_rows & dead)
    return total


@njit(cache=True)
def castle_cost(cells: np.ndarray, orders: np.ndarray, avail: np.ndarray, rows: int) -> int:
    """The fewest tiles (estimated) that ``cells`` (36 kinds, -1 empty, left-aligned) needs
    to hold one formation per entry of an ``orders`` row and complete rows 0..``rows``-1,
    over every order of the formations and every placement of the castle in the frame."""
    width = 0
    for c in range(SIZE):
        if cells[c] >= 0:
            width = c + 1
    fb = np.zeros(4, np.int64)
    sb = np.zeros(3, np.int64)
    need_rows = np.int64(0)
    for r in range(rows):
        need_rows |= np.int64(_ROW0) << (r * SIZE)
    n = orders.shape[1]
    chosen_p = np.zeros(max(n, 1), np.int64)
    chosen_f = np.zeros(max(n, 1), np.int64)
    best = BIG
    for off in range(SIZE - width + 1):
        occ = frame(cells, off, fb, sb)
        dead = dead_cells(occ, sb)
        for o in range(orders.shape[0]):
            c = _plan(
                occ,
                fb,
                dead,
                orders[o],
                avail,
                need_rows,
                SITE_P,
                SITE_N,
                SITE_U,
                SITE_START,
                chosen_p,
                chosen_f,
            )
            if c < best:
                best = c
        if width == 0:
            break
    return best


@njit(cache=True)
def bastions(cells: np.ndarray) -> int:
    """The bastions now in the castle ``cells`` (36 kinds, -1 empty): groups of exactly four
    tiles of one faction in a 2 x 2 square (``State.formations()[1]``, compiled)."""
    count = 0
    for f in range(4):
        board = np.int64(0)
        for i in range(SIZE * SIZE):
            k = cells[i]
            if k >= 0 and k // 3 == f:
                board |= np.int64(1) << np.int64(i)
        while board:
            comp = component(board, board & -board)
            board &= ~comp
            if shape_of_group(comp) == 1:
                count += 1
    return count
