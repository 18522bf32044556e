"""``CompiledCastleSiegeEnv`` is ``CastleSiegeEnv``: same steps, info, errors and options."""

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from castle_envs.castle_siege.compiled import CompiledCastleSiegeEnv
from castle_envs.core.errors import EpisodeOverError

from ..reference.castle_siege import ReferenceCastleSiegeEnv as CastleSiegeEnv
from .helpers import assert_single_errors_match, single_lockstep


def lockstep(n_games, seed, illegal_every=0, **kwargs):
    return single_lockstep(
        CompiledCastleSiegeEnv(**kwargs),
        CastleSiegeEnv(**kwargs),
        n_games,
        seed,
        illegal_ids=(-1, 1700),
        illegal_every=illegal_every,
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"difficulty": "easy", "reward": "shaped"},
        {"difficulty": "medium", "attack": "most_recent", "defeated": "leave_game"},
        {"difficulty": "hard", "max_episode_steps": 7},
        {"difficulty": "easy", "victory": "deck_left"},
    ],
)
def test_same_games_as_the_python_env(kwargs):
    lockstep(300, seed=len(kwargs), **kwargs)


def test_same_penalties():
    assert lockstep(200, seed=1, illegal_every=6, illegal_action="penalty") > 0


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_gymnasium_checker(victory):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(
            CompiledCastleSiegeEnv(illegal_action="penalty", victory=victory),
            skip_render_check=True,
        )


def test_reset_options_and_state():
    deck = list(range(51, -1, -1))
    fast, slow = CompiledCastleSiegeEnv("hard"), CastleSiegeEnv("hard")
    assert np.array_equal(
        fast.reset(options={"deck": deck})[0], slow.reset(options={"deck": deck})[0]
    )
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
    fast = CompiledCastleSiegeEnv(max_episode_steps=1, illegal_action="raise")
    slow = CastleSiegeEnv(max_episode_steps=1, illegal_action="raise")
    with pytest.raises(EpisodeOverError):
        fast.step(0)
    assert_single_errors_match(fast, slow, out_of_range=5000)


def test_render_and_describe():
    env = CompiledCastleSiegeEnv(render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str) and "attack" in env.describe_action(
        int(np.flatnonzero(env.action_masks())[0])
    )
    env = CompiledCastleSiegeEnv(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3
