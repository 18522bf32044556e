"""The Castellion planner's decisions, compiled: ``agents.castellion_planner`` over kernel rows.

``planner_move(s, level, rules, prm)`` is ``PlannerPolicy.__call__`` for the position in the
kernel row ``s`` (``castellion.kernel``'s layout); ``after_value(s, action, level, rules,
prm)`` and ``one_step_value(...)`` are its ``value_after`` and ``one_step``; ``prm`` holds the
planner's options in ``PARAMS`` order. The agent's module docstring says what the planner
does and why; this module does it move for move and value for value (ties broken the same
way, the arithmetic in the same order), which ``tests/agents/test_castellion_planner.py``
checks against the plain-Python planner kept in ``tests/reference/castellion_planner.py``.

Everything here plays moves on copies of the player's view (``view``: the piles sorted, a
face-down card set to its slot's first card) and never draws: a face-down card is replaced by
each card its slot may hold in turn.
"""

from __future__ import annotations

import numpy as np

from castle_envs.castellion import kernel as K
from castle_envs.castellion.data import PYRO, SEER
from castle_envs.castellion.moves import planner_value
from castle_envs.core.jit import njit

#: the order of the planner's options in ``prm``
PARAMS = ("w0", "w1", "w2", "pressure", "useful", "grow", "info", "pyro", "reveal", "scout")
WIN, LOSS = 1e6, -1e6
_BY_SLOT, _BY_SLOT_N = K._BY_SLOT, K._BY_SLOT_N
ORD_KIND, ORD_TRAITORS = K.ORD_KIND, K.ORD_TRAITORS
_POWER_PHASES = (K.JUGGLE_PHASE, K.RECOVER_PHASE, K.MOVE_PHASE, K.LIFT_PHASE)


def params(weights, pressure, useful, grow, info, pyro, reveal, scout) -> np.ndarray:
    """``prm`` for the compiled functions, from the planner's options."""
    return np.array(
        [weights[0], weights[1], weights[2], pressure, useful, grow, info, pyro, reveal, scout],
        np.float64,
    )


@njit(cache=True)
def value(s, level, prm):
    """``PlannerPolicy.value``: the score of the position in ``s``."""
    outcome = s[K.OUTCOME]
    if outcome:
        return WIN if outcome > 0 else LOSS
    u = np.empty_like(s)
    return planner_value(s, u, level, prm[0:3], prm[3], prm[4], prm[5], prm[6], prm[9])


@njit(cache=True)
def legal(s, level, rules):
    """The legal action ids of ``s`` in increasing order."""
    m = np.zeros(K.MASK_WIDTH, np.bool_)
    K.compute_mask(s, level, rules, m)
    out = np.empty(K.NUM_ACTIONS, np.int64)
    n = 0
    for a in range(K.NUM_ACTIONS):
        if m[a]:
            out[n] = a
            n += 1
    return out[:n]


@njit(cache=True)
def view_of(s, level):
    """The player's view the planner models (``PlannerPolicy.visible``): a copy of ``s``
    with both piles in kind order and each face-down card its slot's first card."""
    v = s.copy()
    n = v[K.REG_N]
    v[K.REG : K.REG + n] = np.sort(v[K.REG : K.REG + n])
    n = v[K.SAFE_N]
    v[K.SAFE : K.SAFE + n] = np.sort(v[K.SAFE : K.SAFE + n])
    for slot in range(3):
        if v[K.FACE + slot]:
            v[K.ORD + slot] = _BY_SLOT[level, slot, 0]
    return v


@njit(cache=True)
def choices(s, level, rules):
    """``PlannerPolicy.move_choices``: the legal moves; a Pyro's destruction only of top tiles
    (all of them when none is a top tile)."""
    moves = legal(s, level, rules)
    if s[K.PHASE] != K.DESTROY_PHASE or s[K.DREASON] != K.PYRO_DESTROY:
        return moves
    keep = np.zeros(moves.shape[0], np.bool_)
    any_top = False
    for i in range(moves.shape[0]):
        cell = moves[i] - K.DESTROY
        c = cell % K.SIZE
        if s[K.HEIGHT + c] and cell == (s[K.HEIGHT + c] - 1) * K.SIZE + c:
            keep[i] = True
            any_top = True
    if not any_top:
        return moves
    return moves[keep]


@njit(cache=True)
def one_step_value(s, action, level, prm):
    """``PlannerPolicy.one_step``: the value after ``action`` (nothing settled)."""
    o = s.copy()
    K.apply(o, action, level)
    return value(o, level, prm)


@njit(cache=True)
def tallest_top(s, moves):
    """The top tile of the tallest column that may lose one (``_tallest_top``)."""
    best = moves[0]
    best_h = -1
    best_c = -1
    for a in moves:
        cell = a - K.DESTROY
        r, c = cell // K.SIZE, cell % K.SIZE
        h = s[K.HEIGHT + c]
        if r != h - 1:
            continue
        if best_h < 0 or h > best_h or (h == best_h and c > best_c):
            best, best_h, best_c = a, h, c
    return best


@njit(cache=True)
def _best_by_one_step(s, moves, level, prm):
    """The move of the highest one-step value, the lowest id among equals."""
    best = moves[0]
    best_v = one_step_value(s, best, level, prm)
    for a in moves[1:]:
        v = one_step_value(s, a, level, prm)
        if v > best_v:
            best, best_v = a, v
    return best


@njit(cache=True)
def settle(s, level, rules, prm):
    """``PlannerPolicy._settle``: finish the destructions a move forces."""
    while s[K.PHASE] == K.DESTROY_PHASE and s[K.DREASON] != K.PYRO_DESTROY:
        moves = legal(s, level, rules)
        if s[K.DLEFT] > 4:
            action = tallest_top(s, moves)
        else:
            action = _best_by_one_step(s, moves, level, prm)
        K.apply(s, action, level)


@njit(cache=True)
def _cards(s, level):
    """How many cards the lowest ordeal may be as the planner deals them: every card of its
    slot while it is face down, else its own."""
    slot = s[K.CURRENT]
    return _BY_SLOT_N[level, slot] if s[K.FACE + slot] else 1


@njit(cache=True)
def _outcome(s, action, j, level, rules, prm):
    """The position ``action`` leads to with the lowest ordeal, when face down, dealt as the
    ``j``-th card its slot may hold; forced destructions finished (``_outcomes``)."""
    slot = s[K.CURRENT]
    o = s.copy()
    if s[K.FACE + slot]:
        o[K.ORD + slot] = _BY_SLOT[level, slot, j]
    K.apply(o, action, level)
    settle(o, level, rules, prm)
    return o


@njit(cache=True)
def _last_card(s, o):
    """No other card need be dealt after the outcome ``o`` of a move in ``s``: the ordeal is
    face up, or the move did not turn it up (no card could change it)."""
    slot = s[K.CURRENT]
    return not s[K.FACE + slot] or (o[K.FACE + slot] and s[K.PHASE] != K.TRAITOR_PHASE)


@njit(cache=True)
def after_value(s, action, level, rules, prm):
    """``PlannerPolicy.value_after``: ``action``'s value, averaged over the cards a face-down
    lowest ordeal may be when the move may resolve it, with the best choice of any power or
    move the position then waits on (``_best_value``)."""
    total = 0.0
    count = 0
    for j in range(_cards(s, level)):
        o = _outcome(s, action, j, level, rules, prm)
        phase = o[K.PHASE]
        pyro = phase == K.DESTROY_PHASE and o[K.DREASON] == K.PYRO_DESTROY
        if phase in _POWER_PHASES or pyro or phase == K.DEFENDER_PHASE:
            moves = choices(o, level, rules)
            best = 0.0
            first = True
            for b in moves:
                if phase == K.DEFENDER_PHASE and b == K.DISCARD_POWER:
                    continue
                v = after_value(o, b, level, rules, prm)
                if first or v > best:
                    best = v
                    first = False
            total += best
        else:
            total += value(o, level, prm)
        count += 1
        if _last_card(s, o):
            break
    return total / count


@njit(cache=True)
def _best_after(s, moves, level, rules, prm, bonus_move, bonus):
    """The move of the highest ``after_value`` (+ ``bonus`` for ``bonus_move``), the lowest
    id among equals."""
    best = -1
    best_v = 0.0
    for a in moves:
        v = after_value(s, a, level, rules, prm)
        if a == bonus_move:
            v += bonus
        if best < 0 or v > best_v:
            best, best_v = a, v
    return best


@njit(cache=True)
def _passes_now(v, level, rules, prm):
    """Every card the lowest ordeal may be is passed now, without penalty."""
    before = v[K.CURRENT]
    for j in range(_cards(v, level)):
        o = _outcome(v, K.ENCOUNTER_NOW, j, level, rules, prm)
        if (
            o[K.OUTCOME] < 0
            or o[K.CURRENT] == before
            or (K.castle_size(o) < K.castle_size(v) and ORD_KIND[o[K.ORD + before]] == K.K_ASSAULT)
        ):
            return False
        if _last_card(v, o):
            break
    return True


@njit(cache=True)
def _passes_if_triggered(v, level):
    slot = v[K.CURRENT]
    for j in range(_cards(v, level)):
        o = v.copy()
        if v[K.FACE + slot]:
            o[K.ORD + slot] = _BY_SLOT[level, slot, j]
        if not K.encounter(o):
            return False  # a penalty to pay
        if o[K.OUTCOME] < 0:
            return False
    return True


@njit(cache=True)
def _next_traitor_triggers(v, level):
    slot = v[K.CURRENT]
    need = 2 if v[K.FACE + slot] else ORD_TRAITORS[v[K.ORD + slot]]
    if np.int64(v[K.BESIDE + 2 * slot]) + np.int64(v[K.BESIDE + 2 * slot + 1]) + 1 < need:
        return False
    return not _passes_if_triggered(v, level)


@njit(cache=True)
def _take_value(v, action, level, rules, prm):
    o = v.copy()
    K.apply(o, action, level)
    best = 0.0
    first = True
    for b in legal(o, level, rules):
        if b == K.DISCARD_POWER:
            continue
        x = after_value(o, b, level, rules, prm)
        if first or x > best:
            best = x
            first = False
    return best


@njit(cache=True)
def _turn_start(v, m, moves, level, rules, prm):
    if m[K.ENCOUNTER_NOW] and _passes_now(v, level, rules, prm):
        return K.ENCOUNTER_NOW
    best = -1
    best_v = 0.0
    taken = -1
    for a in moves:
        if K.TAKE_REVEALED <= a < K.ENCOUNTER_NOW:
            if taken < 0:
                taken = a
            if v[K.REV + a - K.TAKE_REVEALED] < K.NUM_DEFENDER_KINDS:
                x = _take_value(v, a, level, rules, prm)
                if best < 0 or x > best_v:
                    best, best_v = a, x
    if taken >= 0:
        return best if best >= 0 else taken
    if m[K.DRAW + 1] and (not m[K.DRAW] or _next_traitor_triggers(v, level)):
        return K.DRAW + 1
    return K.DRAW if m[K.DRAW] else moves[0]


@njit(cache=True)
def planner_move(s, level, rules, prm):
    """``PlannerPolicy.__call__``: the planner's move in the position ``s`` (any row: a
    world's or a player's view; only the view is read)."""
    m = np.zeros(K.MASK_WIDTH, np.bool_)
    K.compute_mask(s, level, rules, m)
    moves = legal(s, level, rules)
    if moves.shape[0] == 1:
        return moves[0]
    v = view_of(s, level)
    phase = s[K.PHASE]
    if phase == K.DRAW_PHASE:
        return _turn_start(v, m, moves, level, rules, prm)
    if phase == K.REVEAL_PHASE:
        return K.REVEAL if m[K.REVEAL] else K.REVEAL + 1
    if phase == K.REVEAL_ORDEAL_PHASE:
        lowest = moves[0]
        later = -1
        for a in moves:
            if a < lowest:
                lowest = a
            if a - K.REVEAL_ORDEAL > s[K.CURRENT] and (later < 0 or a < later):
                later = a
        return later if prm[8] != 0 and later >= 0 else lowest
    if phase == K.DEFENDER_PHASE:
        worth = prm[7] != 0 or s[K.HAND] // 3 != PYRO
        options = moves if worth else moves[moves != K.DISCARD_POWER]
    elif phase == K.DESTROY_PHASE and s[K.DREASON] != K.PYRO_DESTROY:
        if s[K.DLEFT] > 4:
            return tallest_top(s, moves)
        return _best_by_one_step(v, moves, level, prm)
    else:
        options = choices(v, level, rules)
    bonus = 0.0
    if phase == K.DEFENDER_PHASE and s[K.HAND] // 3 == SEER:
        bonus = 0.5  # seeing the next tiles: choices later
    return _best_after(v, options, level, rules, prm, K.DISCARD_POWER, bonus)
