"""The Castellion planner's position value in plain Python (``PlannerPolicy.value`` as it was
written before it was compiled into ``vector.castellion_moves.planner_value``): the
reference the compiled value is checked against, bit for bit."""

from __future__ import annotations

import numpy as np

from castle_envs.castellion import kernel as K
from castle_envs.castellion.data import (
    ASSAULT,
    BLACK_TRAITOR,
    MENACE,
    NUM_DEFENDER_KINDS,
    ORDEALS,
    ORDEALS_BY_SLOT,
    ROWS,
    TRAITOR,
)
from castle_envs.castellion.rules import CELLS, REVEAL_ORDEAL_PHASE, SIZE, State
from castle_envs.vector.castellion_plan import bastions, castle_cost, orders_for

WIN, LOSS = 1e6, -1e6
_ORDERS = [orders_for(c.towers, c.bastions, c.lines) for c in ORDEALS]
_NO_ORDER = orders_for(0, 0, 0)


def _avail_of(w: list, regular: list) -> np.ndarray:
    avail = [0, 0, 0, 0]
    for pile in (
        regular,
        w[K.SAFE : K.SAFE + w[K.SAFE_N]],
        w[K.REV : K.REV + w[K.REV_N]],
        (w[K.HAND], w[K.LIFTED]),
    ):
        for k in pile:
            if 0 <= k < NUM_DEFENDER_KINDS:
                avail[k // 3] += 1
    return np.array(avail, np.int64)


def _drop_rows(cells: np.ndarray, rows: int) -> np.ndarray:
    grid = cells.reshape(SIZE, SIZE)[rows:]
    out = np.full((SIZE, SIZE), -1, np.int8)
    cols = [c for c in range(SIZE) if grid[0, c] >= 0] if len(grid) else []
    for i, c in enumerate(cols):
        out[: len(grid), i] = grid[:, c]
    return out.reshape(-1)


def _card_cost(cells, card_id: int, avail, size: int, bast: int) -> float:
    card = ORDEALS[card_id]
    if card.kind == ROWS:
        return castle_cost(cells, _NO_ORDER, avail, card.rows + 1)
    plan = castle_cost(cells, _ORDERS[card_id], avail, 1)
    if card.kind == ASSAULT and plan > 0:
        left = max(0, card.penalty - 4 * bast)
        if left + SIZE <= CELLS:
            found = sum(1 for c in range(SIZE) if cells[c] < 0)
            plan = min(plan, max(0, left + SIZE - size, found))
    return float(plan)


def reference_costs(state: State) -> list[float]:
    """The plan costs of the lowest unresolved ordeal and the two after it (0 past the last),
    each later one on the castle the face-up row-removal cards before it leave."""
    w = state.s.tolist()
    cells = np.array(state.cells, np.int8)
    level, current = state.level, w[K.CURRENT]
    avail = _avail_of(w, w[K.REG : K.REG + w[K.REG_N]])
    ordeals, face = w[K.ORD : K.ORD + 3], w[K.FACE : K.FACE + 3]
    size = sum(w[K.HEIGHT : K.HEIGHT + SIZE])
    bast = bastions(cells)
    costs = []
    for slot in range(current, 3):
        cards = ORDEALS_BY_SLOT[level][slot] if face[slot] else (ordeals[slot],)
        costs.append(sum(_card_cost(cells, c, avail, size, bast) for c in cards) / len(cards))
        card = ORDEALS[ordeals[slot]]
        if not face[slot] and card.kind == ROWS:
            cells = _drop_rows(cells, card.rows)
            size = int((cells >= 0).sum())
            bast = bastions(cells)
    return costs + [0.0] * (3 - len(costs))


def reference_value(
    state: State, weights=(1.0, 0.3, 0.1), pressure=0.5, useful=0.4, grow=8.0, info=30.0
) -> float:
    w = state.s.tolist()
    outcome = w[K.OUTCOME]
    if outcome:
        return WIN if outcome > 0 else LOSS
    level, current, phase = state.level, w[K.CURRENT], w[K.PHASE]
    regular = w[K.REG : K.REG + w[K.REG_N]]
    traitors = regular.count(TRAITOR) + regular.count(BLACK_TRAITOR)
    ordeals, face = w[K.ORD : K.ORD + 3], w[K.FACE : K.FACE + 3]
    castle_size = sum(w[K.HEIGHT : K.HEIGHT + SIZE])
    total = 1000.0 * current
    costs = reference_costs(state)
    for slot in range(current, 3):
        total -= weights[slot - current] * costs[slot - current]
    cost0 = costs[0]
    slot = current
    need = 2 if face[slot] else ORDEALS[ordeals[slot]].traitors
    left = need - w[K.BESIDE + 2 * slot] - w[K.BESIDE + 2 * slot + 1]
    gap = (len(regular) - traitors) / (traitors + 1)
    slack = useful * ((left - 1 + 0.5) * gap + w[K.SAFE_N])
    total -= pressure * max(0.0, cost0 - slack)
    if level == MENACE:
        total += grow * castle_size
        down = sum(face[current:]) - (phase == REVEAL_ORDEAL_PHASE)
        total -= info * down
    return total
