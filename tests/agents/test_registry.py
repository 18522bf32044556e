import pytest
from castle_envs.agents import (
    PolicyAgent,
    RandomAgent,
    available_agents,
    make_agent,
    split_agent_list,
)
from castle_envs.agents.registry import parse_spec
from castle_envs.agents.search.mcts import MCTSAgent


def test_names_build_the_right_agents():
    assert isinstance(make_agent("random", "castle-siege"), RandomAgent)
    h = make_agent("heuristic", "castle-siege")
    assert isinstance(h, PolicyAgent) and h.name == "heuristic"
    m = make_agent("mcts:sims=7,rollout=heuristic,c=0.5", "castle-siege")
    assert isinstance(m, MCTSAgent)
    assert (m.sims, m.c, m.rollout) == (7, 0.5, "heuristic")
    assert make_agent("MCTS", "castle-siege").sims == 200


def test_split_agent_list_keeps_options_with_their_agent():
    assert split_agent_list("random,mcts:sims=50,rollout=heuristic,heuristic") == [
        "random",
        "mcts:sims=50,rollout=heuristic",
        "heuristic",
    ]
    assert split_agent_list("ppo:models/a.zip,random") == ["ppo:models/a.zip", "random"]


@pytest.mark.parametrize(
    "spec, words",
    [
        ("alphazero", "unknown agent 'alphazero'"),
        ("", "empty agent name"),
        ("mcts:sims", "malformed mcts option 'sims'"),
        ("mcts:depth=3", "unknown mcts option 'depth'"),
        ("mcts:sims=lots", "needs a int"),
        ("mcts:sims=0", "at least 1"),
        ("mcts:rollout=smart", "rollout must be"),
        ("random:fast=1", "takes no options"),
        ("ppo:", "needs a model path"),
    ],
)
def test_bad_specs_are_value_errors_naming_the_fix(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec, "castle-siege")


def test_missing_model_and_unknown_game():
    with pytest.raises(FileNotFoundError, match="no MaskablePPO model"):
        make_agent("ppo:/nonexistent/model.zip", "castle-siege")
    with pytest.raises(ValueError, match="unknown game"):
        make_agent("heuristic", "chess")
    with pytest.raises(ValueError, match="does not follow"):
        split_agent_list("sims=3,random")


def test_parse_spec_and_listing():
    assert parse_spec(" mcts:sims=3 ") == ("mcts", "sims=3")
    assert "heuristic" in available_agents("castle-siege")
    assert "greedy" in available_agents("castle-siege")


def test_best_falls_back_to_what_can_run_here(monkeypatch, caplog):
    import importlib.util
    import logging

    from castle_envs.agents.registry import resolve_spec
    from castle_envs.experiments.evaluate import resolve_best

    assert resolve_spec("best", "castle-siege").endswith("castle_siege_very_hard_ismcts_endgame")
    assert resolve_spec("best", "castellion") == "pimc"
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a)
    )
    with caplog.at_level(logging.INFO, logger="castle_envs"):
        # the trained scorer alone: the linear model's endgame search is the compiled solver
        assert resolve_best("best", "castle-siege").endswith(
            "castle_siege_very_hard_linear/policy.json"
        )
        assert resolve_best("best", "castellion") == "heuristic"
    assert "needs numba: pip install numba" in caplog.text


def test_best_names_a_shipped_agent_for_every_game():
    from castle_envs.agents.registry import BEST_AGENTS, resolve_spec

    from castle_envs.registry import GAMES

    assert set(BEST_AGENTS) == set(GAMES)
    for game in GAMES:
        spec = resolve_spec("best", game)
        assert spec != "best" and "{models}" not in spec
        agent = make_agent("best", game, seed=0)
        assert agent.act is not None
    assert resolve_spec("heuristic", "castellion") == "heuristic"
    with pytest.raises(ValueError, match="best takes no options"):
        make_agent("best:x=1", "castle-siege")


def test_best_is_resolved_and_announced_by_the_commands(capsys, tmp_path):
    from castle_envs.experiments.cli import main

    assert (
        main(
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--difficulty",
                "easy",
                "--agent",
                "best",
                "--episodes",
                "2",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "agent 'best' for castle-siege is model:" in captured.err
    assert "castle_siege_very_hard_ismcts" in captured.out
    assert (
        main(
            [
                "tournament",
                "--game",
                "castle-rooms",
                "--agents",
                "random,best",
                "--games",
                "2",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "agent 'best' for castle-rooms is heuristic" in capsys.readouterr().err


def test_trained_is_castle_sieges_shipped_trained_scorer_by_name():
    """``trained`` (the name ``castle-envs demo`` prints) is an agent name everywhere."""
    from castle_envs.agents.registry import SIEGE_TRAINED_SCORER, first_runnable

    assert "trained" in available_agents("castle-siege")
    assert "trained" not in available_agents("castellion")
    agent = make_agent("trained", "castle-siege", seed=0)
    same = make_agent(first_runnable(SIEGE_TRAINED_SCORER), "castle-siege", seed=0)
    assert type(agent) is type(same) and agent.name == same.name
    with pytest.raises(ValueError, match="plays castle-siege only"):
        make_agent("trained", "castellion")
    with pytest.raises(ValueError, match="takes no options"):
        make_agent("trained:x=1", "castle-siege")


def test_value_is_castle_sieges_shipped_learned_value_playing_alone():
    """``value`` (the name ``castle-envs demo`` prints) plays as the shipped n-tuple model
    directory does, move for move."""
    import gymnasium as gym

    assert "value" in available_agents("castle-siege")
    assert "value" not in available_agents("castellion")
    by_name = make_agent("value", "castle-siege", seed=0)
    by_dir = make_agent("model:models/castle_siege_ntuple_value", "castle-siege", seed=0)
    env = gym.make("castle_envs/CastleSiege-v0", difficulty="hard")
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            state = env.unwrapped.state.player_view()
            action = by_name.act(obs, info["action_mask"], state)
            assert action == by_dir.act(obs, info["action_mask"], state)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    with pytest.raises(ValueError, match="plays castle-siege only"):
        make_agent("value", "castellion")
