"""Potential-based shaping for training envs: it telescopes, and evaluation never sees it."""

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from castle_envs.agents.baselines.castellion import castle_score, heuristic_policy  # noqa: E402
from castle_envs.experiments.config import resolve  # noqa: E402
from castle_envs.experiments.train import make_env  # noqa: E402

CONFIG = {
    "game": "castellion",
    "variant": {"level": "academy"},
    "env_kwargs": {"reward": "ordeals"},
    "shaping": "heuristic_potential",
    "ppo": {"gamma": 1.0},
}


def test_shaped_rewards_telescope_to_the_raw_return_minus_the_first_potential():
    config = resolve(CONFIG)
    shaped, raw = make_env(config, 0, shaped=True), make_env(config, 0)
    rng = np.random.default_rng(0)
    for seed in range(4):
        shaped.reset(seed=seed)
        raw.reset(seed=seed)
        start = castle_score(shaped.unwrapped.state) / 400.0
        total = raw_total = 0.0
        moves, done = 0, False
        while not done:
            action = heuristic_policy(shaped.unwrapped.state, rng)
            _, r, term, trunc, _ = shaped.step(action)
            _, r_raw, *_ = raw.step(action)
            total, raw_total, moves = total + r, raw_total + r_raw, moves + 1
            done = term or trunc
        assert moves > 5
        assert total == pytest.approx(raw_total - start)


def test_unshaped_env_is_the_plain_env():
    config = resolve(CONFIG)
    env = make_env(config, 0)
    assert "PotentialShaping" not in repr(env)
    assert "PotentialShaping" in repr(make_env(config, 0, shaped=True))


def test_shaping_is_rejected_for_games_without_a_potential():
    with pytest.raises(ValueError, match="shaping: heuristic_potential is defined for castellion"):
        resolve({"game": "castle-siege", "shaping": "heuristic_potential"})
    with pytest.raises(ValueError, match="shaping: 'magic' is not one of"):
        resolve({"shaping": "magic"})
