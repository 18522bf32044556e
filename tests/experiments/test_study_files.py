"""The study scripts check the files they are told to write, and the records they read,
before any work starts: a file they did not write is never overwritten or appended to, and
a damaged record is one line and exit 2, not a traceback hours into a sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from castle_envs.experiments.studies import records

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "experiments" / "studies"
MODEL = str(ROOT / "models" / "castle_siege_ntuple_value")

# (script, its arguments: FILE is the file it is told to write)
WRITERS = [
    ("castellion_winnability/undecided.py", ["--out", "FILE"]),
    ("castellion_winnability/agents_per_deal.py", ["--out", "FILE"]),
    ("castellion_winnability/loss_proofs.py", ["--study", "none.jsonl", "--out", "FILE"]),
    (
        "castellion_winnability/agent_wins.py",
        ["--level", "menace", "--seeds", "1", "--journal", "FILE"],
    ),
    (
        "castellion_winnability/nested_wins.py",
        ["--level", "menace", "--seeds", "1", "--journal", "FILE"],
    ),
    ("castellion_winnability/seeing_wins.py", ["--seeds", "1", "--journal", "FILE"]),
    ("castellion_winnability/pass_first_ordeal.py", ["--seeds", "1", "--journal", "FILE"]),
    ("castellion_planner_tune/tune.py", ["school", "20000000", "1", "--out", "FILE"]),
    ("castle_siege_ismcts/combine.py", ["none.csv", "--json", "FILE"]),
    ("castle_siege_ismcts/endgame_budget.py", ["profile", "best", "very_hard", "FILE", "1"]),
    ("castle_siege_ismcts/endgame_budget.py", ["time", "best", "very_hard", "FILE", "1"]),
    ("castle_siege_ismcts/endgame_replay_lost.py", ["play", "best", "FILE", "1"]),
    ("castle_siege_ntuple/evaluate_in_kernel.py", [MODEL, "FILE"]),
    ("castle_siege_ntuple/pilot.py", [MODEL, "--seed", "20000000", "--out", "FILE"]),
    ("castle_siege_ntuple/search_deals.py", ["random", "FILE", "--deals", "1"]),
    ("benchmark/play_refs.py", ["castle-siege", "hard", "random", "20000000", "1", "FILE"]),
    ("castle_siege_winnability/open_deals.py", ["53", "l2-heuristic", "FILE", "1"]),
]


def _run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(STUDIES / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("script,args", WRITERS, ids=[f"{s}:{a[0]}" for s, a in WRITERS])
def test_a_study_script_refuses_to_write_a_file_it_did_not_write(tmp_path, script, args):
    notes = tmp_path / "notes.txt"
    notes.write_text("my own notes, not a study's\n")
    done = _run(script, [str(notes) if a == "FILE" else a for a in args], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "notes.txt" in lines[0] and "Traceback" not in done.stderr
    assert notes.read_text() == "my own notes, not a study's\n"


def test_a_damaged_journal_line_is_named_before_any_work(tmp_path):
    journal = tmp_path / "agent_wins.jsonl"
    first = {"level": "menace", "agent": "pimc", "seed": 1, "agent_seed": 0, "won": False}
    journal.write_text(json.dumps(first) + "\n" + '{"seed": 3}\n')
    before = journal.read_bytes()
    done = _run(
        "castellion_winnability/agent_wins.py",
        ["--level", "menace", "--seeds", "1", "--journal", str(journal)],
        tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "line 2" in done.stderr and "Traceback" not in done.stderr
    assert journal.read_bytes() == before


def test_a_journal_cut_by_a_kill_drops_its_last_line_and_is_appended_to_cleanly(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"seed": 1, "won": 0}\n{"seed": 2, "wo')
    assert records.journal(path, "--journal", ("seed", "won")) == [{"seed": 1, "won": 0}]
    assert path.read_text() == '{"seed": 1, "won": 0}\n'


def test_a_journal_the_script_wrote_is_read_back(tmp_path):
    path = tmp_path / "j.jsonl"
    rows = [{"seed": s, "settings": {"a": 1}, "won": s == 2} for s in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert records.journal(path, "--journal", ("seed", "settings", "won")) == rows
    assert records.journal(tmp_path / "new.jsonl", "--journal", ("seed",)) == []


def test_records_are_read_gzipped_and_a_wrong_record_is_refused(tmp_path, capsys):
    import gzip

    path = tmp_path / "study.jsonl"
    with gzip.open(path.with_name("study.jsonl.gz"), "wt") as f:
        f.write(json.dumps({"level": "school", "seed": 4, "verdict": "unknown"}) + "\n")
        f.write("[1, 2]\n")
    with pytest.raises(SystemExit) as stop:
        records.read_records(path, "--study", ("level", "seed", "verdict"))
    assert stop.value.code == 2
    assert "line 2" in capsys.readouterr().err
    with gzip.open(path.with_name("study.jsonl.gz"), "wt") as f:
        f.write(json.dumps({"level": "school", "seed": 4, "verdict": "unknown"}) + "\n")
    assert records.read_records(path, "--study", ("seed",))[0]["seed"] == 4


@pytest.mark.parametrize("nesting", ["[" * 100_000, '{"a":' * 100_000])
def test_a_deeply_nested_record_is_refused(tmp_path, capsys, nesting):
    path = tmp_path / "deep.jsonl"
    path.write_text(nesting + "\n")
    with pytest.raises(SystemExit):
        records.read_records(path, "--study")
    assert "deep.jsonl" in capsys.readouterr().err


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result: list = []

    def read() -> None:
        try:
            records.read_records(fifo, "--study")
        except SystemExit as stop:
            result.append(stop.code)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    if reader.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "w"):
            pass
        reader.join(5)
        pytest.fail("read_records waited on a FIFO")
    assert result == [2]
    assert "not a regular file" in capsys.readouterr().err
