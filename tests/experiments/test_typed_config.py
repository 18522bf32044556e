"""The typed config (experiments/config.py's dataclasses) and run folders written before it:
they still resume, or are refused with a message that says why."""
import dataclasses
import shutil
from pathlib import Path

import pytest

from castle_envs.experiments.config import (
    SCHEMA, CEMConfig, PPOConfig, TrainConfig, dump_config, load_config, resolve)
from castle_envs.experiments.run_folder import RunFolder

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "data" / "old_runs"


def test_a_config_is_frozen_typed_sections():
    config = load_config(ROOT / "configs" / "tiny" / "castle_siege_easy.yaml",
                         ["ppo.n_epochs=2", "cem.population=5"])
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
    first = get_game("castle-siege").variants[0]   # the variant's default: the game's first
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
    assert (tmp_path / "config.yaml").read_text() == old.read_text()


def test_an_old_run_of_another_algo_is_refused(tmp_path):
    from castle_envs.experiments.train import train
    from castle_envs.experiments.train_moves import run_training as run_moves

    with pytest.raises(ValueError, match="is a run of algo 'cem', not 'maskable_ppo'"):
        train(resume=str(OLD / "cem"), progress_bar=False)
    with pytest.raises(ValueError, match="is a run of algo 'maskable_ppo', not 'move_ppo'"):
        run_moves(None, resume=str(OLD / "maskable_ppo"))


@pytest.mark.parametrize("text, message", [
    ("ppo: {n_stepz: 3}\n", "ppo.n_stepz: unknown key"),
    ("- 1\n- 2\n", "config: expected a mapping, got list"),
    ("ppo: 3\n", "ppo: expected a mapping, got int"),
    ("algo: cem\ncem: {population: many}\n", "cem.population: expected int, got str 'many'"),
    ("algo: sarsa\n", "algo: 'sarsa' is not one of"),
    ("ppo: {n_steps: [1\n", "not valid YAML"),
])
def test_a_malformed_run_folder_is_refused_by_name(tmp_path, text, message):
    shutil.copytree(OLD / "cem", tmp_path / "run")
    (tmp_path / "run" / "config.yaml").write_text(text)
    with pytest.raises(ValueError, match=message):
        RunFolder.open(tmp_path / "run", algo="cem")
