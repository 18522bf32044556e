"""CEM training of the Castle Siege linear scorer: runs, resumes exactly, rejects bad configs."""

import json
from pathlib import Path

import numpy as np
import pytest
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.experiments.config import load_config, resolve
from castle_envs.experiments.train_cem import run_training

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny" / "castle_siege_cem.yaml"


def test_a_run_writes_its_curve_checkpoint_and_a_loadable_policy(tmp_path):
    summary = run_training(load_config(TINY), run_dir=tmp_path / "run", progress_bar=False)
    assert summary["generations"] == 2
    assert summary["games"] == 2 * (3 + 1) * 40
    rows = (tmp_path / "run" / "history.csv").read_text().splitlines()
    assert rows[0].startswith("generation,games,steps,seconds,mean_fitness")
    assert len(rows) == 3
    policy = LinearPolicy.load(tmp_path / "run" / "policy.json")
    assert set(summary["final_eval"]) == {"easy"}
    assert 0.0 <= summary["final_eval"]["easy"] <= 1.0
    assert not np.allclose(policy.vector(), LinearPolicy().vector())  # the search moved


def test_resume_reproduces_an_uninterrupted_run(tmp_path):
    config = load_config(TINY)
    whole = run_training(config, run_dir=tmp_path / "whole", progress_bar=False)
    part = run_training(config, run_dir=tmp_path / "part", progress_bar=False, stop_after=1)
    assert part["generations"] == 1 and part["final_eval"] is None
    resumed = run_training(config, resume=str(tmp_path / "part"), progress_bar=False)
    assert resumed["generations"] == 2 and resumed["games"] == whole["games"]
    assert resumed["steps"] == whole["steps"] > 0
    ckpt = Path("checkpoints") / "latest" / "checkpoint.json"
    mean = json.loads((tmp_path / "part" / ckpt).read_text())["mean"]
    assert mean == json.loads((tmp_path / "whole" / ckpt).read_text())["mean"]
    assert resumed["final_eval"] == whole["final_eval"]


def test_cli_trains_and_resumes_a_cem_run(tmp_path, capsys):
    from castle_envs.experiments.cli import main

    run_dir = tmp_path / "cli"
    assert (
        main(
            [
                "train",
                "--config",
                str(TINY),
                "--run-dir",
                str(run_dir),
                "--no-progress",
                "--set",
                "cem.generations=1",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["generations"] == 1 and (run_dir / "policy.json").is_file()
    assert (
        main(
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--difficulty",
                "easy",
                "--agent",
                f"linear:{run_dir / 'policy.json'}",
                "--episodes",
                "4",
                "--workers",
                "1",
                "--out",
                str(tmp_path / "results"),
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"algo": "sgd"}, r"algo: 'sgd' is not one of"),
        ({"algo": "cem", "game": "castellion"}, r"game must be castle-siege"),
        ({"algo": "cem", "cem": {"games": {"extreme": 3}}}, r"cem.games.extreme: not a difficulty"),
        (
            {"algo": "cem", "cem": {"games": {"easy": -1}}},
            r"cem.games.easy: expected a non-negative int",
        ),
        ({"algo": "cem", "cem": {"fitness_weights": {"easy": "x"}}}, r"cem.fitness_weights.easy"),
        ({"algo": "cem", "cem": {"population": 0}}, r"cem.population: must be at least 1"),
        ({"algo": "cem", "cem": {"population": 2, "elite": 5}}, r"cem.elite: cannot exceed"),
        ({"algo": "cem", "cem": {"backend": "spark"}}, r"cem.backend: 'spark' is not one of"),
        ({"algo": "cem", "cem": {"popsize": 3}}, r"cem.popsize: unknown key"),
    ],
)
def test_bad_cem_configs_name_the_key(raw, message):
    with pytest.raises(ValueError, match=message):
        resolve(raw)


def test_resume_of_a_folder_without_a_checkpoint_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a CEM run folder"):
        run_training(load_config(TINY), resume=str(tmp_path))


def test_init_starts_from_a_policy_file_and_the_spread_keeps_its_floor(tmp_path):
    start = LinearPolicy.from_vector(LinearPolicy().vector() * 1.5)
    start.save(tmp_path / "start.json")
    config = load_config(
        TINY, [f"cem.init={tmp_path / 'start.json'}", "cem.generations=1", "cem.sigma_floor=0.5"]
    )
    run_training(config, run_dir=tmp_path / "run", progress_bar=False)
    saved = json.loads(
        (tmp_path / "run" / "checkpoints" / "latest" / "checkpoint.json").read_text()
    )
    sigma, sigma0 = np.array(saved["sigma"]), np.array(saved["sigma0"])
    assert np.all(sigma >= 0.5 * sigma0 - 1e-12)
    # the initial spread is 10% of each starting weight (or its floor): it follows the file
    assert np.all(sigma0 >= 0.1 * np.abs(start.vector()) - 1e-12)
    assert abs(saved["mean"][0] - 1500.0) < 5 * sigma0[0]  # battle.capture started at 1500
