"""The batched env as a ``gymnasium.vector.VectorEnv``: spaces, autoreset, seeding, masks,
copies, bad input, renders, positions in and out, the sampler and the no-numba fallback."""

import json

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import castle_envs
from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege.actions import END_BATTLE, NUM_ACTIONS
from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.castle_siege.observation import OBS_SIZE, encode
from castle_envs.castle_siege.rules import State
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.core.jit import HAVE_NUMBA

from .helpers import (
    assert_bad_calls_raise,
    assert_copy_false_shares_and_copy_true_does_not,
    assert_illegal_action_raises,
    assert_renders,
    assert_runs_without_numba,
    assert_same_as_sync_vector_env,
    assert_same_trajectories,
    assert_set_state_plays_on,
    random_actions,
)


def test_spaces_shapes_and_masks():
    envs = castle_envs.make_vec("castle-siege", num_envs=6, difficulty="hard")
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    assert envs.single_observation_space.shape == (OBS_SIZE,)
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([NUM_ACTIONS] * 6)
    obs, info = envs.reset(seed=1)
    assert obs.shape == (6, OBS_SIZE) and obs.dtype == np.float32
    assert envs.observation_space.contains(obs)
    masks = envs.action_masks()
    assert masks.shape == (6, NUM_ACTIONS) and masks.dtype == bool
    assert np.array_equal(masks, info["action_mask"])
    for i in range(6):
        state = envs.state(i)
        assert np.array_equal(masks[i], state.legal_action_mask())
        assert np.array_equal(obs[i], encode(state))
    rng = np.random.default_rng(0)
    obs, rewards, terminated, truncated, info = envs.step(random_actions(masks, rng))
    assert rewards.shape == terminated.shape == truncated.shape == (6,)
    assert envs.observation_space.contains(obs)


def test_same_as_gymnasium_sync_vector_env_with_same_step_autoreset():
    n = 4
    ours = CastleSiegeVectorEnv(n, difficulty="easy")
    sync = SyncVectorEnv(
        [lambda: CastleSiegeEnv("easy") for _ in range(n)], autoreset_mode=AutoresetMode.SAME_STEP
    )
    assert assert_same_as_sync_vector_env(ours, sync, np.random.default_rng(1)) > 20


def test_seeding():
    def first_obs(seed, n=3):
        envs = CastleSiegeVectorEnv(n)
        return envs.reset(seed=seed)[0]

    assert np.array_equal(first_obs(5), first_obs(5))
    assert not np.array_equal(first_obs(5), first_obs(6))
    # env i gets seed + i, so shifting the seed shifts the envs
    assert np.array_equal(first_obs(5)[1:], first_obs(6)[:2])
    envs = CastleSiegeVectorEnv(2)
    assert np.array_equal(envs.reset(seed=[6, 5])[0], first_obs(5, 2)[::-1])
    with pytest.raises(ValueError, match="need 2 seeds"):
        envs.reset(seed=[1, 2, 3])
    # reset() without a seed continues each env's generator, as the single env does
    envs.reset(seed=8)
    again, _ = envs.reset()
    single = CastleSiegeEnv()
    single.reset(seed=9)
    assert np.array_equal(again[1], single.reset()[0])
    # unseeded envs draw fresh entropy
    assert not np.array_equal(
        CastleSiegeVectorEnv(2).reset()[0], CastleSiegeVectorEnv(2).reset()[0]
    )


def test_copy_false_returns_the_envs_buffers_and_copy_true_does_not():
    assert_copy_false_shares_and_copy_true_does_not(lambda copy: CastleSiegeVectorEnv(4, copy=copy))


def test_parallel_kernel_gives_the_same_trajectories():
    assert_same_trajectories(
        CastleSiegeVectorEnv(64), CastleSiegeVectorEnv(64, parallel=True, threads=2), steps=40
    )


def test_illegal_action_raises_naming_env_and_move_and_changes_nothing():
    envs = CastleSiegeVectorEnv(3, illegal_action="raise")
    info = envs.reset(seed=0)[1]
    assert_illegal_action_raises(
        envs,
        int(np.flatnonzero(~info["action_mask"][1])[0]),
        r"env 1: illegal action \d+ \(",
        NUM_ACTIONS,
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": "4"}, "num_envs"),
        ({"num_envs": 2, "difficulty": "impossible"}, "difficulty"),
        ({"num_envs": 2, "attack": "sideways"}, "attack"),
        ({"num_envs": 2, "reward": "gold"}, "reward"),
        ({"num_envs": 2, "colour": "red"}, "colour"),
        ({"num_envs": 2, "illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CastleSiegeVectorEnv(**kwargs)


def test_bad_calls():
    envs = CastleSiegeVectorEnv(2)
    assert_bad_calls_raise(envs, END_BATTLE)
    with pytest.raises(ValueError, match="unknown reset option"):
        envs.reset(options={"deck": list(range(52))})
    with pytest.raises(ValueError, match="needs 2 decks"):
        envs.reset(options={"decks": [list(range(52))]})
    with pytest.raises(ValueError, match="repeats"):
        envs.reset(options={"decks": [list(range(52)), [0] * 52]})
    with pytest.raises(ValueError, match="unknown game"):
        castle_envs.make_vec("castle-dungeon", 2)
    with pytest.raises(ValueError, match="no batched env"):
        castle_envs.make_vec("castle-rooms", 2)


def test_decks_option_deals_those_decks():
    decks = [list(range(52)), list(range(51, -1, -1))]
    envs = CastleSiegeVectorEnv(2, difficulty="medium")
    obs, _ = envs.reset(options={"decks": decks})
    for i, deck in enumerate(decks):
        single_obs, _ = CastleSiegeEnv("medium").reset(options={"deck": deck})
        assert np.array_equal(obs[i], single_obs)
        assert envs.state(i).castles.tolist() == deck[:4]


def test_positions_in_and_out_through_json():
    rng = np.random.default_rng(2)
    single = CastleSiegeEnv("hard")
    _, info = single.reset(seed=3)
    for _ in range(6):
        _, _, term, _, info = single.step(rng.choice(np.flatnonzero(info["action_mask"])))
        assert not term
    saved = json.loads(
        single.state.to_json()
        if hasattr(single.state, "to_json")
        else json.dumps(single.state.to_dict())
    )
    envs = CastleSiegeVectorEnv(3, difficulty="hard")
    assert_set_state_plays_on(envs, State.from_dict(saved), saved, single, info, rng)
    with pytest.raises(ValueError, match="difficulty and rules"):
        envs.set_state(0, State.new_game(np.random.default_rng(0), "easy"))


def test_renders():
    assert_renders(lambda render_mode: CastleSiegeVectorEnv(2, render_mode=render_mode))


def test_sampler_picks_every_legal_action_and_only_legal_ones():
    envs = CastleSiegeVectorEnv(4, copy=False)
    envs.reset(seed=0)
    words = np.arange(1, 5, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    out = np.zeros(4, np.int64)
    seen = [set() for _ in range(4)]
    draws = 12000 if HAVE_NUMBA else 1500
    for _ in range(draws):  # about 430 legal actions each: all are drawn, w.h.p.
        K.sample_legal(envs._mask_padded, words, out)
        for i in range(4):
            seen[i].add(int(out[i]))
    for i in range(4):
        legal = set(np.flatnonzero(envs.action_masks()[i]).tolist())
        assert seen[i] <= legal
        assert seen[i] == legal or not HAVE_NUMBA
    empty = np.zeros((2, K.MASK_WIDTH), bool)
    K.sample_legal(empty, words[:2], out[:2])
    assert out[:2].tolist() == [-1, -1]


def test_works_without_numba():
    # the same kernels run uncompiled (slowly) when numba is missing, with a warning
    code = """
import sys, warnings
sys.modules['numba'] = None
import numpy as np
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.castle_siege.env import CastleSiegeEnv
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    envs = CastleSiegeVectorEnv(2, difficulty='easy')
assert any('numba is not installed' in str(w.message) for w in caught)
singles = [CastleSiegeEnv('easy') for _ in range(2)]
obs, info = envs.reset(seed=4)
single = [e.reset(seed=4 + i) for i, e in enumerate(singles)]
rng = np.random.default_rng(0)
for _ in range(40):
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in info['action_mask']])
    obs, rew, term, trunc, info = envs.step(actions)
    for i, e in enumerate(singles):
        o, r, t, u, inf = e.step(actions[i])
        if t or u:
            assert np.array_equal(o, info['final_obs'][i])
            o, inf = e.reset()
        assert np.array_equal(o, obs[i]) and r == rew[i] and t == term[i]
        assert np.array_equal(inf['action_mask'], info['action_mask'][i])
print('ok')
"""
    assert_runs_without_numba(code)


def test_games_without_a_kernel_get_the_per_env_fallback(monkeypatch):
    # every Gymnasium game has a kernel now: hide Castellion's to test the fallback
    monkeypatch.delitem(castle_envs.registry.VECTOR_GAMES, "castellion")
    with pytest.warns(UserWarning, match="no compiled kernel"):
        envs = castle_envs.make_vec("castellion", 3, level="school")
    obs, info = envs.reset(seed=0)
    masks = envs.action_masks()
    assert masks.shape == (3, envs.single_action_space.n) and masks.dtype == bool
    assert np.array_equal(masks, info["action_mask"])
    rng = np.random.default_rng(0)
    obs, rewards, terminated, truncated, info = envs.step(random_actions(masks, rng))
    assert obs.shape == (3,) + envs.single_observation_space.shape
    with pytest.raises(ValueError, match="level"), pytest.warns(UserWarning):
        castle_envs.make_vec("castellion", 2, level="kindergarten")
