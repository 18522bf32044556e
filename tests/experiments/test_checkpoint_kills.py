"""A trainer killed (SIGKILL: no handler runs) at any point of writing a checkpoint resumes
from the last whole checkpoint, with the counters of that checkpoint, and ends as an
uninterrupted run does. The kill is real: a child process runs the harness's toy trainer
and kills itself at the chosen step; this process resumes what it left."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from castle_envs.experiments.run_folder import RunFolder, run_chunked

from tests.experiments.test_run_folder import Toy, _config

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import os, shutil, signal, sys
from pathlib import Path
from castle_envs.experiments.run_folder import RunFolder, run_chunked
from tests.experiments.test_run_folder import Toy, _config

run, point, nth = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
seen = {}

def counted(name):
    seen[name] = seen.get(name, 0) + 1
    return seen[name] == nth

def kill():
    os.kill(os.getpid(), signal.SIGKILL)

class Writer(Toy):
    # two files a checkpoint, so that a kill can fall between them
    def write_checkpoint(self, folder):
        super().write_checkpoint(folder)
        if point == "between the checkpoint's files" and counted(point):
            kill()
        (folder / "more.json").write_text("{}")

rename, rmtree, replace = Path.rename, shutil.rmtree, os.replace

def renamed(self, target):
    out = rename(self, target)
    if point == "after the swap" and Path(target).name == "latest" and counted(point):
        kill()
    return out

def before_rename(self, target):
    if point == "between the renames" and Path(target).name == "latest" and counted(point):
        kill()
    return renamed(self, target)

def removed(path, *args, **kwargs):
    if point == "removing the old one" and Path(path).name == "latest.old" and counted(point):
        kill()
    return rmtree(path, *args, **kwargs)

def replaced(source, target, *args, **kwargs):
    if point == "writing progress.json" and Path(target).name == "progress.json" and counted(point):
        kill()
    return replace(source, target, *args, **kwargs)

append_eval = RunFolder.append_eval

def appended(self, row):
    append_eval(self, row)
    if point == "after an evaluation's row" and counted(point):
        kill()

Path.rename, shutil.rmtree, os.replace = before_rename, removed, replaced
RunFolder.append_eval = appended
run_chunked(Writer(), RunFolder.create(_config(), run))
"""

POINTS = [
    "between the checkpoint's files",
    "between the renames",
    "after the swap",
    "removing the old one",
    "writing progress.json",
    "after an evaluation's row",  # before the checkpoint of its chunk
]


def _curve(run):
    """eval.csv without its wall clock: the evaluations, in order."""
    lines = (run / "eval.csv").read_text().splitlines()
    return [line.split(",", 2)[::2] for line in lines]


@pytest.mark.parametrize("nth", [1, 3])
@pytest.mark.parametrize("point", POINTS)
def test_a_kill_while_checkpointing_resumes_from_the_last_whole_checkpoint(tmp_path, point, nth):
    whole = Toy()
    run_chunked(whole, RunFolder.create(_config(), tmp_path / "whole"))
    run = tmp_path / "killed"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(run), point, str(nth)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert not (run / "summary.json").exists()
    folder = RunFolder.open(run)
    if not (folder.latest / "state.json").is_file():
        # killed before its first checkpoint was whole: nothing to resume (said so)
        first = (
            "between the checkpoint's files",
            "between the renames",
            "after an evaluation's row",
        )
        assert point in first and nth == 1
        with pytest.raises(FileNotFoundError, match="no checkpoints/latest"):
            folder.latest_checkpoint("state.json")
        return
    # the checkpoint and its counters agree: the toy's sum is that of the chunks counted
    resumed = Toy()
    summary = run_chunked(resumed, folder)
    assert summary["num_timesteps"] == 12 and "interrupted" not in summary
    assert resumed.total == whole.total
    progress = json.loads((run / "progress.json").read_text())
    assert progress["updates"] == 6 and progress["checkpoints"] == 6
    left = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert left == ["latest"], left
    # an evaluation the resumed run does again is in the curve once
    assert _curve(run) == _curve(tmp_path / "whole")


def test_progress_kept_only_in_the_checkpoint_is_the_runs(tmp_path):
    """What a kill right after the swap leaves: the counters in the checkpoint alone."""
    folder = RunFolder.create(_config(), tmp_path / "run")
    assert not folder.has_progress
    folder.save_checkpoint(
        lambda d: (d / "state.json").write_text("{}"),
        {"num_timesteps": 2, "wall_seconds": 1.5, "_private": 1},
    )
    assert folder.has_progress and not (folder / "progress.json").exists()
    progress = RunFolder.open(folder.path).read_progress({"num_timesteps": int})
    assert progress == {"num_timesteps": 2, "wall_seconds": 1.5}
