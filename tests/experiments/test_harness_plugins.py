"""CEM and expert iteration as plug-ins of the training harness (experiments/run_folder.py):
the same seed gives the same generations, rounds, weights and rows as the code before them
(tests/data/before_harness/, made at commit bd01cab), and their run folders hold the
harness's files."""

import csv
import json
from pathlib import Path

import pytest
from castle_envs.experiments.config import load_config

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests" / "data" / "before_harness"
TINY_CEM = ROOT / "configs" / "tiny" / "castle_siege_cem.yaml"


def _history(run):
    with open(run / "history.csv") as f:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(f)]


def _check_cem_run(run, summary):
    expected = json.loads((BEFORE / "cem.json").read_text())
    assert {k: summary[k] for k in expected["summary"]} == expected["summary"]
    assert _history(run) == expected["history"]
    saved = json.loads((run / "checkpoints" / "latest" / "checkpoint.json").read_text())
    for key in ("mean", "sigma", "sigma0"):
        assert saved[key] == expected[key], key
    assert json.loads((run / "policy.json").read_text()) == expected["policy"]


def test_cem_gives_the_generations_of_the_code_before_the_harness(tmp_path):
    from castle_envs.experiments.train_cem import run_training

    run = tmp_path / "run"
    summary = run_training(load_config(TINY_CEM), run_dir=run, progress_bar=False)
    _check_cem_run(run, summary)
    # the harness's files: progress, the evaluations, the best and final means, the summary
    progress = json.loads((run / "progress.json").read_text())
    assert (progress["generations"], progress["checkpoints"], progress["evals_done"]) == (2, 2, 2)
    with open(run / "eval.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["generation"], r["difficulty"], r["games"]) for r in rows] == [
        ("1", "easy", "20"),
        ("2", "easy", "20"),
    ]
    assert (run / "final_model" / "policy.json").read_text() == (run / "policy.json").read_text()
    assert (run / "best_model" / "policy.json").is_file()
    written = json.loads((run / "summary.json").read_text())
    assert written["generations"] == 2 and written["games"] == summary["games"]
    assert written["final_eval"]["by_difficulty"] == summary["final_eval"]


def test_a_stopped_cem_run_resumes_to_the_same_generations(tmp_path):
    from castle_envs.experiments.train_cem import run_training

    run = tmp_path / "run"
    part = run_training(load_config(TINY_CEM), run_dir=run, progress_bar=False, stop_after=1)
    assert part["stopped"] and part["generations"] == 1 and part["final_eval"] is None
    assert not (run / "summary.json").exists()
    summary = run_training(None, resume=str(run), progress_bar=False)
    _check_cem_run(run, summary)


# --- expert iteration --------------------------------------------------------------------------
TINY_EXIT = ROOT / "configs" / "tiny" / "castle_siege_exit.yaml"
OLD_EXIT = ROOT / "tests" / "data" / "old_runs" / "exit_siege"


def _same(got, want, path="") -> None:
    """``got == want``, floats to 1e-9 relative: the fit's floating-point sums move in their
    last digits between numpy releases (2.4.6 moved ``loss_after`` by one ulp); everything
    else, and the data fitted (compared by sha256), must be the same exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), path
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), path
    else:
        assert got == want, path


def _check_rounds(run, rounds=(0, 1)):
    import hashlib

    import numpy as np

    expected = json.loads((BEFORE / "exit_siege.json").read_text())["rounds"]
    for k in rounds:
        folder, want = run / f"round_{k}", expected[k]
        with np.load(folder / "data.npz") as data:
            assert {
                name: hashlib.sha256(np.ascontiguousarray(data[name]).tobytes()).hexdigest()
                for name in want["data_sha256"]
            } == want["data_sha256"], k
        _same(json.loads((folder / "policy.json").read_text())["weights"], want["policy"], "policy")
        summary = json.loads((folder / "summary.json").read_text())
        _same({k: v for k, v in summary.items() if k not in ("wall_s", "cpu_s")}, want["summary"])


def test_expert_iteration_gives_the_rounds_of_the_code_before_the_harness(tmp_path):
    from castle_envs.experiments.exit_siege import run_training

    run = tmp_path / "run"
    summary = run_training(load_config(TINY_EXIT), run_dir=run, log=lambda line: None)
    _check_rounds(run)
    assert summary["rounds"] == 2 and summary["decisions"] == 73
    files = sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file())
    assert files == [
        "checkpoints/latest/policy.json",
        "checkpoints/latest/progress.json",
        "checkpoints/latest/rounds.json",
        "config.yaml",
        "final_model/policy.json",
        "progress.json",
        "round_0/data.npz",
        "round_0/policy.json",
        "round_0/summary.json",
        "round_1/data.npz",
        "round_1/policy.json",
        "round_1/summary.json",
        "summary.json",
    ]
    assert (run / "final_model" / "policy.json").read_text() == (
        run / "round_1" / "policy.json"
    ).read_text()


def test_a_stopped_expert_iteration_resumes_at_its_next_round(tmp_path):
    from castle_envs.experiments.exit_siege import run_training

    run = tmp_path / "run"
    part = run_training(load_config(TINY_EXIT), run_dir=run, stop_after=1, log=lambda line: None)
    assert part["stopped"] and part["rounds"] == 1 and not (run / "round_1").exists()
    lines = []
    summary = run_training(resume=str(run), log=lines.append)
    assert summary["rounds"] == 2 and lines[0] == "round 0: done (resumed)"
    _check_rounds(run)


def test_an_old_rounds_folder_resumes_through_the_command_line(tmp_path, capsys):
    import shutil

    from castle_envs.experiments import exit_siege

    run = tmp_path / "old"
    shutil.copytree(OLD_EXIT, run)
    args = [
        "--out",
        str(run),
        "--rounds",
        "2",
        "--games",
        "2",
        "--eval-games",
        "2",
        "--iterations",
        "20",
    ]
    exit_siege.main(args)  # its config.json named the shipped scorer's file: the default
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "round 0: done (resumed)" and out[1].startswith("round 1: train 0/2")
    _check_rounds(run)
    config = load_config(run / "config.yaml")
    assert (config.algo, config.seed, config.exit_siege.games) == ("exit_siege", 20_000_000, 2)
    assert json.loads((run / "summary.json").read_text())["rounds"] == 2
    # another round asked of the same run: it grows; other arguments are refused by name
    with __import__("pytest").raises(SystemExit):
        exit_siege.main([*args[:-1], "30"])
    assert "exit_siege.iterations" in capsys.readouterr().err


def test_a_damaged_old_rounds_folder_is_refused_with_what_to_do(tmp_path):
    import shutil

    from castle_envs.experiments.exit_siege import run_training

    run = tmp_path / "old"
    shutil.copytree(OLD_EXIT, run)
    (run / "config.json").write_text('{"rounds": 2}')
    with pytest.raises(
        ValueError,
        match=r"config.json: not the config.json of an expert-"
        r"iteration rounds folder \(no 'games'\); start the "
        r"run again in a new folder",
    ):
        run_training(resume=str(run))
    assert not (run / "config.yaml").exists()


def test_castle_envs_train_resumes_an_old_rounds_folder(tmp_path, capsys):
    import shutil

    from castle_envs.experiments.cli import main

    run = tmp_path / "old"
    shutil.copytree(OLD_EXIT, run)
    assert main(["train", "--resume", str(run), "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 2)[-1])["rounds"] == 2
    _check_rounds(run, rounds=(1,))


def test_bad_expert_iteration_configs_name_the_key():
    from castle_envs.experiments.config import resolve

    for raw, message in [
        ({"algo": "exit_siege", "exit_siege": {"gamez": 3}}, r"exit_siege.gamez: unknown key"),
        ({"algo": "exit_siege", "seed": 5}, r"seed: exit_siege plays its training deals"),
        (
            {"algo": "exit_siege", "seed": 20_000_000, "exit_siege": {"rounds": 0}},
            r"exit_siege.rounds: must be at least 1",
        ),
        (
            {"algo": "exit_siege", "seed": 20_000_000, "exit_siege": {"temp": 0}},
            r"exit_siege.temp: expected a number above 0",
        ),
        (
            {"algo": "exit_siege", "game": "castellion", "seed": 20_000_000},
            r"game must be castle-siege",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            resolve(raw)


def test_an_interrupted_round_is_redone_on_resume(tmp_path, monkeypatch):
    from castle_envs.experiments import exit_siege

    fits = []

    def fit_then_interrupt(*args, **kwargs):
        fits.append(1)
        if len(fits) == 2:  # in round 1, after its games, before its check
            raise KeyboardInterrupt
        return real_fit(*args, **kwargs)

    real_fit = exit_siege.fit
    monkeypatch.setattr(exit_siege, "fit", fit_then_interrupt)
    run = tmp_path / "run"
    cut = exit_siege.run_training(load_config(TINY_EXIT), run_dir=run, log=lambda line: None)
    assert cut["interrupted"] and cut["rounds"] == 1
    assert not (run / "round_1" / "summary.json").exists()
    assert json.loads((run / "checkpoints" / "latest" / "rounds.json").read_text()) == {"rounds": 1}
    monkeypatch.setattr(exit_siege, "fit", real_fit)
    assert exit_siege.run_training(resume=str(run), log=lambda line: None)["rounds"] == 2
    _check_rounds(run)
