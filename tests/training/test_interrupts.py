"""Interrupted training loses nothing: SIGTERM checkpoints like Ctrl-C, a checkpoint counts
only trained steps, wall time and random streams carry over, subprocess envs close quietly."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytestmark = pytest.mark.train

from castle_envs.experiments.config import resolve  # noqa: E402

ROLLOUT = 64 * 2  # n_steps x n_envs below


def _config(tmp_path, **extra) -> Path:
    path = tmp_path / "long.yaml"
    raw = {
        "name": "long",
        "game": "castle-siege",
        "variant": {"difficulty": "easy"},
        "total_timesteps": 10_000_000,
        "n_envs": 2,
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "policy": {"net_arch": [16]},
        "eval": {"every_steps": 10_000_000, "episodes": 1},
        "checkpoint": {"every_steps": ROLLOUT},
        **extra,
    }
    import yaml

    path.write_text(yaml.safe_dump(raw))
    return path


def _as_from_a_terminal():
    """The child starts with default signal handling, as a command typed in a shell does: a
    pytest worker may have inherited or set an ignored or blocked SIGINT from earlier tests
    (threads of libraries loaded before), and a child inherits both, so Ctrl-C would never
    reach the run (the test then timed out in the full suite only)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _interrupt(tmp_path, sig, **extra):
    """Start ``castle-envs train`` on a long run, wait for a few checkpoints, send ``sig``."""
    run_dir = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "castle_envs.experiments.cli",
        "train",
        "--config",
        str(_config(tmp_path, **extra)),
        "--run-dir",
        str(run_dir),
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    deadline = time.time() + 120
    progress = run_dir / "progress.json"
    while time.time() < deadline:
        if progress.is_file() and json.loads(progress.read_text())["num_timesteps"] >= 3 * ROLLOUT:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail(f"no checkpoint in time: {proc.communicate()}")
    time.sleep(0.3)  # most likely in the middle of a rollout now
    # Ctrl-C reaches the whole process group (subprocess workers included); SIGTERM the parent
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err, run_dir


@pytest.mark.slow
def test_sigterm_checkpoints_trained_steps_and_resume_continues(tmp_path):
    code, out, err, run_dir = _interrupt(tmp_path, signal.SIGTERM)
    assert code == 130, err
    assert "interrupted: checkpointed after" in out and "Traceback" not in err
    progress = json.loads((run_dir / "progress.json").read_text())
    steps = progress["num_timesteps"]
    # only whole rollouts are trained on: the count is a multiple of the rollout size
    assert steps >= 3 * ROLLOUT and steps % ROLLOUT == 0, steps
    assert progress["wall_before"] > 0
    ckpt = run_dir / "checkpoints" / "latest"
    assert {p.name for p in ckpt.iterdir()} == {
        "policy.pt",
        "optimizer.pt",
        "rng.pt",
        "envs.json",
        "progress.json",
    }
    # the checkpoint's own progress is the run folder's (nothing trained since)
    assert json.loads((ckpt / "progress.json").read_text()) == progress
    saved_streams = json.loads((ckpt / "envs.json").read_text())["rng"]

    from castle_envs.experiments.config import load_config
    from castle_envs.experiments.train import build_model, load_checkpoint, make_vec_env

    config = load_config(run_dir / "config.yaml")
    env = make_vec_env(config)
    model = build_model(config, env, run_dir)
    load_checkpoint(model, run_dir, dict(progress))
    assert model.num_timesteps == steps
    assert [g.bit_generator.state for g in env.get_attr("np_random")] == saved_streams
    env.close()

    # resume to a total a little past the interruption: the count and the clock carry over
    raw = (
        (run_dir / "config.yaml")
        .read_text()
        .replace("total_timesteps: 10000000", f"total_timesteps: {steps + ROLLOUT}")
    )
    (run_dir / "config.yaml").write_text(raw)
    from castle_envs.experiments.train import train

    summary = train(resume=str(run_dir), progress_bar=False)
    assert summary["num_timesteps"] == steps + ROLLOUT
    assert summary["wall_seconds"] > progress["wall_before"]


@pytest.mark.slow
def test_ctrl_c_with_subprocess_envs_ends_without_a_traceback(tmp_path):
    code, out, err, run_dir = _interrupt(tmp_path, signal.SIGINT, vec_env="subproc")
    assert code == 130, err
    for bad in ("Traceback", "EOFError", "BrokenPipeError"):
        assert bad not in err, err
    assert json.loads((run_dir / "progress.json").read_text())["num_timesteps"] % ROLLOUT == 0


def test_resume_does_not_reseed_the_training_envs(tmp_path):
    """The deals after a resume continue the training envs' streams: they are not the deals
    a fresh run starts with."""
    from castle_envs.experiments.train import TRAIN_SEED_BASE, train

    config = resolve(
        {
            "game": "castle-siege",
            "variant": {"difficulty": "easy"},
            "total_timesteps": 256,
            "n_envs": 1,
            "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1},
            "policy": {"net_arch": [16]},
            "eval": {"every_steps": 10_000, "episodes": 1},
            "checkpoint": {"every_steps": 128},
        }
    )
    train(config, run_dir=tmp_path / "part", progress_bar=False, stop_after=128)
    streams = json.loads((tmp_path / "part" / "checkpoints" / "latest" / "envs.json").read_text())[
        "rng"
    ]
    fresh = np.random.default_rng(TRAIN_SEED_BASE).bit_generator.state
    assert streams[0] != fresh  # the stream moved on through the first rollout's deals
    assert train(resume=str(tmp_path / "part"), progress_bar=False)["num_timesteps"] == 256


def test_training_deals_are_far_from_the_evaluation_deals():
    from castle_envs.experiments.train import TRAIN_SEED_BASE

    assert TRAIN_SEED_BASE >= 20_000_000


class _SlowBigStep(gym.Env):
    """An env whose step takes a while and returns more than a pipe's buffer holds."""

    observation_space = gym.spaces.Box(0, 1, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        return np.zeros(4, np.float32), {}

    def step(self, action):
        time.sleep(1.0)
        return np.zeros(4, np.float32), 0.0, False, False, {"big": np.zeros(200_000)}


def _slow_big_env():
    return _SlowBigStep()


def test_closing_after_an_interrupt_takes_a_step_result_larger_than_the_pipe():
    """An interrupt can leave a worker in the middle of a step whose result is larger than
    the pipe's buffer: its send blocks until the result is read, so a close that only joins
    the worker would hang."""
    import threading

    from castle_envs.experiments.train import _close_quietly
    from stable_baselines3.common.vec_env import SubprocVecEnv

    env = SubprocVecEnv([_slow_big_env])
    env.reset()
    env.step_async(np.array([0]))  # the worker is now stepping; the interrupt comes here
    closer = threading.Thread(target=_close_quietly, args=(env, True), daemon=True)
    closer.start()
    closer.join(timeout=30)
    assert not closer.is_alive(), "closing hung on the worker's unread step result"
    assert env.closed and not any(p.is_alive() for p in env.processes)
