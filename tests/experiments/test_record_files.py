"""Game records and the files around them, handed back edited or in the way: a record
nested 100,000 deep, with an outcome of the wrong kind or count, or whose start position is
of another variant or player count than it says, is refused on replay (exit 2, one line);
``replay`` never writes its page over the record or over a file it did not write; ``play
--save`` and ``evaluate``'s output names are checked before the game or the evaluation
starts. (``core.files``, the reader behind them, is tested on its own in tests/test_files.py.)"""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from castle_envs.experiments.cli import main
from castle_envs.experiments.records import RecordError, replay

from .test_cli_errors import fails_cleanly
from .test_replay import play_recorded

ROOT = Path(__file__).resolve().parents[2]
DEEP = 100_000


@pytest.fixture(scope="module")
def siege_record():
    record, _, _ = play_recorded("castle-siege", "hard", seed=4, agent="heuristic")
    return json.loads(json.dumps(record))


def write(tmp_path, record, name="game.json") -> Path:
    path = tmp_path / name
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    return path


# --- records ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        "[" * DEEP + "]" * DEEP,
        '{"a":' * DEEP + "1" + "}" * DEEP,
        '{"format": "castle-envs game record", "agents": ' + "[" * DEEP + "]" * DEEP + "}",
    ],
    ids=["arrays", "objects", "inside-a-record"],
)
def test_a_record_nested_100000_deep_is_a_one_line_error(tmp_path, capsys, content):
    path = write(tmp_path, content)
    fails_cleanly(capsys, ["replay", str(path), "--no-html"], str(path), "nested")


RETURNS = {  # each from the record's true returns
    "null": lambda real: None,
    "number": lambda real: real[0],
    "object": lambda real: {"0": real[0]},
    "strings": lambda real: [str(r) for r in real],
    "bool": lambda real: [bool(r) for r in real],
    "empty": lambda real: [],
    "two-seats": lambda real: real + real,
    "text": lambda real: "won",
}


@pytest.mark.parametrize("returns", RETURNS)
def test_an_outcome_whose_returns_are_not_one_number_per_seat_is_refused(
    tmp_path, capsys, siege_record, returns
):
    bad = copy.deepcopy(siege_record)
    assert bad["outcome"]["returns"] in ([0.0], [1.0])
    bad["outcome"]["returns"] = RETURNS[returns](bad["outcome"]["returns"])
    path = write(tmp_path, bad)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "returns")


@pytest.mark.parametrize("steps", [None, 0, -1, "41", True, "one more"])
def test_an_outcome_whose_steps_disagree_with_the_actions_is_refused(
    tmp_path, capsys, siege_record, steps
):
    bad = copy.deepcopy(siege_record)
    bad["outcome"]["steps"] = steps if steps != "one more" else len(bad["actions"]) + 1
    path = write(tmp_path, bad)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "'steps'")


def test_an_outcome_whose_terminal_is_not_a_bool_is_refused(tmp_path, capsys, siege_record):
    bad = copy.deepcopy(siege_record)
    bad["outcome"]["terminal"] = "yes"
    path = write(tmp_path, bad)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "'terminal'")


@pytest.mark.parametrize(
    "game, played, said, words",
    [
        ("castle-siege", "hard", "easy", ["difficulty"]),
        ("castellion", "menace", "school", ["level"]),
        ("castle-rooms", 3, 4, ["player count"]),
        ("castell", 2, 3, ["num_players"]),
    ],
)
def test_an_unseeded_record_of_another_variant_than_it_says_is_refused(
    tmp_path, capsys, game, played, said, words
):
    """The start position decides the game; a record saying another variant (or player
    count) than its start position's must not replay as if it were that variant."""
    from castle_envs.registry import get_game

    record, _, _ = play_recorded(game, played)
    record = json.loads(json.dumps(record))
    record["seed"] = None
    assert len(list(replay(copy.deepcopy(record)))) == len(record["actions"])  # as played
    record["variant"] = {get_game(game).variant_arg: said}
    with pytest.raises(RecordError, match="start position is invalid"):
        list(replay(copy.deepcopy(record)))
    path = write(tmp_path, record)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "start", *words)


def test_a_record_with_another_number_of_agents_than_seats_is_refused(tmp_path, capsys):
    record, _, _ = play_recorded("castell", 2)
    record = json.loads(json.dumps(record))
    record["agents"] = record["agents"][:1]
    path = write(tmp_path, record)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "1 agent", "2 player")
    record["agents"] = []
    path = write(tmp_path, record)
    fails_cleanly(capsys, ["replay", str(path), "--no-html", "--quiet"], "'agents'")


# --- replay's page ----------------------------------------------------------------------------
def test_the_page_is_never_written_over_the_record(tmp_path, capsys, siege_record):
    path = write(tmp_path, siege_record)
    before = path.read_bytes()
    fails_cleanly(capsys, ["replay", str(path), "--html", str(path)], "the game record itself")
    os.link(path, tmp_path / "same.json")  # the same file under another name
    fails_cleanly(
        capsys,
        ["replay", str(path), "--html", str(tmp_path / "same.json")],
        "the game record itself",
    )
    named_html = write(tmp_path, siege_record, "game.html")  # the default page name is itself
    fails_cleanly(capsys, ["replay", str(named_html)], "the game record itself", "--html")
    assert path.read_bytes() == before and named_html.read_bytes() == before


def test_the_page_is_never_written_over_a_file_it_did_not_write(tmp_path, capsys, siege_record):
    path = write(tmp_path, siege_record)
    notes = tmp_path / "notes.html"
    notes.write_text("<!DOCTYPE html><html><title>my notes</title></html>")
    other = tmp_path / "game.html"  # the default page name, taken by another file
    other.write_text("results I keep")
    for target, argv in ((notes, ["--html", str(notes)]), (other, [])):
        before = target.read_bytes()
        fails_cleanly(capsys, ["replay", str(path), "--quiet", *argv], "not a replay page")
        assert target.read_bytes() == before


def test_a_page_it_wrote_is_written_again(tmp_path, capsys, siege_record):
    path = write(tmp_path, siege_record)
    assert main(["replay", str(path), "--quiet"]) == 0
    page = tmp_path / "game.html"
    first = page.read_text()
    assert first.startswith("<!DOCTYPE html>") and "castle-envs replay" in first
    assert main(["replay", str(path), "--quiet"]) == 0  # its own page: replaced
    assert page.read_text() == first
    assert main(["replay", str(path), "--quiet", "--html", str(tmp_path / "new.html")]) == 0


# --- play --save ------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["under-a-file", "a-folder", "not-a-record"])
def test_play_save_is_checked_before_the_game(tmp_path, capsys, monkeypatch, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    target = {
        "under-a-file": blocker / "game.json",
        "a-folder": tmp_path,
        "not-a-record": blocker,
    }[where]
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))  # a person who quits at once
    line = fails_cleanly(capsys, ["play", "castle-siege", "--save", str(target)], "--save")
    assert "abandoned" not in line
    assert blocker.read_text() == "a file, not a folder"


def test_play_save_writes_over_its_own_record(tmp_path, monkeypatch, capsys):
    path = tmp_path / "game.json"
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO("0\nq\n"))
        assert main(["play", "castle-siege", "--seed", "1", "--save", str(path)]) == 0
        assert "saved the game record" in capsys.readouterr().out
    assert json.loads(path.read_text())["actions"]


# --- evaluate's output names ------------------------------------------------------------------
EVALUATE = ["evaluate", "--game", "castle-siege", "--difficulty", "easy", "--episodes", "1"]
EVALUATE += ["--workers", "1", "--no-plot", "--no-progress", "--record", "1"]


def test_evaluate_refuses_a_name_too_long_before_it_runs(tmp_path, capsys, monkeypatch):
    import castle_envs.experiments.evaluate as evaluate

    def no_run(*args, **kwargs):
        raise AssertionError("the evaluation ran")

    monkeypatch.setattr(evaluate, "run_evaluation", no_run)
    for size in (250, 245, 240):  # too long for the name itself, the episode log, ...
        argv = EVALUATE + ["--agent", "random", "--out", str(tmp_path), "--name", "n" * size]
        fails_cleanly(capsys, argv, "--name", "bytes")
    argv = ["tournament", "--game", "castell", "--agent", "random,heuristic", "--games", "1"]
    argv += ["--out", str(tmp_path), "--name", "n" * 250]
    fails_cleanly(capsys, argv, "--name", "bytes")
    assert list(tmp_path.iterdir()) == []


def test_evaluate_records_of_an_agent_named_by_a_long_path_are_written(tmp_path, capsys):
    """A record's file name holds the agent's spec; a policy in deep folders makes it longer
    than a file system takes, so it is shortened (and kept apart by a hash)."""
    deep = tmp_path.joinpath(*["folder" * 20] * 3)
    deep.mkdir(parents=True)
    policy = deep / "policy.json"
    shutil.copy(ROOT / "models" / "castle_siege_very_hard_linear" / "policy.json", policy)
    out = tmp_path / "out"
    argv = EVALUATE + ["--agent", f"linear:{policy}", "--out", str(out), "--name", "run"]
    assert main(argv) == 0, capsys.readouterr().err
    (record,) = (out / "run-records").iterdir()
    assert len(record.name) <= 255 and record.name.endswith("-seed0.json")
    assert main(["replay", str(record), "--no-html", "--quiet"]) == 0


def test_a_fifo_handed_as_json_is_named_so_not_called_missing(tmp_path):
    from castle_envs.experiments.common import read_json, read_json_lines

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # with no writer, a plain open would wait forever
    for read in (read_json, read_json_lines):
        with pytest.raises(ValueError, match="fifo': not a regular file$"):
            read(fifo, "--summaries")
        with pytest.raises(ValueError, match="no such file$"):
            read(tmp_path / "missing", "--summaries")
