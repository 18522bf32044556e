"""The batched Castellion env is the reference rules' env: same seeds and actions, same
trajectories.

Thousands of random games at every level and rules option, both reward modes, truncation
and illegal-action penalties; each step compares observations, masks, rewards,
terminations, truncations, final observations and wins with ``CastellionEnv`` playing the
plain-Python reference rules (``tests/reference/castellion.py``; whole ``to_dict()``
positions in one sweep per level), so a slip in the compiled kernel (the package's rules) or
in the reference shows. Uniform random play at the Academy and
the Menace mostly ends early (an early encounter is offered every turn and usually loses),
so the policy here can skip early encounters, favour tile powers and favour placing tiles,
which reaches every phase: powers, penalties, tower reveals, complete castles.
"""

from __future__ import annotations

import numpy as np
import pytest

from castle_envs.castellion.actions import DISCARD_POWER, ENCOUNTER_NOW, PLACE, PLACE_LEFT
from castle_envs.castellion.rules import NUM_PHASES
from castle_envs.castellion.vector import CastellionVectorEnv

from ..reference.castellion import ReferenceCastellionEnv as CastellionEnv
from .helpers import games


def policy(masks, rng, avoid_early=0.0, power=0.0, build=0.0):
    """A random legal action per row: uniform, except that an early encounter is dropped
    with probability ``avoid_early``, a power is chosen outright with probability ``power``
    and the choice is restricted to placements with probability ``build``."""
    actions = np.empty(len(masks), np.int64)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        if len(legal) > 1 and rng.random() < avoid_early:
            legal = legal[legal != ENCOUNTER_NOW]
        if m[DISCARD_POWER] and rng.random() < power:
            legal = np.array([DISCARD_POWER])
        places = legal[(legal >= PLACE) & (legal <= PLACE_LEFT)]
        if len(places) and rng.random() < build:
            legal = places
        actions[i] = rng.choice(legal)
    return actions


def lockstep(
    n_envs: int,
    n_games: int,
    seed: int,
    avoid_early=0.0,
    power=0.0,
    build=0.0,
    illegal_every: int = 0,
    compare_states: bool = False,
    options=None,
    **kwargs,
) -> dict:
    """Play ``n_games`` games on ``n_envs`` batched envs and on ``n_envs`` single envs seeded
    ``seed + i``, the same actions on both; assert identical results at every step. Returns
    counts (games, steps, outcomes, phases seen) for the caller's own checks. ``options``:
    reset options for the first games (every env and every single env gets them)."""
    envs = CastellionVectorEnv(n_envs, **kwargs)
    singles = [CastellionEnv(**kwargs) for _ in range(n_envs)]
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed, options=options)
    for i, env in enumerate(singles):
        o, inf = env.reset(seed=seed + i, options=options)
        assert np.array_equal(o, obs[i]) and np.array_equal(
            inf["action_mask"], info["action_mask"][i]
        )
    stats = {
        "games": 0,
        "steps": 0,
        "won": 0,
        "lost": 0,
        "truncated": 0,
        "illegal": 0,
        "reward": 0.0,
        "full_castles": 0,
        "phases": np.zeros(NUM_PHASES, np.int64),
    }
    while stats["games"] < n_games:
        actions = policy(envs.action_masks(), rng, avoid_early, power, build)
        if illegal_every:
            wild = rng.integers(illegal_every, size=n_envs) == 0
            actions[wild] = rng.integers(0, 137, size=int(wild.sum()))  # in the space
        obs, rewards, terminated, truncated, info = envs.step(actions)
        stats["steps"] += n_envs
        for i, env in enumerate(singles):
            o, r, term, trunc, inf = env.step(actions[i])
            assert (r, term, trunc) == (rewards[i], terminated[i], truncated[i]), (i, stats)
            if illegal_every:
                assert inf.get("illegal_action", False) == info["illegal_action"][i]
                stats["illegal"] += int(info["illegal_action"][i])
            if term or trunc:
                assert info["_final_obs"][i]
                assert np.array_equal(o, info["final_obs"][i]), (i, stats)
                assert inf["won"] == info["won"][i]
                stats["games"] += 1
                stats["won"] += int(env.state.outcome == 1)
                stats["lost"] += int(env.state.outcome == -1)
                stats["truncated"] += int(trunc)
                stats["full_castles"] += int(env.state.castle_size == 36)
                o, inf = env.reset()
            elif "_final_obs" in info:
                assert not info["_final_obs"][i]
            stats["reward"] += r
            stats["phases"][env.state.phase] += 1
            assert np.array_equal(o, obs[i]), (i, stats["steps"])
            assert np.array_equal(inf["action_mask"], info["action_mask"][i]), (i, stats["steps"])
            if compare_states:
                assert envs.state(i).to_dict() == env.state.to_dict()
    return stats


def test_school_thousands_of_games():
    stats = lockstep(n_envs=32, n_games=games(1000), seed=0)
    assert stats["games"] >= games(1000) and stats["lost"] > 0


def test_school_placing_fills_castles():
    # favouring placements fills the castle: the complete-castle encounters are compared
    stats = lockstep(n_envs=16, n_games=games(500), seed=1, build=0.9)
    assert stats["full_castles"] > 0 or games(500) < 500


@pytest.mark.parametrize("level", ["academy", "menace"])
def test_uniform_random_play(level):
    stats = lockstep(n_envs=32, n_games=games(1500), seed=2, level=level)
    assert stats["games"] >= games(1500)


@pytest.mark.parametrize("level", ["academy", "menace"])
def test_powers_and_penalties(level):
    # no early encounters, powers favoured: every phase of the level is reached
    stats = lockstep(
        n_envs=16, n_games=games(400), seed=3, avoid_early=0.99, power=0.5, level=level
    )
    from castle_envs.castellion.rules import OVER, REVEAL_ORDEAL_PHASE

    reached = stats["phases"][:OVER] > 0
    if level == "academy":
        reached[REVEAL_ORDEAL_PHASE] = True  # a Menace phase
    assert reached.all() or games(400) < 400, stats["phases"]


@pytest.mark.parametrize("level", ["academy", "menace"])
def test_building_with_powers(level):
    stats = lockstep(
        n_envs=16, n_games=games(300), seed=4, avoid_early=0.99, power=0.3, build=0.8, level=level
    )
    assert stats["games"] >= games(300)


@pytest.mark.parametrize("level", ["school", "academy", "menace"])
def test_foundation_exemption_neighbors(level):
    stats = lockstep(
        n_envs=16,
        n_games=games(300),
        seed=5,
        avoid_early=0.95,
        power=0.3,
        build=0.5,
        level=level,
        foundation_exemption="neighbors",
    )
    assert stats["games"] >= games(300)


@pytest.mark.parametrize("level", ["academy", "menace"])
def test_early_encounter_turn_start(level):
    stats = lockstep(
        n_envs=16,
        n_games=games(300),
        seed=10,
        avoid_early=0.9,
        power=0.3,
        build=0.5,
        level=level,
        early_encounter="turn_start",
    )
    assert stats["games"] >= games(300)


@pytest.mark.parametrize(
    "level, start",
    [("school", "exam I passes"), ("academy", "simulation III wins"), ("menace", "harpy met")],
)
def test_ordeals_reward_from_a_position_about_to_pass(level, start):
    # the first game of every env starts from ``start`` (reset option ``state``), where placing
    # the Traitor in hand passes an ordeal that random play seldom passes; later games are dealt
    from .test_castellion_positions import POSITIONS

    options = {"state": POSITIONS[start].to_dict()}
    stats = lockstep(
        n_envs=16,
        n_games=games(300),
        seed=6,
        avoid_early=0.9,
        power=0.3,
        build=0.5,
        level=level,
        reward="ordeals",
        options=options,
    )
    assert stats["reward"] > 0  # ordeals passed were paid and matched


def test_truncation():
    stats = lockstep(n_envs=8, n_games=games(200), seed=7, max_episode_steps=9)
    assert stats["truncated"] > 0


@pytest.mark.parametrize("level", ["school", "menace"])
def test_illegal_action_penalty(level):
    stats = lockstep(
        n_envs=8,
        n_games=games(300),
        seed=8,
        illegal_every=5,
        level=level,
        illegal_action="penalty",
        illegal_action_penalty=-0.5,
        avoid_early=0.9,
    )
    assert stats["illegal"] > 0


@pytest.mark.parametrize("level", ["school", "academy", "menace"])
def test_whole_states_match(level):
    lockstep(
        n_envs=8,
        n_games=games(100),
        seed=9,
        avoid_early=0.98,
        power=0.4,
        build=0.3,
        level=level,
        compare_states=True,
    )
