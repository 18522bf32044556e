"""``castle-envs solve --workers 2 --out F`` hands its work over as it goes and leaves
nothing behind when stopped: a run of 100,000 deals writes each deal to ``F`` as it is
solved (not when the run or a large chunk ends), and SIGTERM ends it with every worker
process gone and ``F`` holding whole records that a resume reads back."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from castle_envs.experiments import journal

from tests.experiments.processes import alive, descendants, wait_for

CLI = [sys.executable, "-m", "castle_envs.experiments.cli"]
SOLVE = ["solve", "--difficulty", "very_hard", "--budget", "2000", "--random-games", "0"]


def whole_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def solve_then_sigterm(out: Path, workers: int, lines: int) -> tuple[int, list[str], list]:
    """``solve`` of 100,000 deals into ``out``, sent SIGTERM once ``lines`` deals are in
    it: its exit status, its stderr's lines and its worker processes' ids."""
    argv = CLI + SOLVE + ["--deals", "100000", "--workers", str(workers), "--out", str(out)]
    proc = subprocess.Popen([*argv, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # the first deals reach the file while the run goes on; the limit covers compiling
        # the kernels in a fresh environment, not a speed
        saved = wait_for(lambda: whole_lines(out) >= lines or proc.poll() is not None, 600)
        assert saved and proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        workers_seen = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return proc.returncode, proc.stderr.read().decode().strip().splitlines(), workers_seen


def test_sigterm_leaves_no_worker_and_keeps_the_deals_solved(tmp_path):
    out = tmp_path / "results.jsonl"
    code, said, workers = solve_then_sigterm(out, workers=2, lines=3)
    assert len(workers) >= 2
    assert code == 143  # 128 + SIGTERM, as the signal itself would give
    assert (
        said[-1]
        == f"castle-envs solve: stopped by SIGTERM; the deals solved are in {out} (--resume goes on)"
    )
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 30), [
        pid for pid in workers if alive(pid)
    ]
    records = journal.read(str(out))
    assert len(records) >= 3 and all(r["verdict"] for r in records)
    # what was written reads back: a resume over the first seeds keeps them
    seeds = sorted(r["seed"] for r in records)
    run = subprocess.run(
        CLI + SOLVE + ["--deals", str(seeds[0] + 1), "--out", str(out), "--resume", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["deals"] == seeds[0] + 1


def test_sigterm_stops_a_run_in_one_process_with_its_line(tmp_path):
    out = tmp_path / "results.jsonl"
    code, said, _ = solve_then_sigterm(out, workers=1, lines=2)
    assert code == 143
    assert said[-1].startswith("castle-envs solve: stopped by SIGTERM; the deals solved are in")
    assert len(journal.read(str(out))) >= 2
