"""The solitaires' infos hold numbers, bools and NumPy arrays only, with the same keys,
types and shapes at every step (replay buffers and vector envs stack them), in
the Python envs, the compiled single envs and the batched envs; and what reads them
(``castle-envs evaluate``'s event columns) reads the same counters as before."""

from __future__ import annotations

import re

import numpy as np
import pytest
from castle_envs.experiments.episodes import _numeric_info, play_episode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from castle_envs.castellion import env as castellion_env
from castle_envs.castellion.env import CastellionEnv
from castle_envs.castellion.rules import PHASE_NAMES
from castle_envs.castellion.vector import CastellionVectorEnv, CompiledCastellionEnv
from castle_envs.castle_siege import env as siege_env
from castle_envs.castle_siege.compiled import CompiledCastleSiegeEnv
from castle_envs.castle_siege.env import INFO_EVENT_KEYS, CastleSiegeEnv
from castle_envs.castle_siege.rules import EVENTS
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv

SINGLES = {
    "siege-python": (CastleSiegeEnv, "difficulty", ("easy", "medium", "hard", "very_hard")),
    "siege-compiled": (CompiledCastleSiegeEnv, "difficulty", ("easy", "very_hard")),
    "castellion-python": (CastellionEnv, "level", ("school", "academy", "menace")),
    "castellion-compiled": (CompiledCastellionEnv, "level", ("school", "academy", "menace")),
}
BATCHED = {
    "siege": (CastleSiegeVectorEnv, {"difficulty": "hard"}),
    "castellion": (CastellionVectorEnv, {"level": "menace"}),
}


def signature(info: dict) -> dict:
    """Each key's kind: ("number", type) for scalars, ("array", dtype, shape) for arrays;
    fails on anything else (a dict, a str, a tuple, None...)."""
    out = {}
    for key, value in info.items():
        if isinstance(value, np.ndarray):
            out[key] = ("array", value.dtype, value.shape)
        elif isinstance(value, (bool, np.bool_)):
            out[key] = ("bool",)
        elif isinstance(value, (int, float, np.integer, np.floating)):
            out[key] = ("number", type(value))
        else:
            raise AssertionError(f"info[{key!r}] is a {type(value).__name__}: {value!r}")
    return out


def play(env, seed: int, illegal_every: int, rng) -> int:
    """Random games; every info's signature must be the first one's. Returns the steps."""
    obs, info = env.reset(seed=seed)
    first = signature(info)
    steps = 0
    for _ in range(3):
        done = False
        while not done:
            mask = info["action_mask"]
            if illegal_every and steps % illegal_every == illegal_every - 1:
                action = int(np.flatnonzero(~mask)[0])
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            obs, _, terminated, truncated, info = env.step(action)
            assert signature(info) == first, steps
            steps += 1
            done = terminated or truncated
        obs, info = env.reset()
        assert signature(info) == first
    return steps


@pytest.mark.parametrize("name", sorted(SINGLES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_single_env_infos_are_numbers_and_arrays_at_every_step(name, data):
    cls, variant_key, variants = SINGLES[name]
    variant = data.draw(st.sampled_from(variants), label=variant_key)
    mode = data.draw(st.sampled_from(["penalty", "raise"]), label="illegal_action")
    illegal_every = (
        data.draw(st.sampled_from([0, 37]), label="illegal_every") if mode == "penalty" else 0
    )
    seed = data.draw(st.integers(0, 2**31 - 1), label="seed")
    env = cls(**{variant_key: variant}, illegal_action=mode, max_episode_steps=300)
    assert play(env, seed, illegal_every, np.random.default_rng(seed)) > 0


def test_the_info_keys_are_the_documented_ones():
    siege = CastleSiegeEnv("easy", illegal_action="penalty")
    _, info = siege.reset(seed=0)
    assert set(info) == {"action_mask", "won", "illegal_action", *INFO_EVENT_KEYS}
    assert tuple(f"events_{e}" for e in EVENTS) == INFO_EVENT_KEYS
    assert all(f"``{key}``" in siege_env.__doc__ for key in INFO_EVENT_KEYS)
    castellion = CastellionEnv("school", illegal_action="raise")
    _, info = castellion.reset(seed=0)
    assert set(info) == {"action_mask", "phase", "ordeals_passed", "formations", "won"}
    assert info["formations"].dtype == np.int64 and info["formations"].shape == (3,)
    # the docstring's phase table is PHASE_NAMES
    table = re.search(r"PHASE_NAMES``: (.*?);", castellion_env.__doc__, re.S).group(1)
    assert re.findall(r"(\d+) (\w+)", table) == [(str(i), n) for i, n in enumerate(PHASE_NAMES)]


def test_phase_and_formations_follow_the_state():
    env = CastellionEnv("academy")
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(200):
        assert PHASE_NAMES[info["phase"]] == PHASE_NAMES[env.state.phase]
        assert info["formations"].tolist() == list(env.state.formations())
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            break


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_batched_env_infos_are_arrays_of_the_batch(name):
    cls, variant = BATCHED[name]
    for mode in ("penalty", "raise"):
        envs = cls(5, illegal_action=mode, max_episode_steps=60, **variant)
        _, info = envs.reset(seed=1)
        always = set(info) | ({"illegal_action", "_illegal_action"} if mode == "penalty" else set())
        for _step in range(150):
            _, _, _, _, info = envs.step(envs.sample_actions())
            assert set(info) >= always
            for key, value in info.items():
                assert isinstance(value, np.ndarray) and value.shape[0] == 5, key


def test_evaluate_reads_the_same_counters():
    env = CastleSiegeEnv("easy", illegal_action="penalty")
    _, info = env.reset(seed=0)
    assert _numeric_info(info) == {name: 0.0 for name in EVENTS} | {"turns": 1.0}
    r = play_episode("castellion", (("level", "school"),), (), ("random",), 0, 0)
    assert set(r["events"]) == {"ordeals_passed"}  # not the phase code, not formations
    r = play_episode("castle-siege", (("difficulty", "easy"),), (), ("random",), 0, 0)
    assert set(r["events"]) == set(EVENTS) and r["events"]["turns"] >= 1


# --- the same keys in every mode -----------------------------------------------------------
MODES_OF = {
    "castle_envs/CastleSiege-v0": (CastleSiegeEnv, CompiledCastleSiegeEnv, {"difficulty": "easy"}),
    "castle_envs/Castellion-v0": (CastellionEnv, CompiledCastellionEnv, {"level": "school"}),
}
#: what only a same-step autoreset batch has: the finished games' last observations
AUTORESET_KEYS = {"final_obs", "final_info"}


def keys(info: dict) -> set:
    """An info's entries, without the vector envs' ``_`` masks and autoreset extras."""
    return {k for k in info if not k.startswith("_")} - AUTORESET_KEYS


@pytest.mark.parametrize("illegal_action", ["penalty", "raise"])
@pytest.mark.parametrize("env_id", sorted(MODES_OF))
def test_every_mode_gives_the_info_keys_of_the_single_env(env_id, illegal_action):
    import gymnasium

    python, compiled, variant = MODES_OF[env_id]
    kwargs = {**variant, "illegal_action": illegal_action, "max_episode_steps": 40}
    single = python(**kwargs)
    _, info = single.reset(seed=0)
    expected = keys(info)
    assert keys(single.step(int(np.flatnonzero(info["action_mask"])[0]))[-1]) == expected
    assert keys(compiled(**kwargs).reset(seed=0)[1]) == expected
    for mode in ("sync", "vector_entry_point"):
        envs = gymnasium.make_vec(env_id, 3, vectorization_mode=mode, **kwargs)
        obs, info = envs.reset(seed=0)
        assert keys(info) == expected, mode
        ended = 0
        while ended < 3:  # truncated at 40 steps at the latest
            masks = info["action_mask"]
            actions = np.array([np.flatnonzero(m)[-1] if m.any() else 0 for m in masks])
            _, _, terminated, truncated, info = envs.step(actions)
            assert keys(info) == expected, mode
            ended += int((terminated | truncated).sum())


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_batched_info_entries_are_the_single_envs_and_a_finished_games_own(name):
    """Lockstep with single envs: every entry of every row equals the single env's, and where
    a game ended, the entries are its last step's (the next game's start is not shown)."""
    cls, variant = BATCHED[name]
    single_cls = {"siege": CastleSiegeEnv, "castellion": CastellionEnv}[name]
    kwargs = {**variant, "illegal_action": "penalty", "max_episode_steps": 50}
    envs = cls(4, **kwargs)
    singles = [single_cls(**kwargs) for _ in range(4)]
    _, info = envs.reset(seed=7)
    single_infos = [e.reset(seed=7 + i)[1] for i, e in enumerate(singles)]
    rng = np.random.default_rng(7)
    ended = 0
    for step in range(400):
        for i, single_info in enumerate(single_infos):
            for key, value in single_info.items():
                assert np.array_equal(info[key][i], value), (key, i, step)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        if step % 13 == 12:  # now and then an illegal move: the penalty ends that game
            actions[0] = np.flatnonzero(~info["action_mask"][0])[0]
        _, _, terminated, truncated, info = envs.step(actions)
        for i, single in enumerate(singles):
            _, _, term, trunc, single_infos[i] = single.step(int(actions[i]))
            if term or trunc:
                ended += 1
                assert info["_final_obs"][i]
                for key, value in single_infos[i].items():
                    if key != "action_mask":  # the new game's, as the observation
                        assert np.array_equal(info[key][i], value), (key, i, step)
                _, single_infos[i] = single.reset()
                assert np.array_equal(info["action_mask"][i], single_infos[i]["action_mask"])
                for key, value in single_infos[i].items():  # compared above: the next game's
                    info[key][i] = value
    assert ended >= 8
