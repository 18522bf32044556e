"""Training algorithms are entries of ``ALGORITHMS``: ``castle-envs train`` and the config's
``algo`` choices follow the table, so a new trainer registers itself instead of adding a
branch to ``train.run``."""

import argparse

import pytest
from castle_envs.experiments import train
from castle_envs.experiments.algorithms import ALGORITHMS, Algorithm, register_algorithm
from castle_envs.experiments.config import ALGOS, resolve

CALLS: list = []


def run_toy(config, args) -> dict:
    CALLS.append((config.algo, config.game, args.run_dir))
    return {"run_dir": "runs/toy", "num_timesteps": 7, "final_eval": None, "wall_seconds": 0.5}


def stop_toy(config, args) -> dict:
    return {"run_dir": "runs/toy", "num_timesteps": 3, "interrupted": True}


def check_toy(config, spec) -> None:
    if spec.slug != "castle-siege":
        raise ValueError("algo: toy plays castle-siege only")


@pytest.fixture
def toy():
    register_algorithm(Algorithm("toy", run_toy, check=f"{__name__}:check_toy"))
    register_algorithm(Algorithm("toy_stop", f"{__name__}:stop_toy"))
    CALLS.clear()
    try:
        yield
    finally:
        del ALGORITHMS["toy"], ALGORITHMS["toy_stop"]


def _args(config_path, run_dir=None):
    return argparse.Namespace(
        config=str(config_path), resume=None, run_dir=run_dir, overrides=[], no_progress=True
    )


def test_the_config_choices_are_the_registry():
    assert (
        ALGOS
        == tuple(ALGORITHMS)
        == (
            "maskable_ppo",
            "cem",
            "move_ppo",
            "exit_siege",
            "ntuple_value",
        )
    )
    with pytest.raises(ValueError, match="algo: 'nope' is not one of"):
        resolve({"algo": "nope"})


def test_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="algorithm 'cem' is taken"):
        register_algorithm(Algorithm("cem", run_toy))


def test_train_runs_a_registered_algorithm(tmp_path, toy, capsys):
    path = tmp_path / "toy.yaml"
    path.write_text("algo: toy\ngame: castle-siege\n")
    assert train.run(_args(path, "somewhere")) == 0
    assert CALLS == [("toy", "castle-siege", "somewhere")]
    out = capsys.readouterr().out
    assert '"num_timesteps": 7' in out and '"wall_seconds": 0.5' in out


def test_a_registered_check_refuses_a_config(toy):
    resolve({"algo": "toy", "game": "castle-siege"})
    with pytest.raises(ValueError, match="algo: toy plays castle-siege only"):
        resolve({"algo": "toy", "game": "castellion"})


def test_an_interrupted_run_says_how_far_it_got(tmp_path, toy, capsys):
    path = tmp_path / "stop.yaml"
    path.write_text("algo: toy_stop\n")
    assert train.run(_args(path)) == 130
    out = capsys.readouterr().out
    assert "checkpointed after 3 trained steps" in out
    assert "castle-envs train --resume runs/toy" in out
