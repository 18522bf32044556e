"""``CompiledCastellionEnv`` is ``CastellionEnv``: same steps, info, errors and options."""

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import castle_envs
from castle_envs.castellion.actions import ENCOUNTER_NOW
from castle_envs.castellion.env import CastellionEnv
from castle_envs.castellion.vector import CompiledCastellionEnv
from castle_envs.core.errors import EpisodeOverError

from .helpers import assert_single_errors_match, games, single_lockstep


def rarely_encounter_now(legal, rng):
    if len(legal) > 1 and rng.random() < 0.95:
        return legal[legal != ENCOUNTER_NOW]  # longer games at the Academy and Menace
    return legal


def lockstep(n_games, seed, illegal_every=0, **kwargs):
    return single_lockstep(
        CompiledCastellionEnv(**kwargs),
        CastellionEnv(**kwargs),
        n_games,
        seed,
        illegal_ids=(-1, 140),
        illegal_every=illegal_every,
        narrow=rarely_encounter_now,
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"level": "academy", "reward": "ordeals"},
        {"level": "menace", "foundation_exemption": "neighbors"},
        {"level": "academy", "early_encounter": "turn_start"},
        {"level": "school", "max_episode_steps": 7},
    ],
)
def test_same_games_as_the_python_env(kwargs):
    lockstep(games(150), seed=len(kwargs), **kwargs)


def test_same_penalties():
    assert (
        lockstep(games(150), seed=1, illegal_every=6, illegal_action="penalty", level="menace") > 0
    )


def test_make_single_and_gymnasium_checker():
    assert isinstance(
        castle_envs.registry.make_single("castellion", level="academy"), CompiledCastellionEnv
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(CompiledCastellionEnv(illegal_action="penalty"), skip_render_check=True)


def test_reset_options_and_state():
    options = {
        "regular_order": ["traitor"] * 9
        + ["black-traitor"] * 3
        + [k for k in range(12) for _ in range(5)],
        "ordeals": ["exam-1", "exam-2", "exam-3a"],
    }
    fast, slow = CompiledCastellionEnv(), CastellionEnv()
    assert np.array_equal(
        fast.reset(seed=3, options=options)[0], slow.reset(seed=3, options=options)[0]
    )
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
    fast = CompiledCastellionEnv(max_episode_steps=1, illegal_action="raise")
    slow = CastellionEnv(max_episode_steps=1, illegal_action="raise")
    with pytest.raises(EpisodeOverError):
        fast.step(0)
    with pytest.raises(EpisodeOverError):
        fast.action_masks()
    assert fast.state is None
    assert_single_errors_match(fast, slow, out_of_range=500)


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
