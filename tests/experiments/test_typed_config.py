"""The typed config (experiments/config.py's dataclasses) and run folders written before it:
they still resume, or are refused with a message that says why."""

import csv
import dataclasses
import shutil
from pathlib import Path

import pytest
import yaml
from castle_envs.experiments.config import (
    SCHEMA,
    CEMConfig,
    PPOConfig,
    TrainConfig,
    dump_config,
    load_config,
    resolve,
)
from castle_envs.experiments.run_folder import RunFolder

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "data" / "old_runs"


def test_a_config_is_frozen_typed_sections():
    config = load_config(
        ROOT / "configs" / "tiny" / "castle_siege_easy.yaml", ["ppo.n_epochs=2", "cem.population=5"]
    )
    assert isinstance(config, TrainConfig) and isinstance(config.ppo, PPOConfig)
    assert isinstance(config.cem, CEMConfig)
    assert (config.ppo.n_steps, config.ppo.n_epochs, config.cem.population) == (128, 2, 5)
    assert config.variant == {"difficulty": "easy"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 3  # type: ignore[misc]
    assert resolve(config.to_dict()) == config == resolve(config)
    assert config.replace(seed=4).seed == 4 and config.seed == 0


def test_the_defaults_are_the_dataclasses_and_the_schema_follows_them():
    from castle_envs.registry import get_game

    config = resolve({})
    first = get_game("castle-siege").variants[0]  # the variant's default: the game's first
    assert config.to_dict() == {**TrainConfig().to_dict(), "variant": {"difficulty": first}}
    assert SCHEMA["ppo"]["n_steps"] == (int, 256, None)
    assert SCHEMA["policy"]["activation"][2] == ("relu", "tanh")
    assert list(SCHEMA) == list(config.to_dict())


def test_defaults_are_fresh_copies():
    a, b = resolve({}), resolve({})
    a.opponents.append("heuristic")
    a.cem.games["easy"] = 1
    assert b.opponents == ["random"] and "easy" not in b.cem.games
    assert TrainConfig().opponents == ["random"]


@pytest.mark.parametrize("algo", ["cem", "maskable_ppo", "move_ppo"])
def test_an_old_config_yaml_reads_and_is_written_back_the_same(tmp_path, algo):
    old = OLD / algo / "config.yaml"
    folder = RunFolder.open(old.parent, algo=algo)
    assert folder.config.algo == algo
    dump_config(folder.config, tmp_path / "config.yaml")
    # key for key as it was, with the keys added since to its sections (move_ppo.init_model)
    # and then the sections added since (exit_siege, ntuple), each with its default
    defaults = TrainConfig().to_dict()
    added = {name: defaults[name] for name in ("exit_siege", "ntuple")}
    with open(tmp_path / "added.yaml", "w") as f:
        yaml.safe_dump(added, f, sort_keys=False)
    was = old.read_text()
    assert was.count("  init_linear: ''\n") == 1
    was = was.replace("  init_linear: ''\n", "  init_linear: ''\n  init_model: ''\n")
    assert (tmp_path / "config.yaml").read_text() == was + (tmp_path / "added.yaml").read_text()


def test_an_old_run_of_another_algo_is_refused(tmp_path):
    from castle_envs.experiments.train import train
    from castle_envs.experiments.train_moves import run_training as run_moves

    with pytest.raises(ValueError, match="is a run of algo 'cem', not 'maskable_ppo'"):
        train(resume=str(OLD / "cem"), progress_bar=False)
    with pytest.raises(ValueError, match="is a run of algo 'maskable_ppo', not 'move_ppo'"):
        run_moves(None, resume=str(OLD / "maskable_ppo"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("ppo: {n_stepz: 3}\n", "ppo.n_stepz: unknown key"),
        ("- 1\n- 2\n", "config: expected a mapping, got list"),
        ("ppo: 3\n", "ppo: expected a mapping, got int"),
        ("algo: cem\ncem: {population: many}\n", "cem.population: expected int, got str 'many'"),
        ("algo: sarsa\n", "algo: 'sarsa' is not one of"),
        ("ppo: {n_steps: [1\n", "not valid YAML"),
    ],
)
def test_a_malformed_run_folder_is_refused_by_name(tmp_path, text, message):
    shutil.copytree(OLD / "cem", tmp_path / "run")
    (tmp_path / "run" / "config.yaml").write_text(text)
    with pytest.raises(ValueError, match=message):
        RunFolder.open(tmp_path / "run", algo="cem")


def test_an_old_cem_run_resumes_where_it_stopped(tmp_path):
    from castle_envs.experiments.train_cem import run_training

    run = tmp_path / "old"
    shutil.copytree(OLD / "cem", run)
    resumed = run_training(None, resume=str(run), progress_bar=False)
    whole = run_training(
        load_config(ROOT / "configs" / "tiny" / "castle_siege_cem.yaml"),
        run_dir=tmp_path / "whole",
        progress_bar=False,
    )
    assert resumed["generations"] == whole["generations"] == 2
    assert resumed["final_eval"] == whole["final_eval"]

    def rows(path):
        with open(path / "history.csv") as f:
            return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(f)]

    assert rows(run) == rows(tmp_path / "whole")
    assert (run / "policy.json").read_text() == (tmp_path / "whole" / "policy.json").read_text()
    # the checkpoint now lives where every trainer's does; the old one is gone
    assert (run / "checkpoints" / "latest" / "checkpoint.json").is_file()
    assert not (run / "checkpoint.json").exists()


def test_a_damaged_cem_checkpoint_is_refused_by_name(tmp_path):
    from castle_envs.experiments.train_cem import run_training

    shutil.copytree(OLD / "cem", tmp_path / "run")
    (tmp_path / "run" / "checkpoint.json").write_text('{"generation": 1}')
    with pytest.raises(ValueError, match="checkpoint.json is missing or damaged"):
        run_training(None, resume=str(tmp_path / "run"), progress_bar=False)
