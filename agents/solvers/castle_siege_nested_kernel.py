"""Nested Monte Carlo search for Castle Siege winning lines (perfect information), compiled.

The depth-first solver (``siege_solver``) proves Very Hard deals winnable only where a win
lies near the move order it tries first: its tree is far too wide to sweep. A known deck
makes the game a deterministic puzzle, and for such puzzles nested Monte Carlo search
(Cazenave 2009, which set Morpion Solitaire and SameGame records; nested rollouts found
Klondike lines for Bjarnason, Fern and Tadepalli 2009) spends a budget better: at every step
of its line it tries each of the best few moves, finishes the game from each with the
search one level down, and extends the best line seen so far by one move.

- Level 0 is a playout of the trained linear move scorer (``siege_linear``) with noise: at
  each decision the scorer's best move, or with probability ``noise`` one of its next
  ``width - 1``.
- Level n (1 or 2): from each position of its line, each candidate (the scorer's ``width``
  best moves, end battle phase always among them; every castle for a Royal Assault) is
  played and the game finished by level n - 1; the best line so far is extended by one move.
- A line's score: a win is best; else castles captured, then fewer defenders standing where
  it stopped. Playouts stop where the solver's sound bounds call the position lost
  (``castle_siege_kernel.hopeless``).
- ``check`` > 0: at every position of the top level's line the depth-first solver also
  searches ``check`` nodes (probes off); a win it proves ends the search.

It only ever finds wins (a line that is not won proves nothing), so a deal it fails stays
*unknown*; ``castle-envs solve --nested LEVEL`` runs it before the solver and replays every
line in the Gymnasium env before counting it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from castle_envs.agents.solvers.castle_siege_kernel import (
    MAX_DEPTH,
    WIN,
    ZOBRIST,
    dfs,
    hopeless,
    rand,
    tt_clear,
)

from castle_envs.castle_siege.actions import DISCARD_BASE, END_BATTLE, RECYCLE_BASE, ROYAL_BASE
from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.castle_siege.kernel import (
    CAPTURED,
    CARD_WORDS,
    HSIZE,
    INT_WORDS,
    NEED,
    OUTCOME,
    PHASE,
    apply,
    captured_and_standing,
    load_position,
    unseen,
)
from castle_envs.castle_siege.rules import BATTLE, DISCARD, PRECISION, ROYAL
from castle_envs.castle_siege.scoring import (
    N_BATTLE,
    N_RECYCLE,
    battle_scores,
    recycle_scores,
    royal_action,
)
from castle_envs.core.jit import compile_note, njit

compile_note(__name__, "the Castle Siege nested search kernels", 5)

WIN_SCORE = 1 << 20
MAX_WIDTH = 16


class Scratch(NamedTuple):
    """The arrays one search needs (``new_scratch``: allocated once, reused per deal)."""

    B: np.ndarray  # (4, CARD_WORDS) int8: level 2's position, level 1's, the playout's
    V: np.ndarray  # (4, INT_WORDS) int32
    lines: np.ndarray  # (4, MAX_DEPTH) int64: per level (2, 1) its best line and a scratch line
    cand: np.ndarray  # (3, MAX_WIDTH) int64: each level's candidates
    actions: np.ndarray  # (2048,) int64 scratch for the scorer
    scores: np.ndarray  # (2048,) float64
    tmp: np.ndarray  # (256,) int64
    sums: np.ndarray  # (64,) int64
    sizes: np.ndarray  # (64,) int64
    flush: np.ndarray  # (32,) bool
    royal: np.ndarray  # (32,) bool
    stats: np.ndarray  # (3,) int64: playout steps, solver nodes, playouts


def new_scratch() -> Scratch:
    return Scratch(
        B=np.zeros((4, CARD_WORDS), np.int8),
        V=np.zeros((4, INT_WORDS), np.int32),
        lines=np.zeros((4, MAX_DEPTH), np.int64),
        cand=np.zeros((3, MAX_WIDTH), np.int64),
        actions=np.zeros(2048, np.int64),
        scores=np.zeros(2048, np.float64),
        tmp=np.zeros(256, np.int64),
        sums=np.zeros(64, np.int64),
        sizes=np.zeros(64, np.int64),
        flush=np.zeros(32, np.bool_),
        royal=np.zeros(32, np.bool_),
        stats=np.zeros(3, np.int64),
    )


@njit(cache=True, inline="always")
def _copy(B, V, src, dst):
    for k in range(NEED):
        B[dst, k] = B[src, k]
    for k in range(INT_WORDS):
        V[dst, k] = V[src, k]


@njit(cache=True)
def score(b, v):
    """A win; else 1,000 a castle captured, less one a defender still standing."""
    if v[OUTCOME] == 1:
        return WIN_SCORE
    captured, standing = captured_and_standing(b, v)
    return captured * 1000 - standing


@njit(cache=True)
def scored_moves(b, v, recent, weights, x):
    """The scorer's candidates of a Precision Strike's choice or of the battle phase, with
    their scores, into ``x.actions`` / ``x.scores``; returns their number."""
    actions, scores = x.actions, x.scores
    if v[PHASE] == PRECISION:
        m = recycle_scores(
            b, v, weights[N_BATTLE : N_BATTLE + N_RECYCLE], actions[:NUM_CARDS], scores
        )
        for i in range(m):
            actions[i] += RECYCLE_BASE
        return m
    return battle_scores(
        b, v, recent, weights[:N_BATTLE], x.sums, x.sizes, x.flush, x.royal, x.tmp, actions, scores
    )


@njit(cache=True)
def select_top(actions, scores, m, k):
    """Move the ``k`` best of the first ``m`` (action, score) pairs to the front, best first;
    of equal scores the earlier first (the scorer's choice). Returns min(k, m)."""
    n = min(k, m)
    for i in range(n):
        best = i
        for j in range(i + 1, m):
            if scores[j] > scores[best]:
                best = j
        a, sc = actions[best], scores[best]
        for j in range(best, i, -1):
            actions[j] = actions[j - 1]
            scores[j] = scores[j - 1]
        actions[i], scores[i] = a, sc
    return n


@njit(cache=True)
def candidates(b, v, recent, weights, width, out, x):
    """The scorer's ``width`` best moves, best first, into ``out``; returns their number."""
    phase = v[PHASE]
    if phase == ROYAL:
        first = royal_action(b, v, weights[N_BATTLE + N_RECYCLE :])
        out[0] = first
        n = 1
        for c in range(4):
            if not b[CAPTURED + c] and ROYAL_BASE + c != first:
                out[n] = ROYAL_BASE + c
                n += 1
        return n
    if phase == DISCARD:  # never reached in play: the hand never exceeds 5 (RULES.md)
        for i in range(v[HSIZE]):
            out[i] = DISCARD_BASE + i
        return min(v[HSIZE], width)
    m = scored_moves(b, v, recent, weights, x)
    n = select_top(x.actions, x.scores, m, width)
    for i in range(n):
        out[i] = x.actions[i]
    if phase == BATTLE:
        for i in range(n):
            if out[i] == END_BATTLE:
                return n
        out[n - 1] = END_BATTLE
    return n


@njit(cache=True)
def playout(x, w, memo, row, recent, leave, weights, width, noise, line, start, until_known):
    """Level 0, played in place on row ``row``: its moves go to ``line[start:]``; returns
    (score, end of the line). With ``until_known`` it stops once no unseen card is left."""
    b, v = x.B[row], x.V[row]
    n = start
    while v[OUTCOME] == 0 and n < MAX_DEPTH:
        if v[PHASE] == BATTLE and hopeless(b, v, w, memo):
            break
        if until_known and unseen(b, v) == 0:
            break
        k = candidates(b, v, recent, weights, width, x.cand[0], x)
        i = 0
        if k > 1 and rand(w.rng) < noise:
            i = 1 + min(int(rand(w.rng) * (k - 1)), k - 2)
        line[n] = x.cand[0, i]
        n += 1
        apply(b, v, x.cand[0, i], leave)
        x.stats[0] += 1
    x.stats[2] += 1
    return score(b, v), n


@njit(cache=True, inline="always")
def _check(x, w, memo, row, recent, leave, nodes, line, n):
    """Depth-first search of ``nodes`` from row ``row``; a proven win is appended to
    ``line[:n]`` (returns the new end), else returns -1."""
    for k in range(NEED):
        w.B[0, k] = x.B[row, k]
    for k in range(INT_WORDS):
        w.V[0, k] = x.V[row, k]
    tt_clear(w.table, w.used)
    w.stats[:] = 0
    result = dfs(w, ZOBRIST, memo, recent, leave, nodes, True, True, True)
    x.stats[1] += w.stats[0]
    if result != WIN:
        return -1
    for d in range(w.stats[2] + 1):
        line[n] = w.moves[d, w.idx[d] - 1]
        n += 1
    return n


@njit(cache=True)
def nested(x, w, memo, top, recent, leave, weights, width, noise, check, out):
    """Level ``top`` (1 or 2) from row 0 of ``x``: its best line goes to ``out``; returns
    (score, length). The levels are frames of an explicit stack (numba caches no recursion):
    level l plays in row ``top - l`` and finishes each candidate in the row below."""
    pos = np.zeros(3, np.int64)
    start = np.zeros(3, np.int64)
    best = np.zeros(3, np.int64)
    bend = np.zeros(3, np.int64)
    k = np.zeros(3, np.int64)
    j = np.zeros(3, np.int64)
    lvl = top
    best[lvl] = -WIN_SCORE
    j[lvl] = -1
    while True:
        r = top - lvl
        b, v = x.B[r], x.V[r]
        best_line, trial, cand = x.lines[2 * lvl - 2], x.lines[2 * lvl - 1], x.cand[lvl]
        p = pos[lvl]
        done = False
        if j[lvl] < 0:  # a new position on this level's line
            if (
                v[OUTCOME] != 0
                or p >= MAX_DEPTH - 1
                or (v[PHASE] == BATTLE and hopeless(b, v, w, memo))
            ):
                done = True
            elif check > 0 and lvl == top and v[PHASE] == BATTLE:
                end = _check(x, w, memo, r, recent, leave, check, best_line, p)
                if end >= 0:
                    best[lvl], bend[lvl] = WIN_SCORE, end
                    done = True
            if not done:
                k[lvl] = candidates(b, v, recent, weights, width, cand, x)
                j[lvl] = 0
        if not done and j[lvl] < k[lvl]:
            a = cand[j[lvl]]
            _copy(x.B, x.V, r, r + 1)
            trial[p] = a
            apply(x.B[r + 1], x.V[r + 1], a, leave)
            x.stats[0] += 1
            if lvl > 1:  # descend: level lvl - 1 finishes the game from the child
                lvl -= 1
                start[lvl] = pos[lvl] = bend[lvl] = p + 1
                best[lvl] = -WIN_SCORE
                j[lvl] = -1
                continue
            s, end = playout(
                x, w, memo, r + 1, recent, leave, weights, width, noise, trial, p + 1, False
            )
        elif not done:
            if best[lvl] == WIN_SCORE:
                done = True
            else:  # every candidate tried: follow the best line one move
                apply(b, v, best_line[p], leave)
                x.stats[0] += 1
                pos[lvl] += 1
                j[lvl] = -1
                continue
        if done:
            if bend[lvl] <= p:  # the line ends here
                bend[lvl] = p
                if best[lvl] == -WIN_SCORE:
                    best[lvl] = score(b, v)
            if lvl == top:
                for i in range(bend[lvl]):
                    out[i] = best_line[i]
                return best[lvl], bend[lvl]
            s, end = best[lvl], bend[lvl]
            for i in range(start[lvl], end):  # the child's line, into the parent's trial
                x.lines[2 * lvl + 1, i] = best_line[i]
            lvl += 1
            best_line, trial = x.lines[2 * lvl - 2], x.lines[2 * lvl - 1]
            p = pos[lvl]
        # a candidate of level ``lvl`` at position p was finished: (s, end), line in trial
        if s > best[lvl] or p >= bend[lvl]:
            best[lvl], bend[lvl] = s, end
            for i in range(p, end):
                best_line[i] = trial[i]
        j[lvl] += 1
        if s == WIN_SCORE:
            j[lvl] = k[lvl]


def search(x: Scratch, w, memo, b0, v0, top, recent, leave, weights, width, noise, check, seed):
    """Nested search of level ``top`` (0: one playout) from the rows ``b0``/``v0``: (score,
    line as a list of action ids)."""
    x.B[0, :NEED] = b0[:NEED]
    x.V[0] = v0
    x.stats[:] = 0
    w.rng[0] = np.uint64(seed * 2654435761 + 88172645463325252) | np.uint64(1)
    out = np.zeros(MAX_DEPTH, np.int64)
    if top == 0:
        s, n = playout(x, w, memo, 0, recent, leave, weights, width, noise, out, 0, False)
    else:
        s, n = nested(x, w, memo, top, recent, leave, weights, width, noise, check, out)
    return int(s), [int(a) for a in out[:n]]


@njit(cache=True)
def evaluate_moves(
    x,
    w,
    memo,
    samples_b,
    samples_v,
    cands,
    recent,
    leave,
    weights,
    depth,
    width,
    noise,
    playouts,
    seed,
    wins,
    totals,
):
    """Perfect-information Monte Carlo with nested search inside each world (the search
    agent's ``inner="nested"``): for each sampled world (``samples_b[i]``, ``samples_v[i]``)
    and each candidate move, play the move, then finish the game ``playouts`` times with
    the nested search of level ``depth`` (0: playouts of the scorer). ``wins[j]`` counts the
    finished games candidate ``j`` won, ``totals[j]`` sums their scores. Within a world every
    candidate's games use the same noise (common random numbers), so the candidates differ
    by their move, not by luck. A won game scores 4,000 in ``totals`` (four castles, no
    defender standing), so that sums stay on the scale of ``score``'s lost games."""
    for j in range(len(cands)):
        wins[j] = 0
        totals[j] = 0
    out = x.lines[2] if depth == 0 else x.lines[3]
    for i in range(samples_b.shape[0]):
        for p in range(playouts):
            stream = np.uint64(
                (seed * 7919 + i * 104729 + p * 1299709) * 2654435761 + 88172645463325252
            ) | np.uint64(1)
            for j in range(len(cands)):
                load_position(x.B, x.V, 0, samples_b[i], samples_v[i])
                apply(x.B[0], x.V[0], cands[j], leave)
                x.stats[0] += 1
                w.rng[0] = stream
                if x.V[0, OUTCOME] != 0:
                    s = score(x.B[0], x.V[0])
                elif depth == 0:
                    s, _ = playout(
                        x, w, memo, 0, recent, leave, weights, width, noise, out, 0, False
                    )
                else:
                    s, _ = nested(x, w, memo, depth, recent, leave, weights, width, noise, 0, out)
                if s == WIN_SCORE:
                    wins[j] += 1
                    totals[j] += 4000
                else:
                    totals[j] += s
