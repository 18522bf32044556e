"""The training pipeline: a tiny run learns on Easy, resume continues, bad configs fail clearly."""

from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")

from castle_envs.experiments.config import load_config, resolve  # noqa: E402
from castle_envs.experiments.train import train  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny" / "castle_siege_easy.yaml"


def test_every_shipped_config_is_valid():
    configs = sorted((ROOT / "configs").rglob("*.yaml"))
    assert len(configs) >= 9
    for path in configs:
        load_config(path)


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"ppo": {"n_stepz": 3}}, r"ppo.n_stepz: unknown key"),
        ({"speed": 1}, r"speed: unknown key"),
        ({"seed": "zero"}, r"seed: expected int, got str"),
        ({"n_envs": 1.5}, r"n_envs: expected int"),
        ({"policy": {"activation": "gelu"}}, r"policy.activation: 'gelu' is not one of"),
        ({"game": "chess"}, r"unknown game 'chess'"),
        ({"variant": {"level": "school"}}, r"variant.level: castle-siege takes variant.difficulty"),
        ({"variant": {"difficulty": "extreme"}}, r"variant.difficulty: 'extreme' is not one of"),
        ({"ppo": {"batch_size": 100}}, r"ppo.batch_size: must divide"),
        (
            {"curriculum": [{"variant": {"difficulty": "easyy"}, "until_steps": 5}]},
            r"curriculum\[0\]",
        ),
        ({"self_play": {"enabled": True}}, r"self-play needs a multi-player game"),
        # sizes the model loader refuses are refused before a run allocates them
        ({"policy": {"net_arch": [65536] * 3}}, r"policy.net_arch .* more than the"),
        ({"policy": {"net_arch": [16] * 65}}, r"policy.net_arch: expected a list of 1 to 64"),
        ({"policy": {"net_arch": [1 << 20]}}, r"policy.net_arch: expected .* 1 to 65536"),
        ({"policy": {"net_arch": []}}, r"policy.net_arch: expected"),
        (
            {"algo": "move_ppo", "move_ppo": {"hidden": 1 << 16}},
            r"move_ppo.hidden 65536 makes a network of .* more than the",
        ),
        (
            {"algo": "move_ppo", "move_ppo": {"capacity": 1 << 30}},
            r"move_ppo.capacity: must be at most 65536",
        ),
        ({"pretrain": {"agent": "heuristic"}}, r"pretrain.episodes: must be at least 1"),
        (
            {"game": "castell", "pretrain": {"agent": "heuristic", "episodes": 3}},
            r"pretrain.agent: behaviour cloning is for the solitaire games",
        ),
    ],
)
def test_bad_configs_name_the_key(raw, message):
    with pytest.raises(ValueError, match=message):
        resolve(raw)


def test_cli_reports_bad_config_without_traceback(tmp_path, capsys):
    from castle_envs.experiments.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("game: castle-siege\nppo: {lr: 0.1}\n")
    assert main(["train", "--config", str(bad), "--no-progress"]) == 2
    assert "ppo.lr: unknown key" in capsys.readouterr().err


def test_resume_continues_the_step_count_and_keeps_the_config(tmp_path):
    config = load_config(TINY)
    whole = train(config, run_dir=tmp_path / "whole", progress_bar=False)
    part = train(config, run_dir=tmp_path / "part", progress_bar=False, stop_after=256)
    assert part["num_timesteps"] == 256
    resumed = train(resume=str(tmp_path / "part"), progress_bar=False)
    assert resumed["num_timesteps"] == whole["num_timesteps"] == config.total_timesteps
    saved = yaml.safe_load((tmp_path / "part" / "config.yaml").read_text())
    assert saved == yaml.safe_load((tmp_path / "whole" / "config.yaml").read_text())
    rows = (tmp_path / "part" / "eval.csv").read_text().strip().splitlines()
    assert [int(r.split(",")[0]) for r in rows[1:]] == [256, 512]
    assert list((tmp_path / "part" / "tb").iterdir())

    from castle_envs.agents import make_agent
    from castle_envs.experiments.train import export_model

    shipped = export_model(tmp_path / "whole", tmp_path / "models" / "tiny")
    assert (shipped / "model.json").is_file()
    agent = make_agent(f"model:{shipped}", "castle-siege")
    import gymnasium

    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy")
    obs, info = env.reset(seed=0)
    assert info["action_mask"][agent.act(obs, info["action_mask"])]


def test_curriculum_and_multiplayer_configs_run(tmp_path):
    config = resolve(
        {
            "game": "castle-siege",
            "variant": {"difficulty": "medium"},
            "total_timesteps": 256,
            "n_envs": 2,
            "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "policy": {"net_arch": [32]},
            "eval": {"every_steps": 10_000, "episodes": 2},
            "curriculum": [{"variant": {"difficulty": "easy"}, "until_steps": 128}],
        }
    )
    summary = train(config, run_dir=tmp_path / "cur", progress_bar=False)
    assert summary["num_timesteps"] == 256
    rooms = resolve(
        {
            "game": "castle-rooms",
            "variant": {"num_players": 2},
            "total_timesteps": 256,
            "n_envs": 2,
            "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "policy": {"net_arch": [32]},
            "eval": {"every_steps": 10_000, "episodes": 2},
            "self_play": {"enabled": True, "snapshot_every": 128},
        }
    )
    assert train(rooms, run_dir=tmp_path / "rooms", progress_bar=False)["num_timesteps"] == 256


@pytest.mark.parametrize("name", ["castellion", "castle_rooms", "castell"])
def test_tiny_config_trains_on_every_game(name, tmp_path):
    config = load_config(ROOT / "configs" / "tiny" / f"{name}.yaml")
    summary = train(config, run_dir=tmp_path / name, progress_bar=False)
    assert summary["num_timesteps"] == config.total_timesteps
    assert (tmp_path / name / "final_model" / "model.json").is_file()


@pytest.mark.slow
def test_short_run_beats_random_on_easy(tmp_path):
    """Random play wins 9 of 10,000 Easy deals (0.09%); ten PPO updates already win several
    of 100 held-out deals. P(random wins >= 3 of 100) is below 2e-4."""
    config = resolve(
        {
            "game": "castle-siege",
            "variant": {"difficulty": "easy"},
            "env_kwargs": {"reward": "shaped"},
            "total_timesteps": 10240,
            "n_envs": 4,
            "ppo": {"n_steps": 256, "batch_size": 256, "n_epochs": 4, "gamma": 0.995},
            "policy": {"net_arch": [128, 128]},
            "eval": {"every_steps": 100_000, "episodes": 100},
            "checkpoint": {"every_steps": 100_000},
        }
    )
    summary = train(config, run_dir=tmp_path / "easy", progress_bar=False)
    assert summary["final_eval"]["wins"] >= 3, summary["final_eval"]


def test_behaviour_cloning_moves_the_policy_towards_the_teacher(tmp_path):
    config = resolve(
        {
            "game": "castle-siege",
            "variant": {"difficulty": "easy"},
            "total_timesteps": 128,
            "n_envs": 1,
            "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1},
            "policy": {"net_arch": [64]},
            "eval": {"every_steps": 100_000, "episodes": 2},
            "pretrain": {"agent": "heuristic", "episodes": 20, "epochs": 20},
        }
    )
    train(config, run_dir=tmp_path / "bc", progress_bar=False)
    import json

    report = json.loads((tmp_path / "bc" / "progress.json").read_text())["pretrain"]
    assert report["samples"] > 100
    # an untrained policy agrees with the teacher on well under 10% of the moves
    assert report["policy_agrees_with_agent"] > 0.5, report
