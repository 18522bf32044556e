"""Copies and pickles of every env kind play on exactly as the original.

Each env is played a random number of moves, copied (``copy.deepcopy`` or a pickle round
trip), and then the original and the copy get the same moves, through the end of episodes
and resets without a seed (the random streams are copied too): every observation, reward,
flag and mask must agree. Copies that shared buffers with the original would apply each move
twice and drift apart at once.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import castle_envs
from castle_envs.core.per_env import PerEnvVectorEnv
from castle_envs.registry import make_single, make_vec
from castle_envs.wrappers import SingleAgentEnv

COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda env: pickle.loads(pickle.dumps(env))}


def first_legal(observation, mask, state):
    return int(np.flatnonzero(mask)[0])


# --- drivers: one move of an env, and what it shows after it -------------------------------
class Single:
    """A Gymnasium env (``step(int)``, ``action_masks()``)."""

    def __init__(self, env):
        self.env = env
        self.env.reset(seed=7)

    def move(self, rng):
        mask = (
            self.env.unwrapped.action_masks()
            if hasattr(self.env.unwrapped, "action_masks")
            else self.env.action_masks()
        )
        return int(rng.choice(np.flatnonzero(mask)))

    def play(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        if term or trunc:
            obs, info = self.env.reset()  # no seed: the copied generator deals the next game
        return [obs, reward, term, trunc, info["action_mask"]]


class Batched(Single):
    """A ``gymnasium.vector.VectorEnv`` with ``action_masks()``."""

    def move(self, rng):
        return np.array([rng.choice(np.flatnonzero(row)) for row in self.env.action_masks()])

    def play(self, actions):
        obs, rewards, term, trunc, info = self.env.step(actions)
        return [obs, rewards, term, trunc, info["action_mask"]]


class Turns(Single):
    """A PettingZoo AEC env."""

    def __init__(self, env):
        self.env = env
        self.env.reset(seed=7)

    def move(self, rng):
        obs, _, term, trunc, _ = self.env.last()
        return None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))

    def play(self, action):
        self.env.step(action)
        if not self.env.agents:
            self.env.reset(seed=11)
        agent = self.env.agent_selection
        obs = self.env.observe(agent)
        return [
            agent,
            obs["observation"],
            obs["action_mask"],
            sorted(self.env.rewards.items()),
            sorted(self.env.terminations.items()),
        ]


ENVS = {
    "castle-siege python": lambda: Single(
        gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy")
    ),
    "castellion python": lambda: Single(gymnasium.make("castle_envs/Castellion-v0")),
    "castle-siege compiled single": lambda: Single(make_single("castle-siege", difficulty="easy")),
    "castellion compiled single": lambda: Single(make_single("castellion", level="menace")),
    "castle-siege batched": lambda: Batched(make_vec("castle-siege", 3, difficulty="easy")),
    "castellion batched": lambda: Batched(make_vec("castellion", 3)),
    "castle-siege batched, 2 threads": lambda: Batched(
        make_vec("castle-siege", 3, threads=2, difficulty="easy")
    ),
    "castellion batched, 2 threads": lambda: Batched(make_vec("castellion", 3, threads=2)),
    "castellion per-env batch": lambda: Batched(
        PerEnvVectorEnv(castle_envs.get_game("castellion").load_env_class(), 2)
    ),
    "castle-rooms": lambda: Turns(castle_envs.castle_rooms_v0.env(num_players=3)),
    "castell": lambda: Turns(castle_envs.castell_v0.env(num_players=2)),
    "castle-rooms raw": lambda: Turns(castle_envs.castle_rooms_v0.raw_env(num_players=2)),
    "castell seat as a Gymnasium env": lambda: Single(
        SingleAgentEnv(castle_envs.castell_v0.raw_env(num_players=2), [first_legal], seat=1)
    ),
}


def same(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("kind", sorted(ENVS))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), before=st.integers(0, 40))
def test_a_copy_plays_on_exactly_as_the_original(kind, how, seed, before):
    rng = np.random.default_rng(seed)
    original = ENVS[kind]()
    for _ in range(before):
        original.play(original.move(rng))
    twin = copy.copy(original)
    twin.env = COPIES[how](original.env)
    assert twin.env is not original.env
    for step in range(60):
        action = original.move(rng)
        assert same(original.play(action), twin.play(action)), f"differs at move {step}"
    original.env.close()
    twin.env.close()


def test_a_closed_batched_env_copies_as_closed():
    envs = make_vec("castle-siege", 4, threads=2)
    envs.reset(seed=0)
    envs.close()
    twin = pickle.loads(pickle.dumps(envs))
    assert twin.closed and twin.threads == 2
    masks = twin.action_masks()
    twin.step(np.array([np.flatnonzero(row)[0] for row in masks]))  # steps on one thread
