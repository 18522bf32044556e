"""The harness's fast loop plays exactly the game the public env plays."""

import gymnasium
import numpy as np
import pytest
from castle_envs.agents import make_agent
from castle_envs.experiments.episodes import play_episode

import castle_envs  # noqa: F401
from castle_envs.castle_siege.rules import EVENTS


@pytest.mark.parametrize("spec", ["greedy", "heuristic", "random"])
def test_same_episode_as_through_gymnasium(spec):
    seed, index = 11, 4
    record = play_episode("castle-siege", (("difficulty", "medium"),), (), (spec,), seed, index)
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="medium")
    obs, info = env.reset(seed=seed + index)
    agent = make_agent(spec, "castle-siege")
    agent.reset([0, seed + index, 0])  # [agent seed, deal seed, seat]
    total, steps, done = 0.0, 0, False
    while not done:
        state = env.unwrapped.state
        a = agent.act(obs, info["action_mask"], state.clone() if agent.needs_state else None)
        obs, reward, terminated, truncated, info = env.step(a)
        total += reward
        steps += 1
        done = terminated or truncated
    assert record["returns"] == [total] and record["length"] == steps
    assert record["events"] == {
        k.removeprefix("events_"): float(v) for k, v in info.items() if k.startswith("events_")
    }
    assert set(record["events"]) == set(EVENTS)


def test_multiplayer_records_every_seat():
    r = play_episode(
        "castle-rooms", (("num_players", 3),), (), ("random", "heuristic", "random"), 0, 0
    )
    assert len(r["returns"]) == 3 and max(r["returns"]) == 1.0 and r["length"] > 0


def test_wrong_number_of_agents_is_an_error():
    with pytest.raises(ValueError, match="3 seats, got 2"):
        play_episode("castle-rooms", (("num_players", 3),), (), ("random", "random"), 0, 0)


def test_time_budget_search_returns_a_legal_move():
    from castle_envs.castle_siege.rules import State

    s = State.new_game(np.random.default_rng(0), "easy")
    a = make_agent("mcts:time=0.05", "castle-siege", seed=0).act(None, s.legal_action_mask(), s)
    assert s.legal_action_mask()[a]
