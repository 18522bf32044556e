"""``castle-envs evaluate`` and ``tournament`` with ``--workers 2`` stopped by SIGTERM: every
worker process is gone, the exit status is 143 (as the signal's own), and one line says what
was kept: evaluate's episode log (whole lines, which ``--resume`` reads back), or that a
tournament saved nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from castle_envs.experiments import journal

from tests.experiments.processes import alive, descendants, pool_workers, wait_for

CLI = [sys.executable, "-m", "castle_envs.experiments.cli"]


def stop_when(argv: list[str], ready) -> tuple[subprocess.Popen, str, set[int]]:
    """Start ``argv``, SIGTERM it once its pool runs and ``ready()`` holds; the process,
    what it wrote on stderr and the processes it had started."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # the limit covers starting the workers in a fresh environment, not a speed
        running = wait_for(
            lambda: (len(pool_workers(proc.pid)) >= 2 and ready()) or proc.poll() is not None,
            600,
        )
        assert running and proc.poll() is None, proc.communicate()[1]
        started = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc, err, started


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_evaluate_stopped_leaves_no_worker_and_says_where_the_episodes_are(tmp_path):
    log = tmp_path / "run-episodes.jsonl"
    argv = CLI + ["evaluate", "--game", "castle-siege", "--agent", "random", "--episodes"]
    argv += ["1000000", "--workers", "2", "--out", str(tmp_path), "--name", "run"]
    # the settings line and a first chunk of episodes
    proc, err, started = stop_when(argv + ["--no-progress"], lambda: lines(log) >= 2)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"castle-envs evaluate: stopped by SIGTERM; the episodes played are in {log} "
        "(the same command with --resume goes on)"
    )
    assert wait_for(lambda: not any(alive(pid) for pid in started), 30), [
        pid for pid in started if alive(pid)
    ]
    records = journal.read(str(log))  # whole lines only: none is cut
    assert "settings" in records[0] and all("episode" in r for r in records[1:])


def test_tournament_stopped_leaves_no_worker_and_says_nothing_was_saved(tmp_path):
    argv = CLI + ["tournament", "--game", "castle-rooms", "--agents", "random,heuristic"]
    argv += ["--games", "1000000", "--workers", "2", "--out", str(tmp_path), "--no-progress"]
    proc, err, started = stop_when(argv, lambda: True)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        "castle-envs tournament: stopped by SIGTERM; nothing was saved (a tournament writes "
        "its files when every game is played)"
    )
    assert wait_for(lambda: not any(alive(pid) for pid in started), 30), [
        pid for pid in started if alive(pid)
    ]
    assert list(tmp_path.iterdir()) == []
