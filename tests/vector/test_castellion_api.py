"""The batched Castellion env as a ``gymnasium.vector.VectorEnv``: registration, spaces,
autoreset against ``SyncVectorEnv``, seeding (deals drawn bit for bit as the single env
draws them), reset options, masks, errors, positions in and out, renders, the sampler and
the no-numba fallback."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import castle_envs
from castle_envs.castellion import kernel as K
from castle_envs.castellion.actions import NUM_ACTIONS
from castle_envs.castellion.env import CastellionEnv
from castle_envs.castellion.observation import OBS_SIZE, encode
from castle_envs.castellion.rules import State
from castle_envs.castellion.vector import CastellionVectorEnv
from castle_envs.core import pcg64

from .helpers import (
    assert_bad_calls_raise,
    assert_copy_false_shares_and_copy_true_does_not,
    assert_illegal_action_raises,
    assert_renders,
    assert_runs_without_numba,
    assert_same_as_sync_vector_env,
    assert_same_trajectories,
    assert_set_state_plays_on,
)


def test_make_vec_builds_the_compiled_env_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = castle_envs.make_vec("castellion", num_envs=5, level="menace")
    assert isinstance(envs, CastellionVectorEnv) and isinstance(envs, gymnasium.vector.VectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    assert envs.single_observation_space == CastellionEnv().observation_space
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([NUM_ACTIONS] * 5)
    obs, info = envs.reset(seed=1)
    assert obs.shape == (5, OBS_SIZE) and obs.dtype == np.float32
    assert envs.observation_space.contains(obs)
    masks = envs.action_masks()
    assert masks.shape == (5, NUM_ACTIONS) and masks.dtype == bool
    assert np.array_equal(masks, info["action_mask"])
    for i in range(5):
        state = envs.state(i)
        assert np.array_equal(masks[i], state.legal_action_mask())
        assert np.array_equal(obs[i], encode(state))
        assert state.face_down.tolist() == [True, True, True]


@pytest.mark.parametrize("level", ["school", "academy", "menace"])
def test_deals_are_the_single_envs_deals(level):
    # the whole dealt position (both pile orders, the ordeal cards) for many seeds
    envs = CastellionVectorEnv(64, level=level)
    envs.reset(seed=1000)
    for i in range(64):
        single = CastellionEnv(level)
        single.reset(seed=1000 + i)
        assert envs.state(i).to_dict() == single.state.to_dict()
        # and the generators are left in the same place
        assert np.array_equal(envs._rng[i], pcg64.to_words(single.np_random))


def test_same_as_gymnasium_sync_vector_env_with_same_step_autoreset():
    n = 4
    ours = CastellionVectorEnv(n, level="academy")
    sync = SyncVectorEnv(
        [lambda: CastellionEnv("academy") for _ in range(n)], autoreset_mode=AutoresetMode.SAME_STEP
    )
    assert assert_same_as_sync_vector_env(ours, sync, np.random.default_rng(1)) > 20


def test_seeding():
    def first_obs(seed, n=3):
        return CastellionVectorEnv(n, level="menace").reset(seed=seed)[0]

    assert np.array_equal(first_obs(5), first_obs(5))
    envs = CastellionVectorEnv(2)
    a = CastellionVectorEnv(3)
    a.reset(seed=5)
    b = CastellionVectorEnv(3)
    b.reset(seed=6)
    assert a.state(1).to_dict() == b.state(0).to_dict()  # env i gets seed + i
    assert a.state(0).to_dict() != b.state(0).to_dict()
    envs.reset(seed=[6, 5])
    assert envs.state(1).to_dict() == a.state(0).to_dict()
    with pytest.raises(ValueError, match="need 2 seeds"):
        envs.reset(seed=[1, 2, 3])
    # reset() without a seed continues each env's generator, as the single env does
    envs.reset(seed=8)
    envs.reset()
    single = CastellionEnv()
    single.reset(seed=9)
    single.reset()
    assert envs.state(1).to_dict() == single.state.to_dict()
    # unseeded envs draw fresh entropy
    x, y = CastellionVectorEnv(1), CastellionVectorEnv(1)
    x.reset()
    y.reset()
    assert x.state(0).to_dict() != y.state(0).to_dict()


def test_reset_options_are_the_single_envs():
    options = {
        "regular_top": ["pyro-circle", "traitor"],
        "safe_order": list(range(12)),
        "ordeals": ["exam-1", "exam-2", "exam-3b"],
    }
    envs = CastellionVectorEnv(3)
    obs, info = envs.reset(seed=7, options=options)
    for i in range(3):
        single = CastellionEnv()
        o, inf = single.reset(seed=7 + i, options=options)
        assert np.array_equal(obs[i], o) and np.array_equal(
            info["action_mask"][i], inf["action_mask"]
        )
        assert envs.state(i).to_dict() == single.state.to_dict()
        assert np.array_equal(envs._rng[i], pcg64.to_words(single.np_random))
    with pytest.raises(ValueError, match="unknown reset option"):
        envs.reset(options={"decks": []})
    with pytest.raises(ValueError, match="options must be a dict"):
        envs.reset(options=[1])
    academy = State.new_game(np.random.default_rng(0), "academy").to_dict()
    with pytest.raises(ValueError, match="level .academy., but this env plays level .school."):
        envs.reset(options={"state": academy})


def test_copy_false_returns_the_envs_buffers_and_copy_true_does_not():
    assert_copy_false_shares_and_copy_true_does_not(lambda copy: CastellionVectorEnv(4, copy=copy))


def test_parallel_kernel_gives_the_same_trajectories():
    assert_same_trajectories(
        CastellionVectorEnv(64, level="menace"),
        CastellionVectorEnv(64, level="menace", parallel=True, threads=2),
        steps=60,
    )


def test_illegal_action_raises_naming_env_and_move_and_changes_nothing():
    envs = CastellionVectorEnv(3, illegal_action="raise")
    # 16: place a Traitor (no Traitor in hand at the start)
    assert_illegal_action_raises(envs, 16, r"env 1: illegal action 16 \(", NUM_ACTIONS)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": "4"}, "num_envs"),
        ({"num_envs": 2, "level": "kindergarten"}, "level"),
        ({"num_envs": 2, "foundation_exemption": "none"}, "foundation_exemption"),
        ({"num_envs": 2, "early_encounter": "never"}, "early_encounter"),
        ({"num_envs": 2, "reward": "gold"}, "reward"),
        ({"num_envs": 2, "colour": "red"}, "colour"),
        ({"num_envs": 2, "illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CastellionVectorEnv(**kwargs)


def test_bad_calls():
    envs = CastellionVectorEnv(2)
    assert_bad_calls_raise(envs, 0)


def test_positions_in_and_out():
    rng = np.random.default_rng(2)
    single = CastellionEnv("academy")
    _, info = single.reset(seed=3)
    for _ in range(8):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, _, info = single.step(rng.choice(legal[legal != 6]))
        assert not term
    saved = single.state.to_dict()
    envs = CastellionVectorEnv(3, level="academy")
    assert_set_state_plays_on(envs, State.from_dict(saved), saved, single, info, rng)
    with pytest.raises(ValueError, match="level and rules"):
        envs.set_state(0, State.new_game(np.random.default_rng(0), "school"))
    with pytest.raises(ValueError, match="level and rules"):
        envs.set_state(
            0, State.new_game(np.random.default_rng(0), "academy", foundation_exemption="neighbors")
        )


def test_renders():
    assert_renders(lambda render_mode: CastellionVectorEnv(2, render_mode=render_mode))


def test_sampler_picks_every_legal_action_and_only_legal_ones():
    envs = CastellionVectorEnv(4, copy=False)
    envs.reset(seed=0)
    assert K.MASK_WIDTH % 8 == 0 and envs._mask_padded.shape[1] == K.MASK_WIDTH
    words = np.arange(1, 5, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    out = np.zeros(4, np.int64)
    seen = [set() for _ in range(4)]
    for _ in range(200):
        with np.errstate(over="ignore"):  # uncompiled (no numba), uint64 products wrap
            envs.kernel.sample_legal(envs._mask_padded, words, out)
        for i in range(4):
            seen[i].add(int(out[i]))
    for i in range(4):
        assert seen[i] == set(np.flatnonzero(envs.action_masks()[i]).tolist())


def test_works_without_numba():
    # the same kernels run uncompiled (slowly) when numba is missing, with a warning
    code = """
import sys, warnings
sys.modules['numba'] = None
import numpy as np
from castle_envs.castellion.vector import CastellionVectorEnv
from castle_envs.castellion.env import CastellionEnv
for level in ('school', 'menace'):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        envs = CastellionVectorEnv(2, level=level)
    if level == 'school':
        assert any('numba is not installed' in str(w.message) for w in caught)
    singles = [CastellionEnv(level) for _ in range(2)]
    obs, info = envs.reset(seed=4)
    single = [e.reset(seed=4 + i) for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(60):
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
