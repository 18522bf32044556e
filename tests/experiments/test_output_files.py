"""No command writes over a file it did not write: the result files of ``evaluate``,
``tournament`` and ``benchmark`` (``--out``/``--name``), evaluate's episode log, the game
records' folder, ``solve --plot`` and a training run's ``--run-dir``. Whatever holds one of
their names and is not of the kind the command writes is refused before the run (exit 2,
one line naming the path), and left as it was; the command's own earlier files are written
over, as a rerun does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from castle_envs.experiments.cli import main
from castle_envs.experiments.common import (
    is_plot_png,
    is_results_csv,
    is_results_json,
    is_svg_chart,
)

from .test_cli_errors import fails_cleanly

ROOT = Path(__file__).resolve().parents[2]
EVALUATE = ["evaluate", "--game", "castle-siege", "--difficulty", "easy", "--agent", "random"]
EVALUATE += ["--agent", "greedy", "--episodes", "2", "--workers", "1", "--no-progress"]
TOURNAMENT = ["tournament", "--game", "castle-rooms", "--agents", "random,heuristic"]
TOURNAMENT += ["--games", "2", "--workers", "1", "--no-progress"]
#: what a user may keep under one of those names
THEIRS = b"my own notes, not castle-envs output\n"


def refused_untouched(capsys, argv, path: Path, *words) -> None:
    path.write_bytes(THEIRS)
    fails_cleanly(capsys, argv, str(path), *words)
    assert path.read_bytes() == THEIRS
    path.unlink()


@pytest.mark.parametrize("ending", [".json", ".csv", "-paired.csv", "-deals.csv", ".png"])
def test_evaluate_refuses_a_result_name_held_by_another_file(tmp_path, capsys, ending):
    argv = EVALUATE + ["--out", str(tmp_path), "--name", "run"]
    refused_untouched(capsys, argv, tmp_path / f"run{ending}", "--name", "not a castle-envs")
    assert not (tmp_path / "run-episodes.jsonl").exists()  # refused before any episode


def test_evaluate_refuses_an_episode_log_name_held_by_another_file(tmp_path, capsys):
    argv = EVALUATE + ["--out", str(tmp_path), "--name", "run"]
    refused_untouched(capsys, argv, tmp_path / "run-episodes.jsonl", "not an evaluate episode log")


def test_evaluate_and_tournament_refuse_a_file_where_the_records_folder_goes(tmp_path, capsys):
    for argv in (EVALUATE, TOURNAMENT):
        argv = argv + ["--out", str(tmp_path), "--name", "run", "--record", "1"]
        refused_untouched(capsys, argv, tmp_path / "run-records", "not a folder")


def test_a_rerun_writes_over_its_own_files(tmp_path, capsys):
    for argv in (EVALUATE, TOURNAMENT):
        argv = argv + ["--out", str(tmp_path), "--name", "run", "--record", "1"]
        assert main(argv) == 0
        assert main(argv) == 0, capsys.readouterr().err


@pytest.mark.parametrize("ending", [".json", ".csv", ".png"])
def test_tournament_refuses_a_result_name_held_by_another_file(tmp_path, capsys, ending):
    argv = TOURNAMENT + ["--out", str(tmp_path), "--name", "run"]
    refused_untouched(capsys, argv, tmp_path / f"run{ending}", "--name", "not a castle-envs")


@pytest.mark.parametrize("ending", [".json", ".csv", ".png"])
def test_benchmark_refuses_a_result_name_held_by_another_file(tmp_path, capsys, ending):
    argv = ["benchmark", "--game", "castle-siege", "--difficulty", "very_hard", "--agent"]
    argv += ["random", "--deals", "3", "--workers", "1", "--no-progress"]
    argv += ["--out", str(tmp_path), "--name", "b"]
    refused_untouched(capsys, argv, tmp_path / f"b{ending}", "--name", "not a castle-envs")
    assert not (tmp_path / "b-episodes.jsonl").exists()  # refused before any deal
    assert main(argv) == 0 and main(argv) == 0  # and its own files are written over


def test_a_record_is_never_saved_over_a_file_that_is_not_one(tmp_path):
    from castle_envs.experiments.evaluate import write_records

    game = {"variant": {"difficulty": "easy"}, "agents": ["random"], "seed": 3}
    folder = tmp_path / "run-records"
    folder.mkdir()
    theirs = folder / "easy-random-seed3.json"
    theirs.write_bytes(THEIRS)
    with pytest.raises(ValueError, match="not a castle-envs game record"):
        write_records([{**game, "seed": 2}, game], str(folder))
    assert theirs.read_bytes() == THEIRS
    assert list(folder.iterdir()) == [theirs]  # none written: all are checked first


@pytest.mark.parametrize("game", ["castle-siege", "castellion"])
def test_solve_plot_refuses_a_file_it_did_not_draw(tmp_path, capsys, game):
    if game == "castle-siege":
        summary = ROOT / "docs/data/castle_siege_winnability/hard_5000.json"
    else:
        summary = tmp_path / "summary.json"
        argv = ["solve", "--game", "castellion", "--level", "school", "--deals", "1"]
        assert main(argv + ["--budget", "100", "--random-games", "0", "--json"]) == 0
        summary.write_text(capsys.readouterr().out)
    plot = tmp_path / "plot.svg"
    argv = ["solve", "--game", game, "--plot", str(plot), "--summaries", str(summary)]
    refused_untouched(capsys, argv, plot, "--plot", "not a chart castle-envs solve drew")
    assert main(argv) == 0 and main(argv) == 0  # its own chart is drawn again
    assert is_svg_chart(plot.read_bytes())


def test_train_refuses_a_run_dir_that_holds_files(tmp_path, capsys):
    config = ROOT / "configs/tiny/castle_siege_cem.yaml"
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.yaml").write_bytes(THEIRS)  # a project's own config, say
    argv = ["train", "--config", str(config), "--run-dir", str(folder)]
    fails_cleanly(capsys, argv, "--run-dir", "not empty", "--resume")
    assert (folder / "config.yaml").read_bytes() == THEIRS
    (folder / "config.yaml").unlink()
    (folder / "notes.txt").write_bytes(THEIRS)
    fails_cleanly(capsys, argv, "--run-dir", "not empty")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_new_run_goes_into_an_empty_folder(tmp_path):
    from castle_envs.experiments.config import load_config, new_run_dir

    empty = tmp_path / "empty"
    empty.mkdir()
    _, path = new_run_dir(load_config(ROOT / "configs/tiny/castle_siege_cem.yaml"), empty)
    assert path == empty and (empty / "config.yaml").is_file()


def test_the_shipped_result_files_are_recognised_as_the_commands_own():
    """Every result file of evaluate, tournament and benchmark under docs/ (written by
    those commands), and the solve charts, may be written over by a rerun."""
    kinds = {".json": is_results_json, ".csv": is_results_csv, ".png": is_plot_png}
    seen = 0
    for path in (ROOT / "docs").rglob("*"):
        name = path.name
        if path.suffix in kinds and name.startswith(("evaluate-", "tournament-", "benchmark-")):
            assert kinds[path.suffix](path.read_bytes()[: 2**20]), path
            seen += 1
    assert seen > 20  # the docs hold dozens
    for svg in ("castle_siege_winnability.svg", "castellion_winnability.svg"):
        assert is_svg_chart((ROOT / "docs" / svg).read_bytes())
    assert not is_results_json(json.dumps({"name": "x"}).encode())
    assert not is_results_csv(b"seed,model_won,linear_won\n")


# --- the study scripts (python -m castle_envs.experiments.NAME) ---------------------------------
def refused_usage(capsys, main_, argv, *words) -> str:
    """``main_(argv)`` stops with a usage error (exit 2) naming ``words``, before any work."""
    with pytest.raises(SystemExit) as stop:
        main_(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    for word in words:
        assert word in err, (word, err)
    return err


def test_the_scripts_refuse_a_file_they_did_not_write(tmp_path, capsys):
    from castle_envs.experiments import eval_moves, exit_siege_net, siege_disagreement

    theirs = tmp_path / "theirs.txt"
    theirs.write_bytes(THEIRS)
    for main_, argv, words in (
        (siege_disagreement.main, ["--out", str(theirs)], ["--out", "not its journal"]),
        (
            siege_disagreement.main,
            ["--summary", str(theirs), "--json", str(theirs)],
            ["--json", "not its figures"],
        ),
        (
            exit_siege_net.main,
            ["collect", "--seed", "20000000", "--games", "1", "--journal", str(theirs)],
            ["--journal", "not a games journal"],
        ),
        (
            exit_siege_net.main,
            ["export", "--model", "x", "--out", str(tmp_path / "theirs")],  # .npz added
            ["--out", "not a .npz of arrays"],
        ),
        (
            exit_siege_net.main,
            ["fit", "--journals", "x", "--out", str(tmp_path)],
            ["--out", "not empty"],
        ),
    ):
        if "export" in argv:
            (tmp_path / "theirs.npz").write_bytes(THEIRS)
        refused_usage(capsys, main_, argv, *words)
    assert theirs.read_bytes() == THEIRS and (tmp_path / "theirs.npz").read_bytes() == THEIRS
    out = tmp_path / "eval"
    out.mkdir()
    (out / "eval_seed0_n10.json").write_bytes(THEIRS)
    argv = ["--model", "x", "--episodes", "10", "--out", str(out)]
    refused_usage(capsys, eval_moves.main, argv, "--out", "not its summary")
    assert (out / "eval_seed0_n10.json").read_bytes() == THEIRS


def test_a_study_run_folder_must_be_new_or_empty(tmp_path, capsys):
    from castle_envs.experiments import exit_siege, rllib_castle_rooms

    (tmp_path / "notes.txt").write_bytes(THEIRS)
    refused_usage(capsys, exit_siege.main, ["--out", str(tmp_path)], "--out", "not empty")
    refused_usage(capsys, rllib_castle_rooms.parse_args, ["--out", str(tmp_path)], "not empty")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_ppo_vec_refuses_a_curve_file_it_did_not_write(tmp_path, capsys):
    from castle_envs.experiments import ppo_vec

    curve = tmp_path / "curve.json"
    curve.write_bytes(THEIRS)
    refused_usage(capsys, ppo_vec.parse_args, ["--curve", str(curve)], "not a learning curve")
    assert curve.read_bytes() == THEIRS
    curve.write_text(json.dumps({"args": {}, "steps": 1, "points": []}, indent=1))
    assert ppo_vec.parse_args(["--curve", str(curve)]).curve == str(curve)  # its own


def test_the_scripts_recognise_what_they_write(tmp_path):
    import numpy as np
    from castle_envs.experiments.exit_siege_net import is_npz
    from castle_envs.experiments.siege_disagreement import is_journal

    np.savez(tmp_path / "a.npz", w=np.zeros(3), b=np.ones(2))
    assert is_npz((tmp_path / "a.npz").read_bytes())
    assert not is_npz(b"PK\x03\x04" + bytes(26) + b"notes.txt")
    assert is_journal(json.dumps({"seed": 3, "won": True, "decisions": []}).encode())
