"""Sampling legal actions from masks, rows of which may be all False.

A Gymnasium vector env in next-step autoreset mode (``SyncVectorEnv``'s default) returns, for
an env whose episode just ended, the final position's mask: no action is legal there. The
next ``step`` resets that env and ignores its action, so any id will do; but naive masked
sampling (``rng.choice(np.flatnonzero(row))``, or a softmax over a row of ``-inf``) crashes or
gives NaN on such a row. ``sample_masked`` gives ``no_legal`` (default 0) for it instead.
The batched envs of this project autoreset in the same step, so their rows are never all
False; their ``sample_actions()`` draws faster with the compiled kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def sample_masked(masks: Any, rng: Any = None, no_legal: int = 0) -> int | np.ndarray:
    """A uniformly random legal action per row of ``masks`` (bool or 0/1, shape
    ``(n, n_actions)``; one row of shape ``(n_actions,)`` gives one int), from ``rng`` (a
    ``numpy.random.Generator``, a seed, or None). A row with no legal action gives
    ``no_legal``."""
    masks = np.asarray(masks)
    single = masks.ndim == 1
    masks = np.atleast_2d(masks).astype(bool, copy=False)
    if masks.ndim != 2:
        raise ValueError(
            f"masks must be one row or a 2-d batch of rows, got shape {np.shape(masks)}"
        )
    rng = np.random.default_rng(rng)
    counts = masks.sum(axis=1)
    # the k-th legal action of each row, k uniform in 0..count-1
    k = np.minimum((rng.random(len(masks)) * counts).astype(np.int64), np.maximum(counts - 1, 0))
    actions = np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1).astype(np.int64)
    actions[counts == 0] = no_legal
    return int(actions[0]) if single else actions
