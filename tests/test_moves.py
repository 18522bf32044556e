"""The move-feature view (castle_envs.moves): spaces, the three envs agreeing, the layout."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from gymnasium.utils.env_checker import check_env

from castle_envs.castle_siege import moves as M
from castle_envs.castle_siege.actions import END_BATTLE, RECYCLE_BASE
from castle_envs.castle_siege.rules import State
from castle_envs.moves import (
    SIEGE_FEATURES,
    MoveFeatureObservation,
    SiegeMoves,
    feature_names,
    linear_scale,
    make_move_env,
    make_move_vec,
)

LINEAR_FILE = (
    Path(__file__).resolve().parents[1] / "models" / "castle_siege_very_hard_linear" / "policy.json"
)


@pytest.mark.parametrize("compiled", [False, True])
def test_check_env(compiled):
    env = make_move_env(
        "castle-siege", compiled=compiled, difficulty="hard", illegal_action="penalty"
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped.*")
        check_env(env, skip_render_check=True)


def test_layout_names_match_the_kernel():
    assert len(SIEGE_FEATURES) == M.NUM_FEATURES == M.LINEAR + M.N_LINEAR
    assert SIEGE_FEATURES[M.LINEAR] == "linear.battle.capture"
    assert SIEGE_FEATURES[M.TRIGGER] == "precision_strike"
    assert SIEGE_FEATURES[M.TARGET] == "target_rank/13"
    assert len(LinearPolicy.names()) == M.N_LINEAR


def test_python_compiled_and_batched_views_agree():
    n = 4
    envs = make_move_vec("castle-siege", n, difficulty="very_hard")
    singles = [
        make_move_env("castle-siege", compiled=bool(i % 2), difficulty="very_hard")
        for i in range(n)
    ]
    batch, info = envs.reset(seed=20_000_000)
    assert envs.observation_space.contains(batch)
    obs = [e.reset(seed=20_000_000 + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(120):
        actions = np.zeros(n, np.int64)
        for i, e in enumerate(singles):
            for key in ("observation", "move_features", "move_ids", "move_mask"):
                assert np.array_equal(obs[i][key], batch[key][i]), key
            assert e.observation_space.contains(obs[i])
            rows = np.flatnonzero(obs[i]["move_mask"])
            actions[i] = obs[i]["move_ids"][rng.choice(rows)]
        batch, _, _, _, info = envs.step(actions)
        for i, e in enumerate(singles):
            o, _, term, trunc, _ = e.step(actions[i])
            obs[i] = e.reset()[0] if term or trunc else o  # the batch autoresets alike


def test_rows_are_the_legal_moves_and_reproduce_the_linear_scorer():
    policy = LinearPolicy.load(LINEAR_FILE)
    weights = policy.vector() * linear_scale()
    view = SiegeMoves(capacity=2000)  # room for every legal move
    positions = 0
    for seed in (20_000_001, 20_000_002, 20_000_003):
        state = State.new_game(np.random.default_rng(seed), "very_hard")
        while not state.is_terminal():
            out, n = view.from_state(state)
            mask = state.legal_action_mask()
            rows = out["move_mask"].astype(bool)
            assert n == rows.sum() == mask.sum()
            assert sorted(out["move_ids"][rows].tolist()) == np.flatnonzero(mask).tolist()
            assert out["move_features"].min() >= 0 and out["move_features"].max() <= 1
            # one linear layer over the last 30 columns is the CEM scorer
            scores = out["move_features"][rows, M.LINEAR :].astype(np.float64) @ weights
            action = policy(state)
            assert out["move_ids"][rows][int(np.argmax(scores))] == action
            state.apply_action(action)
            positions += 1
    assert positions > 50


def test_capacity_keeps_the_important_moves_and_counts_the_rest():
    state = State.new_game(np.random.default_rng(20_000_005), "very_hard")
    full, n = SiegeMoves(2000).from_state(state)
    assert n > 16
    small, n_small = SiegeMoves(16).from_state(state)
    assert n_small == n  # the full count, though 16 rows are shown
    kept = small["move_ids"][small["move_mask"] == 1].tolist()
    assert len(kept) == 16 and END_BATTLE in kept
    feats = full["move_features"][full["move_mask"] == 1]
    ids = full["move_ids"][full["move_mask"] == 1]
    # captures, Royal Assaults, Precision Strikes, Flush Sieges go first, in candidate order
    special = ids[
        (
            feats[:, M.KIND + 3]
            + feats[:, M.KIND + 4]
            + feats[:, M.LINEAR + 11]
            + feats[:, M.LINEAR + 12]
        )
        > 0
    ]
    assert set(special.tolist()[:15]) <= set(kept)
    # rows stay in candidate order (plays by id, end of battle last)
    assert kept == sorted(kept)


def test_precision_strike_rows_are_the_discard_pile():
    policy = LinearPolicy.load(LINEAR_FILE)
    view = SiegeMoves()
    for seed in range(20_000_010, 20_000_040):
        state = State.new_game(np.random.default_rng(seed), "hard")
        while not state.is_terminal():
            if state.phase == 1:
                out, n = view.from_state(state)
                rows = out["move_mask"] == 1
                assert (out["move_ids"][rows] - RECYCLE_BASE).tolist() == np.flatnonzero(
                    state.discard
                ).tolist()
                assert (out["move_features"][rows, M.KIND + 5] == 1).all()
                return
            state.apply_action(policy(state))
    pytest.fail("no Precision Strike in 30 games")


def test_every_game_names_each_feature_column_once():
    from castle_envs.core.moves import feature_columns

    for game in ("castle-siege", "castellion", "castle-rooms", "castell"):
        names = feature_names(game)
        assert len(set(names)) == len(names), game
    assert feature_columns(("a", "b")) == {"a": 0, "b": 1}
    with pytest.raises(ValueError, match=r"more than once: \['deck'\]"):
        feature_columns(("deck", "hand", "deck"))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="capacity"):
        SiegeMoves(0)
    with pytest.raises(ValueError, match="unknown game"):
        feature_names("castles")
    from castle_envs.registry import get_game

    with pytest.raises(ValueError, match="needs a Castle Siege or Castellion env"):
        MoveFeatureObservation(get_game("castell").make())
