"""The Gymnasium edges: ``make_vec``'s vector entry point, legal-action sampling
(rows with no legal action included), ``TypeError`` for unknown keywords, and a ``reset``
that raised leaving the env usable."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import castle_envs
import castle_envs.registry as vector
from castle_envs.castellion.vector import CastellionVectorEnv
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.core.errors import EpisodeOverError, UnknownOptionError
from castle_envs.core.per_env import PerEnvVectorEnv

IDS = {
    "castle_envs/CastleSiege-v0": ("castle-siege", CastleSiegeVectorEnv, {"difficulty": "hard"}),
    "castle_envs/Castellion-v0": ("castellion", CastellionVectorEnv, {"level": "menace"}),
}


@pytest.mark.parametrize("env_id", sorted(IDS))
def test_make_vec_gives_the_compiled_batched_env(env_id):
    game, cls, variant = IDS[env_id]
    for mode in (None, "vector_entry_point"):
        envs = gymnasium.make_vec(env_id, 3, vectorization_mode=mode, **variant)
        assert type(envs) is cls and envs.num_envs == 3
        assert envs.unwrapped.spec.id == env_id
        assert all(getattr(envs, k) == v for k, v in variant.items())
        obs, info = envs.reset(seed=5)
        same = castle_envs.make_vec(game, 3, **variant)
        assert np.array_equal(obs, same.reset(seed=5)[0])
        envs.step(envs.sample_actions())
    sync = gymnasium.make_vec(env_id, 2, vectorization_mode="sync", **variant)
    assert type(sync) is gymnasium.vector.SyncVectorEnv


@pytest.mark.parametrize("env_id", sorted(IDS))
def test_without_numba_make_vec_falls_back_to_python_envs(env_id, monkeypatch):
    game, _, variant = IDS[env_id]
    monkeypatch.setattr(vector, "HAVE_NUMBA", False)
    with pytest.warns(UserWarning, match=r"numba is not installed.*pip install numba"):
        envs = gymnasium.make_vec(env_id, 2, threads=2, **variant)
    assert type(envs) is PerEnvVectorEnv
    envs.reset(seed=0)
    actions = castle_envs.sample_masked(envs.action_masks(), 0)
    envs.step(actions)


# --- sampling legal actions ---------------------------------------------------------------------
@pytest.mark.parametrize("game", ["castle-siege", "castellion"])
def test_batched_sample_actions_is_legal_seeded_and_thread_independent(game):
    runs = []
    for threads in (1, 2, 3):
        envs = castle_envs.make_vec(game, 7, threads=threads)
        with pytest.raises(EpisodeOverError):
            envs.sample_actions()
        envs.reset(seed=11)
        drawn = []
        for _ in range(150):
            actions = envs.sample_actions()
            masks = envs.action_masks()
            assert masks[np.arange(7), actions].all()
            drawn.append(actions)
            envs.step(actions)
        runs.append(np.array(drawn))
        envs.close()
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])
    other = castle_envs.make_vec(game, 7)
    other.reset(seed=12)
    assert not np.array_equal(other.sample_actions(), runs[0][0])


@settings(max_examples=80, deadline=None)
@given(
    masks=arrays(bool, st.tuples(st.integers(1, 6), st.integers(1, 40))),
    seed=st.integers(0, 2**32 - 1),
    no_legal=st.integers(-1, 5),
)
def test_sample_masked_is_legal_and_handles_rows_without_a_legal_action(masks, seed, no_legal):
    actions = castle_envs.sample_masked(masks, seed, no_legal=no_legal)
    assert actions.shape == (len(masks),) and actions.dtype == np.int64
    for row, action in zip(masks, actions):
        if row.any():
            assert row[action]
        else:
            assert action == no_legal
    assert np.array_equal(actions, castle_envs.sample_masked(masks, seed, no_legal=no_legal))
    assert castle_envs.sample_masked(masks[0], seed, no_legal) == actions[0]


def test_sample_masked_is_uniform_over_the_legal_actions():
    mask = np.zeros((20_000, 9), bool)
    mask[:, [1, 4, 5, 8]] = True
    counts = np.bincount(castle_envs.sample_masked(mask, 0), minlength=9)
    assert counts[[0, 2, 3, 6, 7]].sum() == 0
    assert np.all(np.abs(counts[[1, 4, 5, 8]] - 5000) < 300)  # about 4 standard deviations


def test_next_step_autoreset_rows_without_a_legal_action_sample_and_step():
    """Gymnasium's default SyncVectorEnv: a finished env's row is all False, the next step
    resets it and ignores its action."""
    envs = gymnasium.make_vec(
        "castle_envs/CastleSiege-v0", 4, vectorization_mode="sync", difficulty="easy"
    )
    _, info = envs.reset(seed=0)
    empty_rows = 0
    for _ in range(400):
        masks = info["action_mask"]
        empty_rows += int((~masks.any(axis=1)).sum())
        _, _, _, _, info = envs.step(castle_envs.sample_masked(masks, 1))
    assert empty_rows > 0  # the case arose, and stepping went on


# --- keywords and a reset that raised -------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: gymnasium.make("castle_envs/CastleSiege-v0", no_such_option=1),
        lambda: gymnasium.make("castle_envs/Castellion-v0", no_such_option=1),
        lambda: castle_envs.make_vec("castle-siege", 2, no_such_option=1),
        lambda: castle_envs.make_vec("castellion", 2, no_such_option=1),
        lambda: gymnasium.make_vec("castle_envs/CastleSiege-v0", 2, no_such_option=1),
        lambda: vector.make_single("castle-siege", no_such_option=1),
        lambda: vector.make_single("castellion", no_such_option=1),
        lambda: castle_envs.castell_v0.env(no_such_option=1),
        lambda: castle_envs.castle_rooms_v0.env(no_such_option=1),
    ],
)
def test_unknown_keyword_arguments_raise_type_error(make):
    with pytest.raises(TypeError, match="no_such_option"):
        make()


def test_unknown_option_errors_are_still_value_errors():
    assert issubclass(UnknownOptionError, ValueError) and issubclass(UnknownOptionError, TypeError)
    env = gymnasium.make("castle_envs/CastleSiege-v0")
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"dek": []})


@pytest.mark.parametrize(
    "env_id, bad",
    [
        ("castle_envs/CastleSiege-v0", {"deck": [1, 2]}),
        ("castle_envs/Castellion-v0", {"ordeals": ["nonsense"]}),
    ],
)
def test_a_reset_that_raised_leaves_the_made_env_usable(env_id, bad):
    env = gymnasium.make(env_id)
    with pytest.raises(ValueError):
        env.reset(options=bad)
    obs, info = env.reset(seed=0)
    for _ in range(5):
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked = gymnasium.make(env_id, disable_env_checker=False)  # Gymnasium's checker
    assert "PassiveEnvChecker" in str(checked) and "PassiveEnvChecker" not in str(env)
