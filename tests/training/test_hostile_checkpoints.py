"""``castle-envs train --resume`` of a move-PPO run whose checkpoint was edited, damaged or
replaced: one line naming the file and what is wrong (exit 2), never a crash of the
compiled kernels (SIGSEGV, SIGBUS, SIGABRT), a traceback or a hang."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from castle_envs.experiments.config import load_config
from castle_envs.experiments.train_moves import run_training

from castle_envs.castle_siege import kernel as K

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.train

TINY = Path(__file__).resolve().parents[2] / "configs" / "tiny" / "castle_siege_move_ppo.yaml"


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> Path:
    """A run stopped half way (128 of 256 steps), its checkpoint to resume from."""
    run = tmp_path_factory.mktemp("runs") / "run"
    run_training(load_config(TINY), run_dir=run, stop_after=128)
    return run


def _resume(run: Path) -> subprocess.CompletedProcess:
    # its own process: a kernel reading outside its arrays kills the process it runs in
    return subprocess.run(
        [sys.executable, "-m", "castle_envs.experiments.cli", "train", "--resume", str(run)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _edited(stopped: Path, tmp_path: Path, name: str, edit) -> Path:
    run = tmp_path / "run"
    shutil.copytree(stopped, run)
    path = run / "checkpoints" / "latest" / name
    edit(path)
    return run


def _tensors(change):
    def edit(path: Path) -> None:
        tensors = torch.load(path, weights_only=True)
        change(tensors)
        torch.save(tensors, path)

    return edit


def _set(key: str, where, value):
    def change(tensors: dict) -> None:
        array = tensors[key].to(torch.int64)
        array[where] = value
        tensors[key] = array

    return _tensors(change)


def _adam_moment(tensors: dict) -> None:
    tensors["state"][0]["exp_avg"] = torch.zeros(3, 3)


def _nan_weight(tensors: dict) -> None:
    tensors["value.weight"][0, 0] = float("nan")


CASES = [
    ("envs.pt", "negative card ids", _set("cards", (slice(None), K.DECK), -100), ["env 0"]),
    ("envs.pt", "card ids past 52", _set("cards", (slice(None), K.HAND), 60), ["env 0"]),
    ("envs.pt", "large first columns", _set("cards", (slice(None), slice(0, 8)), 120), ["env 0"]),
    ("envs.pt", "a huge hand size", _set("ints", (slice(None), K.HSIZE), 2**30), ["env 0"]),
    ("envs.pt", "a huge column length", _set("ints", (slice(None), K.CLEN), 10**5), ["env 0"]),
    ("envs.pt", "ints wider than a row", _set("cards", (0, K.HAND), 2**40), ["outside int8"]),
    ("envs.pt", "a damaged pickle", lambda p: p.write_bytes(b"\x80\x02."), ["not a plain file"]),
    ("optimizer.pt", "an Adam moment of the wrong shape", _tensors(_adam_moment), ["exp_avg"]),
    ("policy.pt", "a NaN weight", _tensors(_nan_weight), ["NaN"]),
    ("envs.pt", "a FIFO", lambda p: (p.unlink(), os.mkfifo(p)), ["a FIFO"]),
]


@pytest.mark.parametrize("name, what, edit, words", CASES, ids=[c[1] for c in CASES])
def test_an_edited_checkpoint_is_refused_on_resume(stopped, tmp_path, name, what, edit, words):
    run = _edited(stopped, tmp_path, name, edit)
    done = _resume(run)
    lines = [line for line in done.stderr.splitlines() if line.strip() and "numba" not in line]
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert name in lines[0], lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


# --- a kill while a checkpoint is written ------------------------------------------------------
KILLER = """
import os, signal, sys
from pathlib import Path
import torch
from castle_envs.experiments.config import load_config
from castle_envs.experiments.train_moves import run_training

config, run, point = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
rename, save, saves = Path.rename, torch.save, []

def renamed(self, target):
    out = rename(self, target)
    if point == "after the first swap" and Path(target).name == "latest":
        os.kill(os.getpid(), signal.SIGKILL)
    return out

def saved(obj, path, *args, **kwargs):
    saves.append(Path(path).name)
    # the second checkpoint, half written: its network and optimizer, not its envs
    if point == "inside the second checkpoint" and saves.count("optimizer.pt") == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return save(obj, path, *args, **kwargs)

Path.rename, torch.save = renamed, saved
run_training(load_config(config), run_dir=run)
"""


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("runs") / "whole"
    run_training(load_config(TINY), run_dir=run)
    return run


@pytest.mark.parametrize("point", ["after the first swap", "inside the second checkpoint"])
def test_a_torch_trainer_killed_while_checkpointing_resumes_from_the_last_whole_one(
    whole, tmp_path, point
):
    from castle_envs.agents.learned.saved import load_tensors

    run = tmp_path / "killed"
    child = subprocess.run(
        [sys.executable, "-c", KILLER, str(TINY), str(run), point],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == -9, child.stderr[-2000:]
    summary = run_training(resume=run)
    assert summary["num_timesteps"] == 256 and not summary.get("stopped")
    for name in ("checkpoints/latest/policy.pt", "final_model/weights.pt"):
        a, b = load_tensors(whole / name), load_tensors(run / name)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name
