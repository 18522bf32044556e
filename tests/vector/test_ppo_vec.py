"""The CleanRL-style PPO script runs on the batched env and logs to TensorBoard."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("tensorboard")

pytestmark = pytest.mark.train


@pytest.mark.parametrize("algo", ["ppo_vec", "sb3"])
def test_short_training_run_writes_curve_and_tensorboard_events(tmp_path, algo):
    if algo == "sb3":
        pytest.importorskip("sb3_contrib")
    from castle_envs.experiments import ppo_vec

    curve = tmp_path / "curve.json"
    ppo_vec.main(
        [
            "--algo",
            algo,
            "--total-timesteps",
            "2048",
            "--num-envs",
            "16",
            "--num-steps",
            "64",
            "--hidden",
            "32",
            "--logdir",
            str(tmp_path / "runs"),
            "--curve",
            str(curve),
        ]
    )
    result = json.loads(curve.read_text())
    assert result["steps"] >= 2048 and result["points"]
    assert all(0.0 <= p["win_rate"] <= 1.0 and p["episodes"] > 0 for p in result["points"])
    assert list((tmp_path / "runs").glob("*/events.out.tfevents.*"))


@pytest.mark.parametrize("algo", ["ppo_vec", "sb3"])
def test_runs_at_least_the_steps_asked_and_says_how_many(tmp_path, algo, capsys):
    """100 steps in rollouts of 4 envs x 8 steps: 4 iterations, 128 steps (not 3, 96)."""
    if algo == "sb3":
        pytest.importorskip("sb3_contrib")
    from castle_envs.experiments import ppo_vec

    curve = tmp_path / "curve.json"
    args = ["--algo", algo, "--total-timesteps", "100", "--num-envs", "4", "--num-steps", "8"]
    args += ["--hidden", "8", "--logdir", str(tmp_path / "runs"), "--curve", str(curve)]
    ppo_vec.main(args)
    assert json.loads(curve.read_text())["steps"] == 128
    assert "4 iterations of 32 env steps" in capsys.readouterr().out


def test_refuses_zero_timesteps():
    from castle_envs.experiments import ppo_vec

    with pytest.raises(SystemExit):
        ppo_vec.parse_args(["--total-timesteps", "0"])
