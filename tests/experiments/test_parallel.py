"""``parallel``'s local pool however it stops: SIGTERM (``Terminated``, exit status 143), a
SIGTERM handler of the program's own (training's, which checkpoints), a worker process that
dies. Each time every worker process is gone when the call returns, and nothing waits for
the tasks (30 s sleeps) to end. Each case runs in a process of its own, which the signal
could otherwise end; the workers run standard-library functions, which a spawned process
imports by name."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from concurrent.futures.process import BrokenProcessPool

from tests.experiments.processes import alive, wait_for

#: ``run_chunks`` on two workers with tasks that would keep them busy well past the test;
#: once they run, their ids are printed and the process sends itself SIGTERM. With "own",
#: the program has a SIGTERM handler of its own, which raises KeyboardInterrupt.
STOPPED = """
import json, multiprocessing, os, signal, sys, threading, time
from castle_envs.experiments import parallel

def interrupt(signum, frame):
    raise KeyboardInterrupt

if sys.argv[1] == "own":
    signal.signal(signal.SIGTERM, interrupt)
before = signal.getsignal(signal.SIGTERM)

def send():
    end = time.monotonic() + 300  # starting the workers, not a speed
    while len(multiprocessing.active_children()) < 2 and time.monotonic() < end:
        time.sleep(0.05)
    print(json.dumps([p.pid for p in multiprocessing.active_children()]), flush=True)
    time.sleep(0.5)  # the tasks under way
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=send, daemon=True).start()
try:
    parallel.run_chunks(time.sleep, [(30,)] * 4, workers=2)
except BaseException as stop:
    print(type(stop).__name__, signal.getsignal(signal.SIGTERM) is before, flush=True)
    raise
"""


def stopped(mode: str) -> tuple[subprocess.CompletedProcess, list[int], list[str]]:
    run = subprocess.run(
        [sys.executable, "-c", STOPPED, mode], capture_output=True, text=True, timeout=300
    )
    said = run.stdout.splitlines()
    workers = json.loads(said[0]) if said else []
    return run, workers, said[1:]


def test_sigterm_raises_terminated_and_stops_the_workers():
    run, workers, said = stopped("default")
    assert run.returncode == 128 + signal.SIGTERM, run.stderr
    assert said == ["Terminated True"]  # and the default handler put back
    assert len(workers) == 2
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 30)


def test_a_sigterm_handler_of_the_programs_own_is_kept_and_ends_the_pool():
    run, workers, said = stopped("own")
    assert said == ["KeyboardInterrupt True"], run.stderr
    assert len(workers) == 2
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 30)


def test_a_worker_that_dies_is_an_error_not_a_wait_forever():
    # os._exit ends the worker at once, as a crash or the kernel's OOM killer would; the
    # pool must not wait for the result it lost (the guard is generous: start-up only)
    code = (
        "import os\n"
        "from castle_envs.experiments.parallel import stream\n"
        "for result in stream(os._exit, [3, 3, 3], 2):\n"
        "    pass\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert BrokenProcessPool.__name__ in run.stderr


def test_a_background_block_left_early_leaves_no_process():
    import multiprocessing
    import time

    import pytest
    from castle_envs.experiments.parallel import background

    with pytest.raises(RuntimeError, match="left early"), background(time.sleep, 600):
        assert wait_for(lambda: bool(multiprocessing.active_children()), 60)
        workers = [p.pid for p in multiprocessing.active_children()]
        raise RuntimeError("left early")
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 30)
