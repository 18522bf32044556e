"""Long jobs survive interruption: ``solve --out``, ``evaluate`` and CEM training
killed at any moment (SIGTERM, SIGKILL) in a subprocess, then resumed, end with the same
records as a run that was never stopped, nothing lost or counted twice; and a JSON Lines file
whose last line a crash cut is recovered (the line dropped with a warning, its work redone)."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from castle_envs.experiments import journal
from hypothesis import given, settings
from hypothesis import strategies as st

CLI = [sys.executable, "-m", "castle_envs.experiments.cli"]
# a node budget (deterministic records) large enough for a deal to take a while: the kill
# must land between deals 2 and 6
SOLVE = [
    "solve",
    "--difficulty",
    "very_hard",
    "--deals",
    "6",
    "--budget",
    "1000000",
    "--random-games",
    "0",
    "--workers",
    "1",
    "--json",
]
EVALUATE = [
    "evaluate",
    "--game",
    "castle-siege",
    "--difficulty",
    "easy",
    "--agent",
    "mcts:sims=60",
    "--episodes",
    "12",
    "--workers",
    "1",
    "--name",
    "run",
    "--no-plot",
    "--no-progress",
    "--record",
    "2",
]


def cli(args, **kw):
    return subprocess.run(CLI + args, capture_output=True, text=True, timeout=300, **kw)


def complete_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_when(args, ready, sig, timeout=120):
    """Start the command, send ``sig`` once ``ready()`` holds; True when it was cut short."""
    proc = subprocess.Popen(CLI + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    end = time.time() + timeout
    while not ready() and proc.poll() is None and time.time() < end:
        time.sleep(0.01)
    cut = proc.poll() is None
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return cut


def timeless(record):
    return {k: v for k, v in record.items() if "seconds" not in k}


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("solve") / "all.jsonl"
    assert cli(SOLVE + ["--out", str(out)]).returncode == 0
    return journal.read(str(out))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_solve_killed_then_resumed_gives_the_same_records(sig, solved, tmp_path):
    out = str(tmp_path / "cut.jsonl")
    assert kill_when(SOLVE + ["--out", out], lambda: complete_lines(out) >= 2, sig)
    assert 2 <= complete_lines(out) < 6
    run = cli(SOLVE + ["--out", out, "--resume"])
    assert run.returncode == 0, run.stderr
    records = sorted((timeless(r) for r in journal.read(out)), key=lambda r: r["seed"])
    assert records == [timeless(r) for r in solved]  # every deal once, as never stopped
    assert json.loads(run.stdout)["deals"] == 6


def test_solve_recovers_a_last_line_cut_by_a_crash(solved, tmp_path):
    out = tmp_path / "cut.jsonl"
    lines = [json.dumps(r) for r in solved]
    out.write_text("\n".join(lines[:4]) + "\n" + lines[4][: len(lines[4]) // 2])
    run = cli(SOLVE + ["--out", str(out), "--resume"])
    assert run.returncode == 0, run.stderr
    assert "last line was cut off" in run.stderr
    records = sorted((timeless(r) for r in journal.read(str(out))), key=lambda r: r["seed"])
    assert records == [timeless(r) for r in solved]
    assert out.read_bytes().endswith(b"\n")


def test_a_damaged_line_before_the_last_is_refused(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    with pytest.raises(journal.JournalError, match="line 2"):
        journal.read(str(path))


@settings(max_examples=40, deadline=None)
@given(
    records=st.lists(
        st.dictionaries(st.sampled_from("abc"), st.integers() | st.text(max_size=4), max_size=3),
        min_size=1,
        max_size=6,
    ),
    cut=st.floats(0, 1, exclude_max=True),
)
def test_a_file_cut_anywhere_reads_back_as_its_whole_lines(tmp_path_factory, records, cut):
    """A crash mid-write leaves a prefix of the file: reading it gives exactly the records
    whose line was written whole, and leaves the file ending at the last of them."""
    path = tmp_path_factory.mktemp("j") / "j.jsonl"
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    at = int(cut * len(data))
    path.write_bytes(data[:at])
    whole = data[:at].count(b"\n")
    assert journal.read(str(path)) == records[:whole]
    assert path.read_bytes() == b"".join(json.dumps(r).encode() + b"\n" for r in records[:whole])
    with open(path, "a") as f:  # and the next line starts cleanly
        journal.append(f, {"next": 1})
    assert journal.read(str(path)) == records[:whole] + [{"next": 1}]


def _evaluate_results(folder):
    summary = json.loads((folder / "run.json").read_text())
    for r in summary["results"]:
        r.pop("seconds")
    summary.pop("provenance")
    deals = (folder / "run-deals.csv").read_text()
    records = sorted(p.name + p.read_text() for p in (folder / "run-records").iterdir())
    return summary, deals, records


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    out = tmp_path_factory.mktemp("evaluate")
    assert cli(EVALUATE + ["--out", str(out)]).returncode == 0
    return _evaluate_results(out)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_evaluate_killed_then_resumed_gives_the_same_results(sig, evaluated, tmp_path):
    log = str(tmp_path / "run-episodes.jsonl")
    assert kill_when(EVALUATE + ["--out", str(tmp_path)], lambda: complete_lines(log) >= 2, sig)
    assert 2 <= complete_lines(log) < 13  # the settings line and some episodes
    assert not (tmp_path / "run.json").exists()
    run = cli(EVALUATE + ["--out", str(tmp_path), "--resume"])
    assert run.returncode == 0, run.stderr
    assert _evaluate_results(tmp_path) == evaluated
    episodes = [line["episode"]["index"] for line in journal.read(log)[1:]]
    assert sorted(episodes) == list(range(12))  # each episode logged once


def test_evaluate_recovers_a_cut_episode_log_and_refuses_other_settings(evaluated, tmp_path):
    assert cli(EVALUATE + ["--out", str(tmp_path)]).returncode == 0
    log = tmp_path / "run-episodes.jsonl"
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - 40])  # the last episode's line cut
    (tmp_path / "run.json").unlink()
    run = cli(EVALUATE + ["--out", str(tmp_path), "--resume"])
    assert run.returncode == 0, run.stderr
    assert "last line was cut off" in run.stderr
    assert _evaluate_results(tmp_path) == evaluated
    other = [a if a != "12" else "13" for a in EVALUATE]
    bad = cli(other + ["--out", str(tmp_path), "--resume", "--name", "run"])
    assert bad.returncode == 2 and "other settings (episodes)" in bad.stderr


CEM = [
    "train",
    "--config",
    "configs/tiny/castle_siege_cem.yaml",
    "--no-progress",
    "--set",
    "cem.generations=4",
]


def _cem_results(run_dir):
    rows = list(csv.DictReader(open(run_dir / "history.csv")))
    for r in rows:
        r.pop("seconds")
    return rows, json.loads((run_dir / "policy.json").read_text())


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("cem") / "run"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = cli(CEM + ["--run-dir", str(run_dir)], cwd=root)
    assert run.returncode == 0, run.stderr
    return _cem_results(run_dir)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_cem_training_killed_then_resumed_gives_the_same_run(sig, trained, tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run_dir = tmp_path / "run"
    history = run_dir / "history.csv"
    os.chdir(root)
    assert kill_when(CEM + ["--run-dir", str(run_dir)], lambda: complete_lines(history) >= 2, sig)
    assert complete_lines(history) < 5
    run = cli(["train", "--resume", str(run_dir), "--no-progress"], cwd=root)
    assert run.returncode == 0, run.stderr
    assert _cem_results(run_dir) == trained  # every generation once, the same numbers


def test_cem_resume_drops_history_rows_the_checkpoint_lacks(trained, tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run_dir = tmp_path / "run"
    assert (
        cli(CEM + ["--run-dir", str(run_dir), "--set", "cem.generations=2"], cwd=root).returncode
        == 0
    )
    # a kill after generation 3's history row, before its checkpoint, then one mid-row
    config = (run_dir / "config.yaml").read_text().replace("generations: 2", "generations: 4")
    (run_dir / "config.yaml").write_text(config)
    with open(run_dir / "history.csv", "a") as f:
        f.write("3,999,999,1.0,0.5,0.5,0.5,0.5\n4,99")
    run = cli(["train", "--resume", str(run_dir), "--no-progress"], cwd=root)
    assert run.returncode == 0, run.stderr
    assert _cem_results(run_dir) == trained
