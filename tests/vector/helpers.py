"""Lockstep runs of the batched env against single envs (the differential harness), and the
checks the two games' env tests share (``test_api``/``test_castellion_api``,
``test_single``/``test_castellion_single``)."""

from __future__ import annotations

import numpy as np
import pytest

from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.core.errors import ActionSpaceError
from castle_envs.core.jit import HAVE_NUMBA

from ..reference.castle_siege import ReferenceCastleSiegeEnv as CastleSiegeEnv


def games(n: int) -> int:
    """``n`` games with numba; without it the kernels run as plain Python (the fallback is
    still compared, on a fiftieth of the games, so the suite stays fast)."""
    return n if HAVE_NUMBA else max(4, n // 50)


def lockstep(
    n_envs: int,
    n_games: int,
    seed: int,
    illegal_every: int = 0,
    compare_states: bool = False,
    **kwargs,
) -> dict:
    """Play random masked games on ``n_envs`` batched envs and on ``n_envs`` single envs seeded
    ``seed + i``, the same actions on both, until ``n_games`` games have ended; assert that
    observations, masks, rewards, terminations, truncations, final observations and wins are
    identical at every step. ``illegal_every``: roughly one action in that many is a random
    (usually illegal) id of the action space, for penalty mode. Returns counts for the
    caller's own checks."""
    envs = CastleSiegeVectorEnv(n_envs, **kwargs)
    singles = [CastleSiegeEnv(**kwargs) for _ in range(n_envs)]
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed)
    single_obs, single_info = zip(*(e.reset(seed=seed + i) for i, e in enumerate(singles)))
    single_obs, single_mask = list(single_obs), [inf["action_mask"] for inf in single_info]
    assert np.array_equal(obs, np.stack(single_obs))
    assert np.array_equal(info["action_mask"], np.stack(single_mask))
    stats = {"games": 0, "steps": 0, "won": 0, "truncated": 0, "illegal": 0, "reward": 0.0}
    while stats["games"] < n_games:
        masks = envs.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if illegal_every:
            wild = rng.integers(illegal_every, size=n_envs) == 0
            actions[wild] = rng.integers(0, 1676, size=int(wild.sum()))  # in the space
        obs, rewards, terminated, truncated, info = envs.step(actions)
        stats["steps"] += n_envs
        for i, env in enumerate(singles):
            o, r, term, trunc, inf = env.step(actions[i])
            assert (r, term, trunc) == (rewards[i], terminated[i], truncated[i]), (i, stats)
            if illegal_every:
                assert inf.get("illegal_action", False) == info["illegal_action"][i]
                stats["illegal"] += int(info["illegal_action"][i])
            if term or trunc:
                assert info["_final_obs"][i]
                assert np.array_equal(o, info["final_obs"][i])
                assert inf.get("won", False) == info["won"][i]
                stats["games"] += 1
                stats["won"] += int(info["won"][i])
                stats["truncated"] += int(trunc)
                o, inf = env.reset()
            elif "_final_obs" in info:
                assert not info["_final_obs"][i]
            stats["reward"] += r
            assert np.array_equal(o, obs[i]), (i, stats)
            assert np.array_equal(inf["action_mask"], info["action_mask"][i]), (i, stats)
            if compare_states:
                assert envs.state(i).to_dict() == env.state.to_dict()
    return stats


# --- what the tests of the two games' envs share ----------------------------------------------
def random_actions(masks, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def same_info(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def assert_same_as_sync_vector_env(ours, sync, rng, steps: int = 300) -> int:
    """Step the batched env and a ``SyncVectorEnv`` (same-step autoreset) of single envs with
    the same random legal actions; assert identical results. Returns the finished games."""
    a, a_info = ours.reset(seed=42)
    b, b_info = sync.reset(seed=42)
    assert np.array_equal(a, b) and np.array_equal(a_info["action_mask"], b_info["action_mask"])
    finished = 0
    for _ in range(steps):
        actions = random_actions(a_info["action_mask"], rng)
        a, ra, ta, ua, a_info = ours.step(actions)
        b, rb, tb, ub, b_info = sync.step(actions)
        assert np.array_equal(a, b) and np.array_equal(ra, rb)
        assert np.array_equal(ta, tb) and np.array_equal(ua, ub)
        assert np.array_equal(a_info["action_mask"], b_info["action_mask"])
        if "_final_obs" in b_info:
            done = b_info["_final_obs"]
            assert np.array_equal(a_info["_final_obs"], done)
            assert np.array_equal(a_info["final_obs"][done], np.stack(b_info["final_obs"][done]))
            finished += int(done.sum())
    return finished


def assert_copy_false_shares_and_copy_true_does_not(make):
    """``make(copy=...)``: a batched env of 4."""
    rng = np.random.default_rng(0)
    shared = make(copy=False)
    obs0, info = shared.reset(seed=0)
    obs1, *_ = shared.step(random_actions(info["action_mask"], rng))
    assert obs1 is obs0
    fresh = make(copy=True)
    obs0, info = fresh.reset(seed=0)
    kept = obs0.copy()
    fresh.step(random_actions(info["action_mask"], rng))
    assert np.array_equal(obs0, kept)


def assert_same_trajectories(serial, parallel, steps: int):
    """The same random legal actions on both envs give the same observations, rewards,
    terminations and masks (in the info and from ``action_masks()``)."""
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    a, ai = serial.reset(seed=0)
    b, bi = parallel.reset(seed=0)
    for _ in range(steps):
        a, ra, ta, ua, ai = serial.step(random_actions(ai["action_mask"], rng_a))
        b, rb, tb, ub, bi = parallel.step(random_actions(bi["action_mask"], rng_b))
        assert np.array_equal(a, b) and np.array_equal(ra, rb) and np.array_equal(ta, tb)
        assert np.array_equal(ai["action_mask"], bi["action_mask"])
        assert np.array_equal(serial.action_masks(), parallel.action_masks())


def assert_renders(make):
    """``make(render_mode=...)``: a batched env of 2; a frame per env, None without a mode."""
    import warnings

    for mode, kind in (("ansi", str), ("rgb_array", np.ndarray)):
        envs = make(render_mode=mode)
        envs.reset(seed=0)
        frames = envs.render()
        assert isinstance(frames, tuple) and len(frames) == 2
        assert all(isinstance(f, kind) for f in frames)
        if kind is np.ndarray:
            assert frames[0].dtype == np.uint8 and frames[0].ndim == 3 and frames[0].shape[2] == 3
    quiet = make(render_mode=None)
    quiet.reset(seed=0)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert quiet.render() is None


def assert_runs_without_numba(code: str):
    """``code`` (which hides numba and prints 'ok') in a fresh interpreter that turns
    RuntimeWarnings into errors."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def single_lockstep(fast, slow, n_games, seed, illegal_ids, illegal_every=0, narrow=None):
    """Play ``n_games`` random games on a compiled single env and the Python env in step;
    assert identical observations, rewards, ends and info. ``illegal_ids``: the ``(low,
    high)`` range of the random ids played about once in ``illegal_every`` steps;
    ``narrow(legal, rng)``: the legal actions to draw from. Returns the illegal plays."""
    rng = np.random.default_rng(seed)
    (fo, fi), (so, si) = fast.reset(seed=seed), slow.reset(seed=seed)
    played = illegal = 0
    while played < n_games:
        assert np.array_equal(fo, so)
        same_info(fi, si)
        legal = np.flatnonzero(si["action_mask"])
        if narrow is not None:
            legal = narrow(legal, rng)
        action = rng.choice(legal)
        if illegal_every and rng.integers(illegal_every) == 0:
            action = int(rng.integers(*illegal_ids))
            if not 0 <= action < fast.action_space.n:
                # outside the action space: both refuse it in every mode and play on
                for env in (fast, slow):
                    with pytest.raises(ActionSpaceError, match=f"action {action} is out of range"):
                        env.step(action)
                continue
        fo, fr, ft, fu, fi = fast.step(action)
        so, sr, st, su, si = slow.step(action)
        assert (fr, ft, fu) == (sr, st, su)
        if ft or fu:
            assert np.array_equal(fo, so)
            same_info(fi, si)
            played += 1
            illegal += int(si.get("illegal_action", False))
            (fo, fi), (so, si) = fast.reset(), slow.reset()
    return illegal


def assert_single_errors_match(fast, slow, out_of_range: int):
    """Envs made with ``max_episode_steps=1``, before ``reset``: the compiled env raises what
    the Python env raises, with the same message."""
    from castle_envs.core.errors import EpisodeOverError, IllegalActionError

    fast.reset(seed=0)
    slow.reset(seed=0)
    bad = int(np.flatnonzero(~slow.action_masks())[0])
    with pytest.raises(IllegalActionError) as fast_err:
        fast.step(bad)
    with pytest.raises(IllegalActionError) as slow_err:
        slow.step(bad)
    assert str(fast_err.value) == str(slow_err.value)
    with pytest.raises(IllegalActionError, match="out of range"):
        fast.step(out_of_range)
    fast.step(int(np.flatnonzero(fast.action_masks())[0]))  # truncated after one step
    with pytest.raises(EpisodeOverError, match="after the episode ended"):
        fast.step(0)


def assert_bad_calls_raise(envs, action: int):
    """A fresh batched env of 2: step and masks before reset, then wrong action arrays."""
    from castle_envs.core.errors import EpisodeOverError

    with pytest.raises(EpisodeOverError):
        envs.step([action, action])
    with pytest.raises(EpisodeOverError):
        envs.action_masks()
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="2 integer action ids"):
        envs.step([action])
    with pytest.raises(ValueError, match="integer"):
        envs.step([0.5, 1.5])


def assert_illegal_action_raises(envs, bad_id: int, match: str, num_actions: int):
    """A batched env of 3, reset here with seed 0: ``bad_id`` (illegal there) or an id out of
    range in env 1 raises naming env 1, and nothing moves (the legal step still works)."""
    from castle_envs.core.errors import IllegalActionError

    obs, info = envs.reset(seed=0)
    actions = random_actions(info["action_mask"], np.random.default_rng(0))
    bad = actions.copy()
    bad[1] = bad_id
    with pytest.raises(IllegalActionError, match=match):
        envs.step(bad)
    bad[1] = num_actions + 5
    with pytest.raises(IllegalActionError, match="env 1"):
        envs.step(bad)
    assert np.array_equal(envs.reset(seed=0)[0], obs)
    same, *_ = envs.step(actions)  # nothing moved: the legal step still works
    assert same.shape == obs.shape


def assert_set_state_plays_on(envs, state, saved: dict, single, info, rng):
    """``state`` (``saved`` as a dict; the single env's position, ``info`` its last info) put
    into env 2 of a batched env of 3: the same position, mask and next observation."""
    envs.reset(seed=0)
    envs.set_state(2, state)
    assert envs.state(2).to_dict() == saved
    assert np.array_equal(envs.action_masks()[2], info["action_mask"])
    action = rng.choice(np.flatnonzero(info["action_mask"]))
    expected, *_ = single.step(action)
    actions = random_actions(envs.action_masks(), rng)
    actions[2] = action
    obs, *_ = envs.step(actions)
    assert np.array_equal(obs[2], expected)


def assert_row_is(envs, i: int, after, obs, info, encode, label):
    """Env ``i``'s row after a step is the rules ``State`` ``after``: its final observation
    and win when the game ended, else its observation, mask and position."""
    if after.is_terminal():
        assert np.array_equal(info["final_obs"][i], encode(after)), label
        assert info["won"][i] == after.won
    else:
        assert np.array_equal(obs[i], encode(after)), label
        assert np.array_equal(envs.action_masks()[i], after.legal_action_mask())
        assert envs.state(i).to_dict() == after.to_dict()
