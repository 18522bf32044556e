"""Threaded batched envs (``threads=N`` / ``parallel=True``): the batch split into contiguous
row ranges stepped concurrently must give exactly what one thread gives, step for step."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import castle_envs
from castle_envs.castellion import kernel as CK
from castle_envs.castellion.vector import CastellionVectorEnv
from castle_envs.castle_siege import kernel as SK
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.core.threads import MIN_ROWS_PER_THREAD, RowThreads, available_cores

from .helpers import games

SIEGE_OPTIONS = [
    {"difficulty": "very_hard"},
    {
        "difficulty": "easy",
        "reward": "shaped",
        "attack": "most_recent",
        "defeated": "leave_game",
        "max_episode_steps": 12,
    },
    {"difficulty": "hard", "illegal_action": "penalty", "illegal_action_penalty": -2.5},
]
CASTELLION_OPTIONS = [
    {"level": "menace"},
    {
        "level": "school",
        "reward": "ordeals",
        "foundation_exemption": "neighbors",
        "max_episode_steps": 15,
    },
    {"level": "academy", "illegal_action": "penalty", "illegal_action_penalty": -3.0},
]


def assert_same_step(a, b):
    """Two ``step``/``reset`` results (tuples ending with the info dict) are identical."""
    assert len(a) == len(b)
    for x, y in zip(a[:-1], b[:-1]):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    info_a, info_b = a[-1], b[-1]
    assert sorted(info_a) == sorted(info_b)
    for key in info_a:
        assert np.array_equal(info_a[key], info_b[key]), key


def play_both(make, kwargs, threads, num_envs, steps, seed, illegal_every=0):
    """Step a one-thread env and a ``threads`` env with the same seeds and actions; every
    output identical at every step. Returns (episodes ended, illegal actions taken)."""
    one = make(num_envs, threads=1, **kwargs)
    many = make(num_envs, threads=threads, **kwargs)
    assert one.threads == 1 and many.threads == min(threads, num_envs)
    rng = np.random.default_rng(seed)
    a, b = one.reset(seed=seed), many.reset(seed=seed)
    assert_same_step(a, b)
    ended = illegal = 0
    for _ in range(steps):
        masks = one.action_masks()
        assert np.array_equal(masks, many.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if illegal_every:
            wild = rng.integers(illegal_every, size=num_envs) == 0
            actions[wild] = rng.integers(0, masks.shape[1], size=int(wild.sum()))
        a, b = one.step(actions), many.step(actions)
        assert_same_step(a, b)
        ended += int(np.count_nonzero(a[2] | a[3]))
        if "illegal_action" in a[-1]:
            illegal += int(a[-1]["illegal_action"].sum())
    # the states behind the rows agree too (the scratch and shown-row bookkeeping included)
    for name, value in vars(one).items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, getattr(many, name)), name
    one.close()
    many.close()
    return ended, illegal


@pytest.mark.parametrize("kwargs", SIEGE_OPTIONS)
@pytest.mark.parametrize("threads", [2, 3])
def test_castle_siege_threads_give_the_one_thread_trajectories(kwargs, threads):
    penalty = kwargs.get("illegal_action") == "penalty"
    ended, illegal = play_both(
        CastleSiegeVectorEnv,
        kwargs,
        threads,
        num_envs=37,
        steps=games(160),
        seed=11,
        illegal_every=9 if penalty else 0,
    )
    assert ended > 0  # autoreset and final_obs were compared
    assert illegal > 0 or not penalty


@pytest.mark.parametrize("kwargs", CASTELLION_OPTIONS)
@pytest.mark.parametrize("threads", [2, 3])
def test_castellion_threads_give_the_one_thread_trajectories(kwargs, threads):
    penalty = kwargs.get("illegal_action") == "penalty"
    ended, illegal = play_both(
        CastellionVectorEnv,
        kwargs,
        threads,
        num_envs=29,
        steps=games(200),
        seed=5,
        illegal_every=7 if penalty else 0,
    )
    assert ended > 0
    assert illegal > 0 or not penalty


def test_more_threads_than_envs_and_reset_options():
    # at most one range per env; reset options (decks) and set_state work with threads
    envs = CastleSiegeVectorEnv(3, threads=8, difficulty="easy")
    assert envs.threads == 3 and envs.parallel
    one = CastleSiegeVectorEnv(3, difficulty="easy")
    decks = [np.random.default_rng(k).permutation(52) for k in range(3)]
    assert_same_step(
        envs.reset(seed=3, options={"decks": decks}), one.reset(seed=3, options={"decks": decks})
    )
    rng = np.random.default_rng(0)
    for _ in range(games(30)):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in one.action_masks()])
        assert_same_step(envs.step(actions), one.step(actions))
    envs.close()


def test_parallel_keyword_means_every_available_core_with_enough_envs_each():
    for n in (64, 256, 1024, 4096):
        envs = castle_envs.make_vec("castle-siege", n, parallel=True)
        expected = max(1, min(available_cores(), n // MIN_ROWS_PER_THREAD))
        assert envs.threads == expected and envs.parallel == (expected > 1)
        assert len(envs._split.ranges) == expected
        envs.close()
    assert castle_envs.make_vec("castle-siege", 64, parallel=True, threads=2).threads == 2
    assert castle_envs.make_vec("castellion", 4, parallel=True, threads=2).threads == 2
    assert castle_envs.make_vec("castellion", 4).threads == 1
    assert not castle_envs.make_vec("castellion", 4).parallel
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="threads must be an int >= 1"):
            CastleSiegeVectorEnv(4, threads=bad)


def test_row_ranges_cover_the_batch_in_order():
    for rows, threads in [(1, 1), (10, 3), (1024, 2), (7, 7), (5, 9)]:
        split = RowThreads(rows, threads)
        edges = [r for pair in split.ranges for r in pair]
        assert edges[0] == 0 and edges[-1] == rows
        assert all(lo < hi for lo, hi in split.ranges)
        assert all(
            split.ranges[k][1] == split.ranges[k + 1][0] for k in range(len(split.ranges) - 1)
        )
        sizes = [hi - lo for lo, hi in split.ranges]
        assert max(sizes) - min(sizes) <= 1
        split.close()


def test_errors_on_any_thread_are_raised_after_every_range_finished():
    split = RowThreads(9, 3)
    seen = []

    def kernel(lo, hi, out):
        seen.append((lo, hi))
        if lo == 6:
            raise RuntimeError("range 6-9")
        out[lo:hi] = 1

    out = np.zeros(9)
    with pytest.raises(RuntimeError, match="range 6-9"):
        split.run(kernel, out)
    assert sorted(seen) == [(0, 3), (3, 6), (6, 9)] and out[:6].all()
    split.close()


def test_close_shuts_the_pool_down():
    envs = CastellionVectorEnv(8, threads=2)
    envs.reset(seed=0)
    pool = envs._split._pool
    envs.close()
    assert envs._split._pool is None and pool._shutdown
    envs.close()  # twice is fine


def test_threaded_samplers_draw_what_one_call_draws():
    # each row has its own generator state: sampling row ranges on threads draws exactly
    # what one call over the batch draws
    for make, kwargs in [(CastleSiegeVectorEnv, {}), (CastellionVectorEnv, {"level": "menace"})]:
        envs = make(50, threads=3, **kwargs)
        envs.reset(seed=2)
        words = np.arange(1, 51, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for _ in range(games(20)):
            w1, w2 = words.copy(), words.copy()
            out1, out2 = np.zeros(50, np.int64), np.zeros(50, np.int64)
            if make is CastleSiegeVectorEnv:
                SK.sample_counted(envs._mask_padded, envs._ints, w1, out1)
                envs.run_rows(SK.sample_counted_rows, envs._mask_padded, envs._ints, w2, out2)
            else:
                CK.sample_legal(envs._mask_padded, w1, out1)
                envs.run_rows(CK.sample_legal_rows, envs._mask_padded, w2, out2)
            assert np.array_equal(out1, out2) and np.array_equal(w1, w2)
            assert envs._mask_padded[np.arange(50), out2].all()
            words = w2
            envs.step(out2)
        envs.close()


def test_threads_without_numba():
    # the plain-Python kernels hold the GIL, but the split must still be exact, and the
    # wrapping generator arithmetic must not warn on the pool's threads
    code = """
import sys
sys.modules['numba'] = None
import warnings
import numpy as np
warnings.simplefilter('ignore', UserWarning)   # the 'numba is not installed' notice
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.castellion.vector import CastellionVectorEnv
for make, kw in [(CastleSiegeVectorEnv, {'difficulty': 'easy', 'max_episode_steps': 6}),
                 (CastellionVectorEnv, {'level': 'school', 'max_episode_steps': 6})]:
    one, two = make(5, **kw), make(5, threads=2, **kw)
    a, b = one.reset(seed=1), two.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(14):
        assert np.array_equal(a[0], b[0])
        assert np.array_equal(a[-1]['action_mask'], b[-1]['action_mask'])
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in one.action_masks()])
        a, b = one.step(actions), two.step(actions)
        for x, y in zip(a[:-1], b[:-1]):
            assert np.array_equal(x, y)
        if '_final_obs' in a[-1]:
            ended += 1
            assert np.array_equal(a[-1]['final_obs'], b[-1]['final_obs'])
    assert ended
    two.close()
print('ok')
"""
    result = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_unowned_arrays_are_the_same_memory():
    # the kernels take their arrays unowned (no reference counting for row views): writes
    # through the rows land in the caller's array, reads see it
    from castle_envs.core.jit import njit, unowned

    @njit
    def fill(a, lo, hi):
        b = unowned(a)
        for i in range(lo, hi):
            row = b[i]
            for k in range(row.shape[0]):
                row[k] = row[k] + i * 10 + k

    a = np.ones((6, 3), np.int64)
    split = RowThreads(6, 3)
    split.run(lambda lo, hi, arr: fill(arr, lo, hi), a)
    split.close()
    assert a.tolist() == [[1 + i * 10 + k for k in range(3)] for i in range(6)]
