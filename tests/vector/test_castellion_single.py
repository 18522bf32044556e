"""``CompiledCastellionEnv`` is ``CastellionEnv``: same steps, info, errors and options."""
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import castle_envs
from castle_envs.castellion.actions import ENCOUNTER_NOW
from castle_envs.castellion.env import CastellionEnv
from castle_envs.core.errors import EpisodeOverError, IllegalActionError
from castle_envs.vector.castellion import CompiledCastellionEnv

from .helpers import games


def same_info(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


def lockstep(n_games, seed, illegal_every=0, **kwargs):
    fast, slow = CompiledCastellionEnv(**kwargs), CastellionEnv(**kwargs)
    rng = np.random.default_rng(seed)
    (fo, fi), (so, si) = fast.reset(seed=seed), slow.reset(seed=seed)
    played = illegal = 0
    while played < n_games:
        assert np.array_equal(fo, so)
        same_info(fi, si)
        legal = np.flatnonzero(si["action_mask"])
        if len(legal) > 1 and rng.random() < 0.95:
            legal = legal[legal != ENCOUNTER_NOW]   # longer games at the Academy and Menace
        action = rng.choice(legal)
        if illegal_every and rng.integers(illegal_every) == 0:
            action = int(rng.integers(-1, 140))
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


@pytest.mark.parametrize("kwargs", [
    {}, {"level": "academy", "reward": "ordeals"},
    {"level": "menace", "foundation_exemption": "neighbors"},
    {"level": "school", "max_episode_steps": 7},
])
def test_same_games_as_the_python_env(kwargs):
    lockstep(games(150), seed=len(kwargs), **kwargs)


def test_same_penalties():
    assert lockstep(games(150), seed=1, illegal_every=6, illegal_action="penalty",
                    level="menace") > 0


def test_make_single_and_gymnasium_checker():
    assert isinstance(castle_envs.vector.make_single("castellion", level="academy"),
                      CompiledCastellionEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(CompiledCastellionEnv(illegal_action="penalty"), skip_render_check=True)


def test_reset_options_and_state():
    options = {"regular_order": ["traitor"] * 9 + ["black-traitor"] * 3
               + [k for k in range(12) for _ in range(5)],
               "ordeals": ["exam-1", "exam-2", "exam-3a"]}
    fast, slow = CompiledCastellionEnv(), CastellionEnv()
    assert np.array_equal(fast.reset(seed=3, options=options)[0],
                          slow.reset(seed=3, options=options)[0])
    assert fast.state.to_dict() == slow.state.to_dict()
    slow.step(int(np.flatnonzero(slow.action_masks())[0]))
    saved = slow.state.to_dict()
    obs, info = fast.reset(options={"state": saved})
    assert fast.state.to_dict() == saved
    assert np.array_equal(info["action_mask"], slow.action_masks())
    with pytest.raises(ValueError, match="excludes"):
        fast.reset(options={"state": saved, "ordeals": options["ordeals"]})
    with pytest.raises(ValueError, match="unknown reset option"):
        fast.reset(options={"deck": []})
    with pytest.raises(ValueError, match="must be a dict"):
        fast.reset(options=[1])


def test_errors_match():
    fast, slow = CompiledCastellionEnv(max_episode_steps=1), CastellionEnv(max_episode_steps=1)
    with pytest.raises(EpisodeOverError):
        fast.step(0)
    with pytest.raises(EpisodeOverError):
        fast.action_masks()
    assert fast.state is None
    fast.reset(seed=0)
    slow.reset(seed=0)
    bad = int(np.flatnonzero(~slow.action_masks())[0])
    with pytest.raises(IllegalActionError) as fast_err:
        fast.step(bad)
    with pytest.raises(IllegalActionError) as slow_err:
        slow.step(bad)
    assert str(fast_err.value) == str(slow_err.value)
    with pytest.raises(IllegalActionError, match="out of range"):
        fast.step(500)
    fast.step(int(np.flatnonzero(fast.action_masks())[0]))   # truncated after one step
    with pytest.raises(EpisodeOverError, match="after the episode ended"):
        fast.step(0)


def test_render_and_describe():
    env = CompiledCastellionEnv(render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)
    assert env.describe_action(0).startswith("draw from the regular pile")
    assert env.decode_action(env.encode_action("discard the tile")) is not None
    env = CompiledCastellionEnv(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3
