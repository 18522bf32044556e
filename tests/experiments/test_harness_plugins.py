"""CEM and expert iteration as plug-ins of the training harness (experiments/run_folder.py):
the same seed gives the same generations, rounds, weights and rows as the code before them
(tests/data/before_harness/, made at commit bd01cab), and their run folders hold the
harness's files."""
import csv
import json
from pathlib import Path


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
        ("1", "easy", "20"), ("2", "easy", "20")]
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
