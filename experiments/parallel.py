"""Running independent chunks of work on all local cores or on a Ray cluster.

``run_chunks(fn, chunks)`` calls ``fn(*chunk)`` for every chunk and returns the results in
chunk order, whatever finished first. Chunks are pure (seeded by their arguments), so the
same seed gives the same numbers with any backend and worker count.

Backends: ``local`` (``workers`` processes, default all cores; 1 runs in this process) and
``ray`` (``address`` of a running cluster, or None for a local Ray instance; needs the
``distributed`` extra).

``stream(fn, items, workers)`` calls ``fn(item)`` for every item on local processes and
yields each result as soon as it is ready, so a long run hands over its work as it goes;
stopped early (an error, a worker that died, SIGTERM, Ctrl-C) it leaves no worker process
behind. The local backend of ``run_chunks`` runs its chunks through it. While it runs,
SIGTERM raises ``Terminated`` (exit status 143) in the main thread.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from functools import partial
from typing import Any

BACKENDS = ("local", "ray")


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def split(n: int, workers: int, max_chunk: int = 50) -> list[tuple]:
    """Indices 0..n-1 in contiguous chunks, about four per worker, at most ``max_chunk``."""
    size = max(1, min(max_chunk, -(-n // (4 * max(1, workers)))))
    return [tuple(range(i, min(n, i + size))) for i in range(0, n, size)]


def run_chunks(
    fn,
    chunks: list,
    workers: int | None = None,
    backend: str = "local",
    address: str | None = None,
    progress=None,
    weights=None,
    on_result=None,
) -> list:
    """``[fn(*c) for c in chunks]``, in parallel. ``progress(k)`` is called as chunks finish,
    with the chunk's weight (``weights[i]``, default 1); ``on_result(i, result)`` with each
    chunk's result as it comes in (to save finished work before the whole run ends)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {list(BACKENDS)}")
    if address is not None and backend != "ray":
        raise ValueError("--address is for --backend ray")
    weights = weights or [1] * len(chunks)
    tick = progress or (lambda k: None)
    done = on_result or (lambda i, result: None)
    if backend == "ray":
        return _run_ray(fn, chunks, address, tick, weights, workers, done)
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    results: list = [None] * len(chunks)
    if workers == 1 or len(chunks) <= 1:
        for i, (c, w) in enumerate(zip(chunks, weights)):
            results[i] = fn(*c)
            done(i, results[i])
            tick(w)
        return results
    # the chunks as items of ``stream``: one pool lifetime and SIGTERM handling for all
    numbered = stream(partial(_call_chunk, fn), enumerate(chunks), min(workers, len(chunks)))
    with contextlib.closing(numbered):
        for i, result in numbered:
            results[i] = result
            done(i, result)
            tick(weights[i])
    return results


def _call_chunk(fn, numbered: tuple) -> tuple:
    i, chunk = numbered
    return i, fn(*chunk)


class Terminated(SystemExit):
    """SIGTERM arrived while ``stream`` ran: raised in the main thread so that every
    ``finally`` runs (the workers stopped, the files closed); the process exits with status
    143 (128 + SIGTERM), as the signal would have ended it. ``saved``: what the run kept
    (set by the command on its way out; the command line prints it in its one line)."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)
        self.saved = ""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises ``Terminated`` in the main thread instead of ending the
    process at once (which would leave worker processes running their tasks to the end).
    Outside the main thread, where no handler can be set, nothing changes; nor where the
    program has a SIGTERM handler of its own (training's, which checkpoints), whose
    exception ends ``stream`` all the same."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent decides, and stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stream(fn: Callable[[Any], Any], items: Iterable, workers: int) -> Generator[Any, None, None]:
    """``fn(item)`` for every item on ``workers`` local processes, each result yielded as it
    is ready (in the order they finish), the items handed out one at a time (a few more
    than the workers are queued, so none waits for the next). However it stops (the last
    result, an error, a worker process that died, SIGTERM via ``sigterm_raises``, Ctrl-C,
    the generator closed), the workers are terminated before it returns; iterate it inside
    ``contextlib.closing``, so that an error in the loop's own body (SIGTERM arriving there)
    closes it at once rather than when the generator is collected."""
    workers = max(1, workers)
    with local_pool(workers) as pool, sigterm_raises():
        todo = iter(items)
        running = {pool.submit(fn, item) for item in itertools.islice(todo, 2 * workers)}
        while running:
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            running |= {pool.submit(fn, item) for item in itertools.islice(todo, len(finished))}
            for future in finished:
                yield future.result()


@contextlib.contextmanager
def local_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` (at least 1) local processes, all of them gone when the block
    ends, however it ends (its workers terminated, not waited for)."""
    context = multiprocessing.get_context("spawn")  # safe with torch and threads
    # the pool's processes are this process's children started from here on: the executor
    # has no call that ends running workers, so they are terminated by that list
    before = set(multiprocessing.active_children())
    # a process pool that raises when a worker dies (multiprocessing.Pool would wait for
    # the lost item forever)
    pool = ProcessPoolExecutor(max(1, workers), mp_context=context, initializer=_worker_start)
    try:
        yield pool
    finally:
        started = set(multiprocessing.active_children()) - before
        for process in started:
            process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        for process in started:
            process.join()


@contextlib.contextmanager
def background(fn: Callable[..., Any], *args: Any) -> Iterator[Any]:
    """``fn(*args)`` started now on one other local process; inside the block, the
    ``Future`` of its result (the caller goes on with other work meanwhile and takes the
    result when it needs it). The process is gone after the block: one left early (an
    error, SIGTERM, Ctrl-C) terminates it."""
    with local_pool(1) as pool:
        yield pool.submit(fn, *args)


def _run_ray(fn, chunks, address, tick, weights, workers, on_result):
    try:
        import ray
    except ImportError:
        raise ValueError(
            "--backend ray needs the 'distributed' extra: pip install 'castle-envs[distributed]'"
        ) from None
    started = False
    if not ray.is_initialized():
        kwargs = {"address": address} if address else {"num_cpus": workers or default_workers()}
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False, **kwargs)
        started = True
    try:
        remote = ray.remote(fn)
        refs = [remote.remote(*c) for c in chunks]
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_result(index[ref], ray.get(ref))
                tick(weights[index[ref]])
        return ray.get(refs)
    finally:
        if started:
            ray.shutdown()
