"""Castellion baseline: a one-step planner over the castle's shape.

It reads only what the player sees: the castle, the tile in hand, the revealed tiles, the
discard pile, the Traitors beside each ordeal, the face-up ordeal cards (a face-down
card's requirement is unknown to it) and the piles' sizes, never their order.
"""

from __future__ import annotations

import numpy as np

from castle_envs.castellion.actions import (
    DESTROY,
    DISCARD,
    DISCARD_TRAITOR,
    DRAW,
    ENCOUNTER_NOW,
    PLACE,
    PLACE_LEFT,
    PLACE_TRAITOR,
    REVEAL,
    TAKE_REVEALED,
)
from castle_envs.castellion.data import ASSAULT, FORMATIONS, ORDEALS, ORDEALS_BY_SLOT, ROWS
from castle_envs.castellion.rules import (
    DEFENDER_PHASE,
    DESTROY_PHASE,
    DRAW_PHASE,
    JUGGLE_PHASE,
    LIFT_PHASE,
    MOVE_PHASE,
    REVEAL_PHASE,
    SIZE,
    TRAITOR_PHASE,
    component,
)

# unknown (face-down) ordeal: plan for two of each formation
_UNKNOWN_NEED = (2, 2, 2)


def _need(state, slot: int) -> tuple[int, int, int]:
    if slot >= 3:
        return (0, 0, 0)
    if state.face_down[slot]:
        return _UNKNOWN_NEED
    card = ORDEALS[state.ordeals[slot]]
    if card.kind == ROWS:
        return (0, 0, 0)
    return (card.towers, card.bastions, card.lines)


def _bbox(comp: int) -> tuple[int, int]:
    r_lo = c_lo = SIZE
    r_hi = c_hi = -1
    while comp:
        bit = comp & -comp
        i = bit.bit_length() - 1
        r, c = divmod(i, SIZE)
        r_lo, r_hi, c_lo, c_hi = min(r_lo, r), max(r_hi, r), min(c_lo, c), max(c_hi, c)
        comp ^= bit
    rows, cols = r_hi - r_lo + 1, c_hi - c_lo + 1
    return rows, cols


def castle_score(state) -> float:
    """How well the castle serves the ordeals: each required formation of the lowest
    unresolved ordeal (then the next) that stands, the foundation's width (every ordeal
    needs it complete), and same-faction groups still on their way to a formation (a group
    that fits a line, a tower or a bastion scores by its size; an oversized one costs)."""
    if state.outcome == 1:
        return 1e6
    if state.outcome == -1:
        return -1e6
    towers, bastions, lines = state.formations()
    have = (towers, bastions, lines)
    score = 400.0 * state.current
    for weight, slot in ((40.0, state.current), (10.0, state.current + 1)):
        need = _need(state, slot)
        score += weight * sum(min(h, n) for h, n in zip(have, need))
    score += 6.0 * (towers + bastions + lines)
    score += 8.0 * state.width + (30.0 if state.foundation_complete() else 0.0)
    for board in state.faction_boards():
        while board:
            comp = component(board, board & -board)
            board &= ~comp
            k = comp.bit_count()
            if k >= 4:
                continue  # a formation (counted above) or a group too big to become one
            rows, cols = _bbox(comp)
            if (rows == 1 and cols <= 4) or (cols == 1 and rows <= 4) or (rows <= 2 and cols <= 2):
                score += 1.5 * k * k
    # oversized groups: tiles that no formation can use
    score -= 3.0 * (state.castle_size - 4 * (towers + bastions + lines))
    score += 0.5 * state.castle_size * 4
    return score


def heuristic_potential(state) -> float:
    """``castle_score`` scaled so one ordeal is worth about 1: the position value that
    ``shaping: heuristic_potential`` (a training config's key) makes a potential of."""
    return castle_score(state) / 400.0


def _visible_clone(state):
    """A copy to plan on that holds nothing the player has not seen: each face-down ordeal
    is replaced by the first card of its slot (a move that fills the castle or plays the
    last tile resolves ordeals inside the step). The piles' order needs no hiding: the
    moves planned on (placing, destroying, swapping, Pyro's move) draw nothing. Handed the
    player's view, the copy's guard is lifted: what a step may turn up is the card set here,
    not a hidden one."""
    other = state.clone()
    for slot in range(3):
        if state.face_down[slot]:
            other.ordeals[slot] = ORDEALS_BY_SLOT[state.level][slot][0]
    other.hidden = False
    return other


def _after(state, action: int) -> float:
    other = _visible_clone(state)
    other.apply_legal(action)
    return castle_score(other)


def _best(state, actions) -> int:
    return max(actions, key=lambda a: (_after(state, a), -a))


def _encounter_ready(state) -> bool:
    """The lowest ordeal is face up and the castle passes it now."""
    slot = state.current
    if slot >= 3 or state.face_down[slot] or not state.foundation_complete():
        return False
    card = ORDEALS[state.ordeals[slot]]
    if card.kind == ROWS:
        return min(state.heights) > card.rows
    towers, bastions, lines = state.formations()
    return towers >= card.towers and bastions >= card.bastions and lines >= card.lines


def heuristic_policy(state, rng: np.random.Generator) -> int:
    """Castellion heuristic.

    * **Turn start**: meet the lowest ordeal early when the castle passes it now (face-up
      card, formations present, foundation complete); else take the revealed tile that
      places best; else draw from the regular pile (the safe pile, Defenders only, is kept
      for when the lowest ordeal is one Traitor from its encounter and not yet met).
    * **Defender**: the placement that most raises ``castle_score`` (deterministic: the
      planner copies the castle and tries each column); discarded when every placement
      lowers the score.
    * **Traitor**: placed beside the ordeal unless that triggers an encounter the castle
      fails (or a face-down one), and discarding (destroying up to 4 tiles) is allowed.
    * **Destroy / Juggler swap / Pyro lift and move**: the choice that leaves the best
      ``castle_score``. Seer reveals from the regular pile; other choices: the first legal.
    """
    mask = state.legal_action_mask()
    legal = np.flatnonzero(mask).tolist()
    phase = state.phase
    if len(legal) == 1:
        return legal[0]
    if phase == DRAW_PHASE:
        if mask[ENCOUNTER_NOW] and _encounter_ready(state):
            return ENCOUNTER_NOW
        taken = [a for a in legal if TAKE_REVEALED <= a < ENCOUNTER_NOW]
        if taken:
            return max(
                taken, key=lambda a: (_best_placement(state, state.revealed[a - TAKE_REVEALED]), -a)
            )
        slot = state.current
        need = (
            2
            if slot < 3 and state.face_down[slot]
            else (ORDEALS[state.ordeals[slot]].traitors if slot < 3 else 99)
        )
        close = slot < 3 and sum(state.beside[slot]) + 1 >= need and not _encounter_ready(state)
        if mask[DRAW + 1] and (close or not mask[DRAW]):
            return DRAW + 1
        return DRAW if mask[DRAW] else legal[0]
    if phase == DEFENDER_PHASE:
        places = [a for a in legal if PLACE <= a <= PLACE_LEFT]
        base = castle_score(state)
        if places:
            best = _best(state, places)
            if _after(state, best) >= base - 5.0 or not mask[DISCARD]:
                return best
        return DISCARD if mask[DISCARD] else legal[0]
    if phase == TRAITOR_PHASE:
        if not mask[DISCARD_TRAITOR]:
            return PLACE_TRAITOR
        slot = state.current
        need = 2 if state.face_down[slot] else ORDEALS[state.ordeals[slot]].traitors
        triggers = sum(state.beside[slot]) + 1 >= need
        if not triggers:
            return PLACE_TRAITOR
        if state.face_down[slot]:
            return DISCARD_TRAITOR
        card = ORDEALS[state.ordeals[slot]]
        if _encounter_ready(state):
            return PLACE_TRAITOR
        if card.kind in (ASSAULT, ROWS) and state.castle_size <= 4:
            return PLACE_TRAITOR
        return (
            DISCARD_TRAITOR if card.kind == FORMATIONS or state.castle_size > 4 else PLACE_TRAITOR
        )
    if phase in (DESTROY_PHASE, JUGGLE_PHASE, LIFT_PHASE, MOVE_PHASE):
        options = [a for a in legal if a >= DESTROY] if phase != MOVE_PHASE else legal
        if phase == LIFT_PHASE:
            return max(options, key=lambda a: (_best_after_lift(state, a), -a))
        return _best(state, options)
    if phase == REVEAL_PHASE:
        return REVEAL if mask[REVEAL] else REVEAL + 1
    return legal[0]


def _best_placement(state, kind: int) -> float:
    other = _visible_clone(state)
    other.hand = kind
    other.phase = DEFENDER_PHASE if kind < 12 else TRAITOR_PHASE
    other._mask = None
    if kind >= 12:
        return castle_score(state) - 20.0
    places = [
        a for a in np.flatnonzero(other.legal_action_mask()).tolist() if PLACE <= a <= PLACE_LEFT
    ]
    return max((_after(other, a) for a in places), default=castle_score(state) - 10.0)


def _best_after_lift(state, lift: int) -> float:
    other = _visible_clone(state)
    other.apply_legal(lift)
    moves = np.flatnonzero(other.legal_action_mask()).tolist()
    return max((_after(other, a) for a in moves), default=-1e9)
