"""``CompiledCastleSiegeEnv`` is ``CastleSiegeEnv``: same steps, info, errors and options."""
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.core.errors import EpisodeOverError, IllegalActionError
from castle_envs.vector.single import CompiledCastleSiegeEnv


def same_info(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def lockstep(n_games, seed, illegal_every=0, **kwargs):
    fast, slow = CompiledCastleSiegeEnv(**kwargs), CastleSiegeEnv(**kwargs)
    rng = np.random.default_rng(seed)
    (fo, fi), (so, si) = fast.reset(seed=seed), slow.reset(seed=seed)
    games = illegal = 0
    while games < n_games:
        assert np.array_equal(fo, so)
        same_info(fi, si)
        action = rng.choice(np.flatnonzero(si["action_mask"]))
        if illegal_every and rng.integers(illegal_every) == 0:
            action = int(rng.integers(-1, 1700))
        fo, fr, ft, fu, fi = fast.step(action)
        so, sr, st, su, si = slow.step(action)
        assert (fr, ft, fu) == (sr, st, su)
        if ft or fu:
            assert np.array_equal(fo, so)
            same_info(fi, si)
            games += 1
            illegal += int(si.get("illegal_action", False))
            (fo, fi), (so, si) = fast.reset(), slow.reset()
    return illegal


@pytest.mark.parametrize("kwargs", [
    {}, {"difficulty": "easy", "reward": "shaped"},
    {"difficulty": "medium", "attack": "most_recent", "defeated": "leave_game"},
    {"difficulty": "hard", "max_episode_steps": 7},
])
def test_same_games_as_the_python_env(kwargs):
    lockstep(300, seed=len(kwargs), **kwargs)


def test_same_penalties():
    assert lockstep(200, seed=1, illegal_every=6, illegal_action="penalty") > 0


def test_gymnasium_checker():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(CompiledCastleSiegeEnv(illegal_action="penalty"), skip_render_check=True)


def test_reset_options_and_state():
    deck = list(range(51, -1, -1))
    fast, slow = CompiledCastleSiegeEnv("hard"), CastleSiegeEnv("hard")
    assert np.array_equal(fast.reset(options={"deck": deck})[0],
                          slow.reset(options={"deck": deck})[0])
    slow.step(int(np.flatnonzero(slow.action_masks())[0]))
    saved = slow.state.to_dict()
    obs, info = fast.reset(options={"state": saved})
    assert fast.state.to_dict() == saved
    assert np.array_equal(info["action_mask"], slow.action_masks())
    with pytest.raises(ValueError, match="exclude"):
        fast.reset(options={"state": saved, "deck": deck})
    with pytest.raises(ValueError, match="unknown reset option"):
        fast.reset(options={"decks": deck})


def test_errors_match():
    fast, slow = CompiledCastleSiegeEnv(max_episode_steps=1), CastleSiegeEnv(max_episode_steps=1)
    with pytest.raises(EpisodeOverError):
        fast.step(0)
    fast.reset(seed=0)
    slow.reset(seed=0)
    bad = int(np.flatnonzero(~slow.action_masks())[0])
    with pytest.raises(IllegalActionError) as fast_err:
        fast.step(bad)
    with pytest.raises(IllegalActionError) as slow_err:
        slow.step(bad)
    assert str(fast_err.value) == str(slow_err.value)
    with pytest.raises(IllegalActionError, match="out of range"):
        fast.step(5000)
    fast.step(int(np.flatnonzero(fast.action_masks())[0]))   # truncated after one step
    with pytest.raises(EpisodeOverError, match="after the episode ended"):
        fast.step(0)


def test_render_and_describe():
    env = CompiledCastleSiegeEnv(render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str) and "attack" in env.describe_action(
        int(np.flatnonzero(env.action_masks())[0]))
    env = CompiledCastleSiegeEnv(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3
