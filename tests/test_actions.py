"""Actions of every type, on every env kind.

An action is one integer: Python and NumPy integers and 0-d integer arrays or tensors play
the move with that id; floats of every kind (integral ones too, as Gymnasium's
``Discrete.contains`` says), bools, strings and arrays are refused with ``ActionTypeError``
(an ``IllegalActionError`` and a ``TypeError``) in both ``illegal_action`` modes, and leave
the env as it was. Integers outside the action space (below 0, at or above its size, however
large) are refused the same way, with ``ActionSpaceError`` naming the env (and the row of a
batch), the value and the space: the penalty is for moves of the space the rules forbid.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import castle_envs
from castle_envs.core.errors import (
    ActionSpaceError,
    ActionTypeError,
    EpisodeOverError,
    IllegalActionError,
)
from castle_envs.core.per_env import PerEnvVectorEnv
from castle_envs.registry import make_single, make_vec
from castle_envs.wrappers import SingleAgentEnv

try:
    import torch
except ImportError:  # the train extra is optional: tensors are then left out
    torch = None


def first_legal(observation, mask, state):
    return int(np.flatnonzero(mask)[0])


SINGLE = {
    "castle-siege python": lambda **kw: gymnasium.make("castle_envs/CastleSiege-v0", **kw),
    "castellion python": lambda **kw: gymnasium.make("castle_envs/Castellion-v0", **kw),
    "castle-siege compiled": lambda **kw: make_single("castle-siege", **kw),
    "castellion compiled": lambda **kw: make_single("castellion", **kw),
    "castell seat": lambda **kw: SingleAgentEnv(
        castle_envs.castell_v0.raw_env(**kw), [first_legal], seat=0
    ),
}
AEC = {
    "castle-rooms": lambda **kw: castle_envs.castle_rooms_v0.raw_env(**kw),
    "castell": lambda **kw: castle_envs.castell_v0.raw_env(**kw),
    "castle-rooms wrapped": lambda **kw: castle_envs.castle_rooms_v0.env(**kw),
    "castell wrapped": lambda **kw: castle_envs.castell_v0.env(**kw),
}
BATCHED = {
    "castle-siege": lambda **kw: make_vec("castle-siege", 3, **kw),
    "castellion": lambda **kw: make_vec("castellion", 3, **kw),
}
MODES = ("raise", "penalty")


def float_kinds(value: float) -> list:
    with np.errstate(over="ignore"):  # huge values become inf in the narrow types
        kinds = [
            value,
            np.float64(value),
            np.float32(value),
            np.array(value),
            np.array(value, dtype=np.float16),
        ]
    if torch is not None:
        kinds.append(torch.tensor(value))
    return kinds


def integer_kinds(value: int) -> list:
    kinds = [
        value,
        np.int64(value),
        np.int16(value),
        np.uint16(value),
        np.array(value),
        np.array(value, dtype=np.uint32),
    ]
    if torch is not None:
        kinds.append(torch.tensor(value))
    return kinds


NOT_INTEGERS = [True, np.bool_(False), "3", None, [3], np.array([3]), 3 + 0j]


# --- single-agent Gymnasium envs -----------------------------------------------------------
def masks(env):
    return (
        env.unwrapped.action_masks()
        if hasattr(env.unwrapped, "action_masks")
        else env.action_masks()
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(SINGLE))
@settings(max_examples=15, deadline=None)
@given(value=st.floats(allow_nan=True, allow_infinity=True), legal_index=st.integers(0, 1000))
def test_single_envs_refuse_floats_and_play_integers(kind, mode, value, legal_index):
    env = SINGLE[kind](illegal_action=mode)
    env.reset(seed=3)
    legal = np.flatnonzero(masks(env))
    action = int(legal[legal_index % len(legal)])
    for bad in (
        float_kinds(value) + float_kinds(action + 0.5) + float_kinds(float(action)) + NOT_INTEGERS
    ):
        with pytest.raises(ActionTypeError, match="not an integer"):
            env.step(bad)
    assert np.array_equal(np.flatnonzero(masks(env)), legal)  # nothing moved
    results = []
    for good in integer_kinds(action):
        twin = SINGLE[kind](illegal_action=mode)
        twin.reset(seed=3)
        obs, reward, term, trunc, info = twin.step(good)
        assert not info.get("illegal_action", False)
        results.append(obs)
    assert all(np.array_equal(results[0], obs) for obs in results)


def position(env) -> str:
    """The whole position of a single env (a seat's wrapper: its AEC game's)."""
    base = env.unwrapped
    state = base.game_state if hasattr(base, "game_state") else base.aec.unwrapped.game_state
    return state.to_json()


OUTSIDE = st.one_of(st.integers(max_value=-1), st.integers(min_value=1700, max_value=2**70))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(SINGLE))
@settings(max_examples=10, deadline=None)
@given(value=OUTSIDE)
def test_actions_outside_the_space_raise_in_every_mode_and_change_nothing(kind, mode, value):
    env = SINGLE[kind](illegal_action=mode, illegal_action_penalty=-3.0)
    env.reset(seed=0)
    before, legal = position(env), masks(env).copy()
    n = env.action_space.n
    kinds = [value] + ([np.uint64(min(value, 2**64 - 1))] if value >= 0 else [np.int64(-1)])
    for bad in kinds + [n, -1]:
        with pytest.raises(ActionSpaceError, match=rf"action {int(bad)} is out of range") as err:
            env.step(bad)
        assert f"Discrete({n})" in str(err.value)
        assert str(err.value).split(":")[0].strip()  # it names the env
    assert position(env) == before and np.array_equal(masks(env), legal)
    _, _, terminated, _, info = env.step(int(np.flatnonzero(legal)[0]))
    assert not info.get("illegal_action", False)  # the episode went on


@pytest.mark.parametrize("kind", sorted(SINGLE))
def test_action_masks_before_reset_is_a_clear_error(kind):
    env = SINGLE[kind]()
    with pytest.raises(EpisodeOverError, match="reset"):
        masks(env)


# --- PettingZoo AEC envs -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(AEC))
@settings(max_examples=10, deadline=None)
@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_aec_envs_refuse_floats_in_both_modes(kind, mode, value):
    env = AEC[kind](illegal_action=mode)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    action = int(np.flatnonzero(obs["action_mask"])[0])
    for bad in float_kinds(value) + float_kinds(float(action)) + NOT_INTEGERS[:3]:
        with pytest.raises(ActionTypeError, match="not an integer"):
            env.step(bad)
    assert not any(env.terminations.values())
    env.step(np.int64(action))
    for bad in NOT_INTEGERS[3:]:  # None: must act; lists, arrays, complex: not integers
        with pytest.raises(IllegalActionError):
            env.step(bad)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(AEC))
@settings(max_examples=6, deadline=None)
@given(value=OUTSIDE)
def test_aec_envs_refuse_actions_outside_the_space_in_both_modes(kind, mode, value):
    env = AEC[kind](illegal_action=mode)
    env.reset(seed=1)
    agent = env.agent_selection
    n = env.action_space(agent).n
    before = env.unwrapped.game_state.to_json()
    for bad in (value, -1, n, np.uint64(2**64 - 1)):
        with pytest.raises(ActionSpaceError, match=rf"_v0 {agent}: action {int(bad)} is out of"):
            env.step(bad)
    assert env.unwrapped.game_state.to_json() == before and env.agent_selection == agent
    assert not any(env.terminations.values()) and not any(env.rewards.values())
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert not any(env.terminations.values())


@pytest.mark.parametrize("kind", sorted(AEC))
def test_aec_action_masks_before_reset_is_a_clear_error(kind):
    env = AEC[kind]()
    with pytest.raises(EpisodeOverError, match="reset"):
        env.unwrapped.action_masks()


# --- batched envs --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(BATCHED))
@settings(max_examples=10, deadline=None)
@given(huge=st.integers(2**63, 2**64 - 1), row=st.integers(0, 2))
def test_batched_envs_refuse_actions_outside_the_space_naming_the_row(kind, mode, huge, row):
    envs = BATCHED[kind](illegal_action=mode)
    obs, _ = envs.reset(seed=0)
    legal = np.array([np.flatnonzero(m)[0] for m in envs.action_masks()])
    name = type(envs).__name__
    n = envs.single_action_space.n
    for bad, dtype in ((huge, np.uint64), (-1, np.int64), (n, np.int64)):
        actions = legal.astype(dtype)
        actions[row] = bad
        with pytest.raises(
            ActionSpaceError, match=rf"{name} env {row}: action {bad} is out of range"
        ):
            envs.step(actions)
    # the refused steps changed nothing: the batch steps on as a twin that never saw them
    twin = BATCHED[kind](illegal_action=mode)
    twin.reset(seed=0)
    after, rewards, terminated, _, info = envs.step(legal)
    assert np.array_equal(after, twin.step(legal)[0])
    assert not terminated.any() and not info.get("illegal_action", np.zeros(3)).any()


@pytest.mark.parametrize("mode", MODES)
def test_per_env_batches_refuse_actions_outside_the_space_before_any_env_steps(mode):
    from castle_envs.castle_siege.env import CastleSiegeEnv

    envs = PerEnvVectorEnv(CastleSiegeEnv, 3, difficulty="easy", illegal_action=mode)
    envs.reset(seed=0)
    before = [e.unwrapped.game_state.to_json() for e in envs.envs]
    actions = np.array([np.flatnonzero(m)[0] for m in envs.action_masks()])
    actions[2] = -1
    with pytest.raises(ActionSpaceError, match=r"PerEnvVectorEnv env 2: action -1 is out of range"):
        envs.step(actions)
    assert [e.unwrapped.game_state.to_json() for e in envs.envs] == before


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(BATCHED))
def test_batched_envs_refuse_float_actions(kind, mode):
    envs = BATCHED[kind](illegal_action=mode)
    envs.reset(seed=0)
    legal = np.array([np.flatnonzero(m)[0] for m in envs.action_masks()])
    for bad in (legal + 0.5, legal.astype(np.float32), legal.astype(bool), legal[:2]):
        with pytest.raises(ActionTypeError):
            envs.step(bad)
    envs.step(legal.astype(np.uint8))
