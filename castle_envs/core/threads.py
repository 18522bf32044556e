"""Row ranges of a batch stepped concurrently on Python threads (no numba threading layer).

The batched kernels take a row range ``lo, hi`` and touch only those rows of every array,
and they are compiled with ``nogil=True``, so while one thread runs a compiled kernel on its
rows the others run theirs: a batch split into contiguous ranges gives exactly the results
of one thread. ``RowThreads`` owns the split and a persistent
``concurrent.futures.ThreadPoolExecutor`` (created once per env, shut down by ``close``);
the calling thread steps the first range itself while the pool steps the others.

Without numba the kernels are plain Python, which holds the GIL: the split still gives the
same results, only no speed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from castle_envs.core.options import check_int


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: ``parallel=True`` gives each thread at least this many envs: a step of one env is about
#: half a microsecond, and handing a range to a pool thread and waiting for it costs tens of
#: microseconds, so smaller ranges are not worth a thread
MIN_ROWS_PER_THREAD = 256


def resolve_threads(parallel: bool, threads: int | None, num_rows: int) -> int:
    """The thread count from the env keywords: ``threads`` (a positive int) when given,
    exactly (at most one per env); else, when ``parallel`` is true, one per available core
    as long as each gets ``MIN_ROWS_PER_THREAD`` envs; else 1."""
    if threads is None:
        if not parallel:
            return 1
        return max(1, min(available_cores(), num_rows // MIN_ROWS_PER_THREAD))
    return check_int("threads", threads, 1)


def _call_wrapping(kernel: Callable[..., None], lo: int, hi: int, args: tuple) -> None:
    # np.errstate is per thread: the uint64 generator arithmetic wraps by design, and
    # without numba NumPy would warn about it on the pool's threads
    with np.errstate(over="ignore"):
        kernel(lo, hi, *args)


class RowThreads:
    """``num_rows`` rows split into ``threads`` contiguous ranges (at most one per row)."""

    def __init__(self, num_rows: int, threads: int = 1) -> None:
        self.num_rows = int(num_rows)
        self.threads = max(1, min(int(threads), self.num_rows))
        edges = [num_rows * k // self.threads for k in range(self.threads + 1)]
        self.ranges = tuple(zip(edges[:-1], edges[1:]))
        self._pool = (
            ThreadPoolExecutor(self.threads - 1, thread_name_prefix="castle-envs-rows")
            if self.threads > 1
            else None
        )

    def run(self, kernel: Callable[..., None], *args: Any) -> None:
        """``kernel(lo, hi, *args)`` for every range, concurrently; returns when all have
        finished, raising the first error any of them raised."""
        if self._pool is None:  # one thread (or closed: the whole batch on this thread)
            kernel(0, self.num_rows, *args)
            return
        futures = [
            self._pool.submit(_call_wrapping, kernel, lo, hi, args) for lo, hi in self.ranges[1:]
        ]
        try:
            lo, hi = self.ranges[0]
            kernel(lo, hi, *args)
        finally:
            for future in futures:  # every range is finished before anything is returned
                future.exception()
        for future in futures:
            future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
