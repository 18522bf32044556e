"""castle_envs.core.jit: a kernel is compiled once whatever scalars its compiled callers pass,
the search's kernels are each compiled once in a game, and a compile of a module named with
``compile_note`` writes its line, once, only when it compiles."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba")


def test_a_kernel_is_compiled_once_for_the_scalars_its_callers_pass():
    from castle_envs.core.jit import njit

    @njit(cache=False)
    def add(a, b):
        return a + b

    @njit(cache=False)
    def flip(flag):
        return not flag

    @njit(cache=False)
    def callers(x32, row8, flag):
        # an int32, an int8 read from a row, constants; a bool and a constant True
        return add(x32, 1) + add(row8[0], 2) + add(5, x32) + flip(flag) + flip(True)

    assert callers(np.int32(3), np.full(2, 4, np.int8), False) == 4 + 6 + 8 + 1 + 0
    assert len(add.signatures) == 1, add.signatures
    assert len(flip.signatures) == 1, flip.signatures


def test_a_kernel_that_needs_a_constant_still_gets_it():
    from castle_envs.core.jit import njit

    @njit(cache=False)
    def pick(t, i):
        return t[i]  # a tuple of two types: the index must be a constant

    @njit(cache=False)
    def caller():
        return pick((1, 2.5), 1)

    assert caller() == 2.5


NOTE_SNIPPET = """
import numpy as np
from castle_envs.core import jit, pcg64
jit.compile_note("castle_envs.core.pcg64", "the test's kernels", 7)
words = pcg64.to_words(np.random.default_rng(5))
pcg64.next64(words)
pcg64.next64(words)
"""


@pytest.mark.slow
def test_a_noted_modules_compile_writes_its_line_once_and_only_when_compiling(tmp_path):
    line = "castle-envs: compiling the test's kernels, once per install, ~7 s..."
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "CASTLE_ENVS_COMPILE_NOTICE": "1",
    }

    def run():
        done = subprocess.run(
            [sys.executable, "-c", NOTE_SNIPPET],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stderr

    first = run()
    assert first.count(line) == 1, first
    assert line not in run()  # from the cache: nothing compiles, nothing is written


SEARCH_SNIPPET = """
import sys
from numba.core.registry import CPUDispatcher
from castle_envs.experiments.demo import demo_agents, play_episodes
for agent in demo_agents(["trained", "best"]).values():
    play_episodes(agent, "very_hard", 2, 0)
for name, module in sorted(sys.modules.items()):
    if not name.startswith("castle_envs"):
        continue
    for value in vars(module).values():
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
            if len(value.signatures) > 1:
                print(name, value.py_func.__name__, len(value.signatures))
"""


@pytest.mark.slow
def test_the_demos_searches_compile_each_kernel_once():
    # each signature more is a compile more (the first demo run compiled apply, the search's
    # iteration, the solver's search and the playout two or three times each)
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_SNIPPET], capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ""


# a kernel in a file of its own (numba caches only those), long enough to compile that two
# processes started together both get to compile it unless one waits for the other
SLOW_KERNEL = (
    "from castle_envs.core.jit import njit\n\n\n@njit\ndef slow(x):\n"
    + "".join(
        f"    for i in range({k + 2}):\n        x = (x * {k + 3} + i) % 1000003\n"
        for k in range(60)
    )
    + "    return x\n"
)

RACE_SNIPPET = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
import slow_kernel
mine, theirs = sys.argv[2], sys.argv[3]
open(mine, "w").close()
while not os.path.exists(theirs):  # start compiling together
    time.sleep(0.001)
slow_kernel.slow(1)
d = slow_kernel.slow
print(sum(d._cache_misses.values()), sum(d._cache_hits.values()))
"""


@pytest.mark.slow
def test_processes_started_together_compile_a_kernel_once(tmp_path):
    (tmp_path / "slow_kernel.py").write_text(SLOW_KERNEL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RACE_SNIPPET,
                str(tmp_path),
                str(tmp_path / a),
                str(tmp_path / b),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a, b in (("a", "b"), ("b", "a"))
    ]
    counts = []
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err[-2000:]
        counts.append(tuple(map(int, out.split())))
    # one compiled it (a cache miss); the other waited, then loaded it (a cache hit)
    assert sorted(counts) == [(0, 1), (1, 0)]
