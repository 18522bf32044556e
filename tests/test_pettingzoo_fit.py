"""The PettingZoo edges: ``state()`` for centralized critics, masks after a
truncation, a step after the end, ``render_test``, and infos of one shape at every step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, render_test
from pettingzoo.test.state_test import test_state as pz_state_test
from pettingzoo.test.state_test import test_state_space as pz_state_space_test

from castle_envs import castell_v0, castle_rooms_v0
from castle_envs.core.errors import EpisodeOverError, IllegalActionError

GAMES = {"castle-rooms": castle_rooms_v0, "castell": castell_v0}


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_state_is_every_seats_observation_in_the_state_space(game, players):
    module = GAMES[game]
    env = module.env(num_players=players, illegal_action="penalty")  # it samples unmasked
    pz_state_space_test(env)
    pz_state_test(env, num_cycles=60, seed=0)
    env.reset(seed=3)
    raw = env.unwrapped
    state = env.state()
    assert (
        state.shape
        == raw.state_space.shape
        == (players * raw.observation_space("player_0")["observation"].shape[0],)
    )
    seats = [raw.observe(agent)["observation"] for agent in raw.possible_agents]
    assert np.array_equal(state, np.concatenate(seats))
    with pytest.raises(EpisodeOverError):
        module.raw_env(num_players=players).state()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_old_state_attribute_still_answers_with_a_warning(game):
    env = GAMES[game].raw_env()
    env.reset(seed=0)
    with pytest.warns(DeprecationWarning, match="game_state"):
        legal = env.state.legal_action_mask()
    assert np.array_equal(legal, env.game_state.legal_action_mask())


@pytest.mark.parametrize("game", sorted(GAMES))
def test_after_truncation_every_mask_is_empty(game):
    env = GAMES[game].env(num_players=3, max_episode_steps=6)
    env.reset(seed=1)
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            assert trunc and not obs["action_mask"].any() and "action_mask" not in info
            assert not env.unwrapped.action_masks().any()
            for other in env.agents:
                assert not env.observe(other)["action_mask"].any()
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert all(env.truncations.values()) if env.agents else True


@pytest.mark.parametrize("wrapped", [True, False])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_step_after_the_end_raises(game, wrapped):
    module = GAMES[game]
    env = module.env(num_players=2) if wrapped else module.raw_env(num_players=2)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
    assert not env.agents
    with pytest.raises(EpisodeOverError, match="call reset"):
        env.step(0)
    with pytest.raises(EpisodeOverError):
        env.step(None)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_castell_and_castle_rooms_give_clear_errors_for_bad_actions(game):
    env = GAMES[game].env(num_players=2, illegal_action="raise")
    env.reset(seed=0)
    n = env.action_space(env.agent_selection).n
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(n)
    with pytest.raises(IllegalActionError, match="must act"):
        env.step(None)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_render_test_passes_and_human_mode_prints(game, capsys):
    module = GAMES[game]
    render_test(lambda render_mode=None: module.env(num_players=2, render_mode=render_mode))
    env = module.env(num_players=2, render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert "player" in capsys.readouterr().out.lower()


def info_shape(value):
    if isinstance(value, dict):
        return {k: info_shape(v) for k, v in value.items()}
    array = np.asarray(value)
    return array.shape, array.dtype.kind


@pytest.mark.parametrize("mode", ["raise", "penalty"])
@pytest.mark.parametrize("game", sorted(GAMES))
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), players=st.integers(2, 4))
def test_infos_have_one_shape_at_every_step(game, mode, seed, players):
    env = GAMES[game].raw_env(num_players=players, illegal_action=mode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    shape = info_shape(env.infos["player_0"])
    history = []
    steps = 0
    for agent in env.agent_iter(max_iter=3000):
        for info in env.infos.values():
            assert info_shape(info) == shape
        history.append(env.infos[agent])
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if mode == "penalty" and steps == 40:
            env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # an illegal move
        else:
            env.step(int(rng.choice(legal)))
        steps += 1
    # what a replay buffer does with them: stack every entry across the game
    for key, value in shape.items():
        if not isinstance(value, dict):
            np.stack([np.asarray(info[key]) for info in history])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_api_test_still_passes(game):
    api_test(GAMES[game].env(num_players=3), num_cycles=200)
