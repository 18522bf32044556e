"""Actions of every type, on every env kind.

An action is one integer: Python and NumPy integers and 0-d integer arrays or tensors play
the move with that id; floats of every kind (integral ones too, as Gymnasium's
``Discrete.contains`` says), bools, strings and arrays are refused with ``ActionTypeError``
(an ``IllegalActionError`` and a ``TypeError``) in both ``illegal_action`` modes, and leave
the env as it was. Integers out of range raise ``IllegalActionError`` (or end the episode
with the penalty), however large.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import castle_envs
from castle_envs.core.errors import ActionTypeError, EpisodeOverError, IllegalActionError
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


@pytest.mark.parametrize("kind", sorted(SINGLE))
@settings(max_examples=10, deadline=None)
@given(value=st.one_of(st.integers(max_value=-1), st.integers(min_value=1700)))
def test_out_of_range_integers_are_illegal_whatever_their_size(kind, value):
    raising = SINGLE[kind](illegal_action="raise")
    raising.reset(seed=0)
    with pytest.raises(IllegalActionError, match=f"action {value} is out of range"):
        raising.step(value)
    if value >= 0:
        with pytest.raises(IllegalActionError, match="out of range"):
            raising.step(np.uint64(min(value, 2**64 - 1)))
    penalised = SINGLE[kind](illegal_action="penalty", illegal_action_penalty=-3.0)
    penalised.reset(seed=0)
    _, reward, terminated, _, info = penalised.step(value)
    if kind != "castell seat":  # the wrapped AEC env ends the game for every seat
        assert info["illegal_action"]
    assert terminated and reward == -3.0


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


@pytest.mark.parametrize("kind", sorted(AEC))
def test_aec_action_masks_before_reset_is_a_clear_error(kind):
    env = AEC[kind]()
    with pytest.raises(EpisodeOverError, match="reset"):
        env.unwrapped.action_masks()


# --- batched envs --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(BATCHED))
@settings(max_examples=10, deadline=None)
@given(huge=st.integers(2**63, 2**64 - 1), row=st.integers(0, 2))
def test_batched_envs_report_huge_unsigned_actions_as_given(kind, huge, row):
    envs = BATCHED[kind](illegal_action="raise")
    envs.reset(seed=0)
    actions = np.array([np.flatnonzero(m)[0] for m in envs.action_masks()], dtype=np.uint64)
    actions[row] = huge
    with pytest.raises(IllegalActionError, match=f"env {row}: action {huge} is out of range"):
        envs.step(actions)
    penalised = BATCHED[kind](illegal_action="penalty", illegal_action_penalty=-2.0)
    penalised.reset(seed=0)
    _, rewards, terminated, _, info = penalised.step(actions)
    assert info["illegal_action"].tolist() == [i == row for i in range(3)]
    assert rewards[row] == -2.0 and terminated[row]


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
