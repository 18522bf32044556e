"""How the envs meet the ecosystem: clear errors for every constructor argument,
the AEC envs before ``reset``, Python-worded unknown keywords (TorchRL), infos of numbers
and arrays, the checkers on the defaults, ``observation="flat"``, ``winners()`` and the
numba compile notice."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_seed_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import castle_envs
from castle_envs import castell_v0, castle_rooms_v0
from castle_envs.castle_rooms.env import END_REASONS
from castle_envs.core.errors import (
    EpisodeOverError,
    InvalidOptionError,
    OptionTypeError,
    UnknownOptionError,
)
from castle_envs.registry import make_single

SIEGE, CASTELLION = "castle_envs/CastleSiege-v0", "castle_envs/Castellion-v0"

#: every way to build an env, by name: a function of keyword arguments
MAKERS = {
    "siege gym.make": lambda **kw: gymnasium.make(SIEGE, **kw),
    "castellion gym.make": lambda **kw: gymnasium.make(CASTELLION, **kw),
    "siege class": lambda **kw: castle_envs.get_game("castle-siege").make(**kw),
    "castellion class": lambda **kw: castle_envs.get_game("castellion").make(**kw),
    "siege make_single": lambda **kw: make_single("castle-siege", **kw),
    "castellion make_single": lambda **kw: make_single("castellion", **kw),
    "siege make_vec": lambda **kw: castle_envs.make_vec("castle-siege", 2, **kw),
    "castellion make_vec": lambda **kw: castle_envs.make_vec("castellion", 2, **kw),
    "rooms env": lambda **kw: castle_rooms_v0.env(**kw),
    "rooms raw_env": lambda **kw: castle_rooms_v0.raw_env(**kw),
    "castell env": lambda **kw: castell_v0.env(**kw),
    "castell raw_env": lambda **kw: castell_v0.raw_env(**kw),
}
SOLITAIRE = [k for k in MAKERS if k.startswith(("siege", "castellion"))]
AEC = [k for k in MAKERS if k.startswith(("rooms", "castell "))]

#: the arguments each env takes, with a value it accepts
COMMON = {
    "render_mode": "ansi",
    "illegal_action": "raise",
    "illegal_action_penalty": -2.0,
    "max_episode_steps": 50,
}
ARGUMENTS = {
    "siege": {
        **COMMON,
        "difficulty": "easy",
        "reward": "shaped",
        "attack": "most_recent",
        "defeated": "leave_game",
    },
    "castellion": {
        **COMMON,
        "level": "menace",
        "reward": "ordeals",
        "foundation_exemption": "neighbors",
        "early_encounter": "turn_start",
    },
    "rooms": {
        **COMMON,
        "num_players": 3,
        "later_rows": "free",
        "new_row": "forced",
        "observation": "flat",
    },
    "castell": {
        **COMMON,
        "num_players": 3,
        "advanced": True,
        "reward": "score_diff",
        "max_skill": 4,
        "tower_edits_per_turn": 5,
        "collect_own_token": True,
        "variety_counts": "board",
        "size_token_ties": "none",
        "festival_size_tokens": "one",
        "first_player": 1,
        "observation": "flat",
    },
}
#: values no argument accepts: the wrong kind, unhashable, arrays
BAD_VALUES = [["easy"], {"a": 1}, np.array([1, 2]), "x", 2.5, None, float("nan"), object()]


def game_of(maker: str) -> str:
    return maker.split()[0]


def build(maker: str, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MAKERS[maker](**kw)


# --- 1. clear errors for every argument ---------------------------------------------------
@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_every_argument_accepts_its_documented_values(maker):
    kw = dict(ARGUMENTS[game_of(maker)])
    if "make_vec" in maker:
        kw.pop("observation", None)
    build(maker, **kw)


@pytest.mark.parametrize("maker", sorted(MAKERS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_bad_argument_names_itself_its_value_and_what_is_accepted(maker, data):
    game = game_of(maker)
    name = data.draw(st.sampled_from(sorted(ARGUMENTS[game])), label="argument")
    bad = data.draw(st.sampled_from(BAD_VALUES), label="value")
    good = ARGUMENTS[game][name]
    if bad is None and name == "render_mode":
        return  # None is a render mode (no rendering)
    if name in ("max_episode_steps", "render_mode") and "gym.make" in maker:
        return  # gymnasium.make reads these itself first (TimeLimit, render checks)
    if isinstance(good, float) and isinstance(bad, float) and not np.isnan(bad):
        return  # any finite penalty is fine
    with pytest.raises((InvalidOptionError, UnknownOptionError)) as err:
        build(maker, **{name: bad})
    message = str(err.value)
    assert name in message, message
    shown = repr(bad) if not isinstance(bad, np.ndarray) else "array("
    assert shown[:20] in message, message
    assert any(w in message for w in ("choose one of", "must be", "got")), message
    # what is accepted: a choice argument lists its good value
    if isinstance(good, str) and name not in ("illegal_action_penalty",):
        assert repr(good) in message or name == "render_mode", message
    assert "unhashable" not in message and "invalid literal" not in message


@pytest.mark.parametrize(
    "maker",
    ["siege class", "castellion make_single", "rooms raw_env", "castell env", "siege make_vec"],
)
def test_the_issue_examples(maker):
    game = game_of(maker)
    variant = {
        "siege": "difficulty",
        "castellion": "level",
        "rooms": "num_players",
        "castell": "num_players",
    }[game]
    with pytest.raises(OptionTypeError, match=rf"{variant} .*\(a list\).*choose one of"):
        build(maker, **{variant: [ARGUMENTS[game][variant]]})
    with pytest.raises(OptionTypeError, match=r"max_episode_steps must be an int >= 1, got 'x'"):
        build(maker, max_episode_steps="x")
    with pytest.raises(
        OptionTypeError,
        match=r"illegal_action_penalty must be a finite number, "
        r"got 'x'",
    ):
        build(maker, illegal_action_penalty="x")
    with pytest.raises(InvalidOptionError, match=r"max_episode_steps must be an int >= 1, got 0"):
        build(maker, max_episode_steps=0)
    assert issubclass(OptionTypeError, TypeError) and issubclass(OptionTypeError, ValueError)


def test_batched_env_arguments_are_checked_too():
    for name, bad in [
        ("num_envs", "2"),
        ("num_envs", 0),
        ("copy", "yes"),
        ("parallel", 1),
        ("threads", 1.5),
    ]:
        kwargs = {"num_envs": 2, name: bad}
        with pytest.raises(InvalidOptionError, match=rf"{name} must be"):
            castle_envs.make_vec("castle-siege", **kwargs)


# --- 2. the AEC envs before reset ---------------------------------------------------------
@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
def test_aec_raw_envs_before_reset_say_to_call_reset(module):
    env = module.raw_env()
    for call in (
        env.action_masks,
        lambda: env.observe("player_0"),
        env.last,
        env.state,
        lambda: env.step(0),
        env.winners,
    ):
        with pytest.raises(EpisodeOverError, match=r"before reset\(\): call reset\(\) first"):
            call()
    env.reset(seed=0)
    assert env.observe("player_0")["observation"].shape == (
        env.observation_space("player_0")["observation"].shape
    )


# --- 3. unknown keywords read as Python's (TorchRL matches that text) ---------------------
TORCHRL_FRAMESKIP = "unexpected keyword argument 'frameskip'"
TORCHRL_RENDER = "__init__() got an unexpected keyword argument 'render_mode'"


@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_unknown_keywords_are_worded_as_python_words_them(maker):
    with pytest.raises(TypeError) as err:
        build(maker, frameskip=1)
    assert isinstance(err.value, UnknownOptionError) and isinstance(err.value, ValueError)
    assert TORCHRL_FRAMESKIP in str(err.value)
    assert "__init__() got an unexpected keyword argument 'frameskip'" in str(err.value)
    # the same wording for another keyword, and for several
    with pytest.raises(
        TypeError,
        match=r"\.__init__\(\) got an unexpected keyword argument "
        r"'aaa' \(and 'zzz'\)",
    ):
        build(maker, zzz=1, aaa=2)


def test_torchrl_retry_without_frameskip_works():
    """What TorchRL's ``GymEnv`` does: make with ``frameskip``, and on a ``TypeError``
    reading ``unexpected keyword argument 'frameskip'`` make again without it."""
    for env_id in (SIEGE, CASTELLION):
        try:
            env = gymnasium.make(env_id, frameskip=1)
        except TypeError as err:
            assert TORCHRL_FRAMESKIP in str(err)
            env = gymnasium.make(env_id)
        env.reset(seed=0)
    name = type(gymnasium.make(SIEGE).unwrapped).__name__
    with pytest.raises(
        TypeError,
        match=rf"^{name}\.__init__\(\) got an unexpected keyword "
        r"argument 'frameskip'",
    ):
        gymnasium.make(SIEGE, frameskip=1)


# --- 4. infos hold numbers and arrays only --------------------------------------------------
def numbers_and_arrays_only(info: dict) -> None:
    for key, value in info.items():
        ok = isinstance(value, (bool, int, float, np.number, np.bool_, np.ndarray))
        assert ok, f"info[{key!r}] is a {type(value).__name__}: {value!r}"


@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
@settings(max_examples=5, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    players=st.integers(2, 4),
    mode=st.sampled_from(["raise", "penalty"]),
)
def test_aec_infos_are_numbers_and_arrays_at_every_step(module, seed, players, mode):
    env = module.raw_env(num_players=players, illegal_action=mode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter(max_iter=4000):
        for info in env.infos.values():
            numbers_and_arrays_only(info)
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_castle_rooms_end_reason_code_and_castell_scores_by_seat():
    env = castle_rooms_v0.raw_env(num_players=2)
    env.reset(seed=4)
    assert env.infos["player_0"]["end_reason"] == 0
    codes = set()
    for seed in range(12):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.game_state.is_terminal():
            obs = env.observe(env.agent_selection)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        code = env.infos["player_1"]["end_reason"]
        assert END_REASONS[code] == env.game_state.end_reason and code in (1, 2)
        codes.add(code)
    castell = castell_v0.raw_env(num_players=3)
    castell.reset(seed=2)
    assert castell.infos["player_2"]["scores"].tolist() == [0, 0, 0]
    rng = np.random.default_rng(0)
    while not castell.game_state.is_terminal():
        obs = castell.observe(castell.agent_selection)
        castell.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    totals = castell.game_state.scores().tolist()
    for seat, agent in enumerate(castell.possible_agents):
        info = castell.infos[agent]
        assert info["scores"].tolist() == totals and info["scores"].dtype == np.int64
        assert info["category_scores"][-1] == totals[seat]
        assert info["category_scores"][:-1].sum() == totals[seat]


# --- 5. the ecosystem's checkers on the defaults -------------------------------------------
@pytest.mark.parametrize("env_id", [SIEGE, CASTELLION])
def test_gymnasium_check_env_passes_on_the_made_env_with_defaults(env_id):
    env = gymnasium.make(env_id)
    assert env.unwrapped.illegal_action == "penalty"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the env is wrapped": as users call it
        check_env(env)
    check_env(env.unwrapped)


@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
def test_pettingzoo_checkers_pass_on_the_defaults(module):
    assert module.raw_env().illegal_action == "penalty"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(module.env(), num_cycles=100)
        seed_test(module.env, num_cycles=200)
        # the turn-based parallel view samples unmasked actions: an illegal one ends the
        # game with the penalty instead of raising
        parallel_seed_test(lambda: turn_based_aec_to_parallel(module.env()), num_cycles=200)


def test_an_illegal_action_by_default_ends_the_episode_with_the_penalty():
    env = gymnasium.make(SIEGE, illegal_action_penalty=-3.0)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and reward == -3.0 and info["illegal_action"]
    aec = castle_rooms_v0.env()
    aec.reset(seed=0)
    obs, *_ = aec.last()
    aec.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(aec.terminations.values())


# --- 6. observation="flat" ---------------------------------------------------------------
FLAT = {
    "siege": lambda: gymnasium.make(SIEGE, observation="flat"),
    "castellion": lambda: gymnasium.make(CASTELLION, observation="flat", level="menace"),
    "siege compiled": lambda: make_single("castle-siege", observation="flat"),
    "castellion compiled": lambda: make_single("castellion", observation="flat"),
}
VECTOR = {
    "siege": lambda: gymnasium.make(SIEGE),
    "castellion": lambda: gymnasium.make(CASTELLION, level="menace"),
    "siege compiled": lambda: make_single("castle-siege"),
    "castellion compiled": lambda: make_single("castellion"),
}


@pytest.mark.parametrize("kind", sorted(FLAT))
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_flat_solitaire_observation_is_vector_then_mask_and_in_its_box(kind, seed):
    flat, vector = FLAT[kind](), VECTOR[kind]()
    assert isinstance(flat.observation_space, gymnasium.spaces.Box)
    f, fi = flat.reset(seed=seed)
    v, vi = vector.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(60):
        assert np.array_equal(f, np.concatenate([v, vi["action_mask"].astype(np.float32)]))
        assert f.dtype == np.float32 and flat.observation_space.contains(f)
        assert np.array_equal(fi["action_mask"], flat.unwrapped.action_masks())
        action = int(rng.choice(np.flatnonzero(vi["action_mask"])))
        f, _, term, trunc, fi = flat.step(action)
        v, _, _, _, vi = vector.step(action)
        if term or trunc:
            break


@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), players=st.integers(2, 4))
def test_flat_aec_observation_is_the_dict_parts_concatenated(module, seed, players):
    flat = module.env(num_players=players, observation="flat")
    parts = module.env(num_players=players)
    flat.reset(seed=seed)
    parts.reset(seed=seed)
    space = flat.observation_space("player_0")
    assert isinstance(space, gymnasium.spaces.Box)
    rng = np.random.default_rng(seed)
    for _steps, agent in enumerate(parts.agent_iter(max_iter=150)):
        for other in parts.possible_agents:
            d = parts.observe(other)
            f = flat.observe(other)
            assert np.array_equal(
                f, np.concatenate([d["observation"], d["action_mask"].astype(np.float32)])
            )
            assert space.contains(f)
        obs, _, term, trunc, info = parts.last()
        assert np.array_equal(flat.infos[agent]["action_mask"], obs["action_mask"])
        assert "action_mask" not in info  # the dict observation holds it
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        parts.step(action)
        flat.step(action)


def test_batched_envs_refuse_flat_naming_the_alternative():
    with pytest.raises(InvalidOptionError, match="vectorization_mode='sync'"):
        castle_envs.make_vec("castle-siege", 2, observation="flat")
    envs = gymnasium.make_vec(SIEGE, 2, vectorization_mode="sync", observation="flat")
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, envs.single_observation_space.shape[0])


# --- 7. winners() --------------------------------------------------------------------------
def play_solitaire(env, rng):
    _, info = env.reset(seed=int(rng.integers(2**31)))
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = term or trunc
    return info


@pytest.mark.parametrize(
    "make",
    [
        lambda: gymnasium.make(SIEGE, difficulty="easy"),
        lambda: gymnasium.make(CASTELLION),
        lambda: make_single("castle-siege", difficulty="easy"),
    ],
    ids=["siege", "castellion", "siege compiled"],
)
def test_solitaire_winners_is_zero_on_a_win_else_empty(make):
    env = make()
    with pytest.raises(EpisodeOverError):
        env.unwrapped.winners()
    env.reset(seed=0)
    assert env.unwrapped.winners() == []
    rng = np.random.default_rng(0)
    for _ in range(5):
        info = play_solitaire(env, rng)
        assert env.unwrapped.winners() == ([0] if info["won"] else [])
    won = env.unwrapped.game_state.clone()
    won.outcome = 1
    assert won.winning_seats() == [0]


@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), players=st.integers(2, 4))
def test_aec_winners_match_the_rewards(module, seed, players):
    env = module.env(num_players=players)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if not (term or trunc):
            assert env.unwrapped.winners() == []
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    winners = env.unwrapped.winners()
    state = env.unwrapped.game_state
    if module is castle_rooms_v0:
        assert winners == sorted(state.winners)
        assert winners == [i for i, a in enumerate(env.possible_agents) if totals[a] == 1.0]
    else:
        scores = state.scores()
        assert winners == [int(s) for s in np.flatnonzero(scores == scores.max())]
        best = [i for i, a in enumerate(env.possible_agents) if totals[a] >= 0.0]
        assert winners == best  # the sole winner (+1) or everyone tied on top (0)


# --- 8. the compile notice ----------------------------------------------------------------
COMPILE_SNIPPET = """
import castle_envs
envs = castle_envs.make_vec("castle-siege", 2)
envs.reset(seed=0)
envs.step(envs.sample_actions())
"""


@pytest.mark.slow
def test_numba_compile_notice_is_one_line_and_only_when_compiling(tmp_path):
    pytest.importorskip("numba")
    from castle_envs.core.jit import COMPILE_NOTICE

    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "CASTLE_ENVS_COMPILE_NOTICE": "1",
    }
    first = subprocess.run(
        [sys.executable, "-c", COMPILE_SNIPPET],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stderr.count(COMPILE_NOTICE) == 1, first.stderr[-2000:]
    again = subprocess.run(
        [sys.executable, "-c", COMPILE_SNIPPET],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert again.returncode == 0 and COMPILE_NOTICE not in again.stderr, again.stderr[-2000:]
    quiet = {**env, "NUMBA_CACHE_DIR": str(tmp_path / "other"), "CASTLE_ENVS_COMPILE_NOTICE": "0"}
    silent = subprocess.run(
        [sys.executable, "-c", COMPILE_SNIPPET],
        env=quiet,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert silent.returncode == 0 and COMPILE_NOTICE not in silent.stderr


def test_every_kernel_is_cached():
    pytest.importorskip("numba")
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    # where the compiled kernels live: the env library's compiled games and core, and the
    # lab's compiled solvers and searches
    packages = [
        "castle_envs.core",
        "castle_envs.castle_siege",
        "castle_envs.castellion",
        "castle_envs.agents.solvers",
        "castle_envs.agents.search",
    ]
    dispatchers = []
    for info in (
        (package, info)
        for package in packages
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__)
    ):
        module = importlib.import_module(f"{info[0]}.{info[1].name}")
        dispatchers += [
            v
            for v in vars(module).values()
            if isinstance(v, CPUDispatcher) and v.py_func.__module__ == module.__name__
        ]
    assert len(dispatchers) > 50
    uncached = [
        d.py_func.__qualname__ for d in dispatchers if type(d._cache).__name__ == "NullCache"
    ]
    assert uncached == []


@pytest.mark.parametrize("module", [castle_rooms_v0, castell_v0], ids=["rooms", "castell"])
def test_the_pettingzoo_checkers_hear_nothing_from_the_env(module):
    """``api_test`` and ``parallel_api_test`` probe ``reset`` with ``options={"options": 1}``:
    nothing there for a user to act on. A key that is really unknown still warns."""
    from pettingzoo.test import parallel_api_test

    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        api_test(module.env(), num_cycles=20)
        parallel_api_test(turn_based_aec_to_parallel(module.env()), num_cycles=20)
    assert not [str(w.message) for w in heard if "reset option" in str(w.message)]
    with pytest.warns(UserWarning, match=r"ignoring unknown reset options \['first_playr'\]"):
        module.env().reset(seed=0, options={"first_playr": 1})
