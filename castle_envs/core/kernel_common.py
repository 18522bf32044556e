"""Small compiled helpers that every game's kernels share: the batch step's settings and
outputs (``BatchStep``), the illegal-action step, the xorshift64* generator and the probing
of a transposition table of hash pairs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .jit import njit


class BatchStep(NamedTuple):
    """What every game's batch step (``step_rows``) reads and writes besides the game's
    rows, the actions and the observation and mask rows: the env's step limit and illegal
    action penalty, and its per-env buffers (``vector/_base.py``)."""

    max_steps: int
    penalty: float
    rewards: np.ndarray  # (n,) float64
    terminated: np.ndarray  # (n,) bool
    truncated: np.ndarray  # (n,) bool
    done: np.ndarray  # (n,) bool: terminated or truncated (the env started anew)
    won: np.ndarray  # (n,) bool
    illegal: np.ndarray  # (n,) bool: the action was illegal (penalty mode)
    final_obs: np.ndarray  # (n, OBS_SIZE) float32: a finished game's last observation
    final_rows: np.ndarray  # (n, W): a finished game's last state row (the env's info rows)


_XORSHIFT_STAR = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def penalised(i: int, a: int, num_actions: int, mask: np.ndarray, out: BatchStep) -> bool:
    """Whether env ``i``'s action ``a`` is out of range (the env refuses those before the
    kernels run) or masked out; such a step ends the episode with ``out.penalty`` (only in
    illegal_action="penalty" mode: raise mode checks before the kernels run). ``out``: a
    ``BatchStep``."""
    bad = a < 0 or a >= num_actions
    if not bad:
        bad = not mask[i, a]
    out.illegal[i] = bad
    if bad:
        out.rewards[i] = out.penalty
        out.terminated[i] = True
        out.truncated[i] = False
        out.won[i] = False
    return bad


@njit(cache=True)
def first_illegal_of(mask: np.ndarray, actions: np.ndarray, num_actions: int) -> int:
    """The first env whose action is out of range or masked out, or -1."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= num_actions or not mask[i, a]:
            return i
    return -1


@njit(cache=True)
def xorshift_star(words: np.ndarray, i: int) -> int:
    """Advance the xorshift64 state ``words[i]``; returns its xorshift64* output (use the
    high bits: the low ones are weak)."""
    x = words[i]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    words[i] = x
    return x * _XORSHIFT_STAR


@njit(cache=True)
def nonzero_key(h1: int, h2: int) -> tuple[int, int]:
    """The hash pair, made never 0/0: 0/0 marks an empty table slot."""
    if h1 == 0 and h2 == 0:
        h1 = np.uint64(1)
    return h1, h2


@njit(cache=True)
def tt_find(table: np.ndarray, h1: int, h2: int) -> bool:
    """Is the position with hashes (h1, h2) stored? ``table`` is (2^k, 2), both hashes of a
    slot side by side (one cache line); linear probing over 16 slots."""
    mask = len(table) - 1
    i = np.int64(h1 & np.uint64(mask))
    for _ in range(16):
        if table[i, 0] == h1 and table[i, 1] == h2:
            return True
        if table[i, 0] == 0 and table[i, 1] == 0:
            return False
        i = (i + 1) & mask
    return False


@njit(cache=True, inline="always")
def tt_seen(table: np.ndarray, key: tuple[int, int], h: np.ndarray, d: int) -> bool:
    """Is the position with hash pair ``key`` stored (``tt_find``)? If not, the pair is kept
    as depth ``d``'s in ``h`` ((depth, 2) uint64): the search stores it there once every
    move of the position has lost."""
    h1, h2 = key
    if tt_find(table, h1, h2):
        return True
    h[d, 0] = h1
    h[d, 1] = h2
    return False
