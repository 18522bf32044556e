"""algo: move_ppo on a multi-player game (experiments/train_moves_aec.py): a short self-play
run writes its curve, TensorBoard and a model that plays as --agent model:DIR in a
tournament and in castle-envs play; --resume reproduces an uninterrupted run exactly."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
from castle_envs.agents.learned.saved import load_tensors, read_card
from castle_envs.agents.registry import make_agent
from castle_envs.experiments.cli import build_parser, main
from castle_envs.experiments.config import PPOConfig, load_config, resolve

from castle_envs.castle_rooms.observation import encode
from castle_envs.castle_rooms.rules import CastleRoomsState

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.train

from castle_envs.experiments import train_moves_aec  # noqa: E402  (needs torch)

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny" / "castle_rooms_move_ppo.yaml"


def _weights(run_dir):
    return load_tensors(run_dir / "checkpoints" / "latest" / "policy.pt")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("rooms") / "run"
    summary = train_moves_aec.run_training(load_config(TINY), run_dir=run)
    return run, summary


def test_a_run_writes_its_curve_tensorboard_and_a_model_that_plays(tiny_run):
    run, summary = tiny_run
    assert summary["num_timesteps"] >= 400
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("steps,wall_seconds") and len(rows) >= 3
    assert list((run / "tb").iterdir())
    progress = json.loads((run / "progress.json").read_text())
    assert progress["games"] == 4 * progress["updates"] and progress["snapshots"] >= 2
    card = read_card(run / "final_model")
    assert card["kind"] == "move_policy" and card["game"] == "castle-rooms"
    assert card["variant"] == {"num_players": 2}
    agent = make_agent(f"model:{run / 'final_model'}", "castle-rooms", seed=0)
    state = CastleRoomsState.deal(2, np.random.default_rng(20_000_123))
    while not state.is_terminal():
        # the same move from the encoded observation, the env's dict, or the state alone
        a = agent.act(encode(state, state.player), state.legal_action_mask(), state.clone())
        assert (
            a
            == agent.act(None, None, state.clone())
            == agent.act({"observation": encode(state, state.player)}, None, state.clone())
        )
        assert state.legal_action_mask()[a]
        state.apply_action(a)


def test_the_model_plays_in_a_tournament_and_in_play(tiny_run, tmp_path, capsys):
    run, _ = tiny_run
    model = f"model:{run / 'final_model'}"
    assert (
        main(
            [
                "tournament",
                "--game",
                "castle-rooms",
                "--players",
                "2",
                "--agents",
                f"{model},heuristic,random",
                "--games",
                "6",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
                "--no-progress",
                "--no-plot",
            ]
        )
        == 0
    )
    assert "heuristic" in capsys.readouterr().out
    from castle_envs.experiments.play import run as play

    args = build_parser().parse_args(
        ["play", "castle-rooms", "--players", "2", "--seed", "3", "--human", "--opponent", model]
    )
    out = io.StringIO()
    assert play(args, stdin=io.StringIO(""), stdout=out) == 0
    assert "game over" in out.getvalue()


def test_evaluation_plays_the_tournaments_games(tiny_run):
    from castle_envs.experiments.tournament import tournament

    run, _ = tiny_run
    config = load_config(run / "config.yaml")
    agent = make_agent(f"model:{run / 'final_model'}", "castle-rooms")
    result = train_moves_aec.evaluate(agent.net, config, 12, 1_000_000)
    assert result == train_moves_aec.evaluate(agent.net, config, 12, 1_000_000)
    # the batched greedy games are the ones castle-envs tournament plays, game by game
    spec = f"model:{run / 'final_model'}"
    games = tournament("castle-rooms", 2, [spec, "heuristic"], 12, seed=1_000_000, workers=1)
    row = next(r for r in games["results"] if r["agent"] == spec)
    assert (row["seats_played"], row["wins"]) == (12, result["wins"])
    assert row["mean_return"] == pytest.approx(result["mean_return"])


def test_resume_reproduces_an_uninterrupted_run(tmp_path):
    config = load_config(TINY)
    whole = train_moves_aec.run_training(config, run_dir=tmp_path / "whole")
    part = train_moves_aec.run_training(config, run_dir=tmp_path / "part", stop_after=200)
    assert part["stopped"] and 200 <= part["num_timesteps"] < whole["num_timesteps"]
    resumed = train_moves_aec.run_training(resume=tmp_path / "part")
    assert resumed["num_timesteps"] == whole["num_timesteps"]
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "part")
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    pool_a = load_tensors(tmp_path / "whole" / "checkpoints" / "latest" / "pool.pt")
    pool_b = load_tensors(tmp_path / "part" / "checkpoints" / "latest" / "pool.pt")
    assert pool_a.keys() == pool_b.keys() and pool_a
    assert all(torch.equal(pool_a[k], pool_b[k]) for k in pool_a)


def test_cli_trains_and_resumes(tmp_path, capsys):
    run = tmp_path / "cli"
    assert (
        main(
            [
                "train",
                "--config",
                str(TINY),
                "--run-dir",
                str(run),
                "--set",
                "total_timesteps=100",
                "--set",
                "eval.episodes=2",
            ]
        )
        == 0
    )
    done = json.loads(capsys.readouterr().out)["num_timesteps"]
    assert done >= 100
    assert main(["train", "--resume", str(run)]) == 0  # already done: nothing to add
    assert json.loads(capsys.readouterr().out)["num_timesteps"] == done


@pytest.mark.parametrize(
    "change, message",
    [
        ({"opponents": ["nobody"]}, "unknown agent 'nobody'"),
        ({"eval": {"opponent": "nobody"}}, "unknown agent 'nobody'"),
        ({"opponents": [], "self_play": {"enabled": False}}, "self_play"),
        ({"pretrain": {"agent": "heuristic", "episodes": 1}}, "solitaire"),
    ],
)
def test_bad_configs_name_the_key(change, message):
    raw = {
        "algo": "move_ppo",
        "game": "castle-rooms",
        "variant": {"num_players": 2},
        "seed": 20_000_000,
        **change,
    }
    with pytest.raises(ValueError, match=message):
        resolve(raw)


def test_bench_learners_reports_both_castle_rooms_learners(capsys):
    pytest.importorskip("sb3_contrib")
    assert (
        main(
            [
                "bench",
                "castle-rooms",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "",
                "--no-peer",
                "--learners",
                "--learner-steps",
                "64",
                "--json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    learners = next(r for r in rows if "learners" in r)
    assert learners["game"] == "castle-rooms"
    for algo in ("move_ppo", "maskable_ppo"):
        assert learners["learners"][algo]["steps"] >= 64
        assert learners["learners"][algo]["steps_per_s"] > 0


def test_a_minibatch_remainder_of_one_position_is_left_out_not_turned_into_nan():
    # whole-game batches need not divide by batch_size; one position alone would normalise
    # its advantage by a standard deviation of nothing (NaN), which once broke a long run
    from castle_envs.agents.learned import move_policy
    from castle_envs.experiments.train_moves import ppo_epochs

    torch.manual_seed(0)
    net = move_policy.build_net(4, 3, 8, 0)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    counts = torch.tensor([2, 3, 1, 2, 2])
    mask = torch.arange(3)[None, :] < counts[:, None]
    rows = torch.rand(int(counts.sum()), 3)
    ppo = PPOConfig(
        n_epochs=3, batch_size=4, clip_range=0.2, vf_coef=0.5, ent_coef=0.0, max_grad_norm=0.5
    )
    stats = ppo_epochs(
        net,
        optimizer,
        ppo,
        torch.rand(5, 4),
        mask,
        rows,
        torch.zeros(5, dtype=torch.long),
        torch.full((5,), -1.0),
        torch.randn(5),
        torch.randn(5),
    )
    assert len(stats) == 3 and np.isfinite(stats).all()
    assert all(torch.isfinite(p).all() for p in net.parameters())


def test_castell_trains_through_the_same_self_play_path(tmp_path):
    config = load_config(
        TINY,
        [
            "game=castell",
            "n_envs=2",
            "total_timesteps=1",
            "eval.episodes=2",
            "self_play.fixed_opponent_share=1.0",
        ],
    )
    summary = train_moves_aec.run_training(config, run_dir=tmp_path / "castell")
    assert summary["num_timesteps"] > 100  # two whole games of decisions
    card = read_card(tmp_path / "castell" / "final_model")
    assert card["game"] == "castell" and card["policy"]["num_features"] == 61
    agent = make_agent(f"model:{tmp_path / 'castell' / 'final_model'}", "castell")
    from castle_envs.castell.rules import State

    state = State.deal(np.random.default_rng(20_000_009), 2)
    for _ in range(40):
        action = agent.act(None, state.legal_action_mask(), state.clone())
        assert state.legal_action_mask()[action]
        state.apply_action(action)


def test_resume_refuses_a_pool_whose_snapshots_are_not_numbered_from_zero(tiny_run, tmp_path):
    import shutil

    import torch

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    path = run / "checkpoints" / "latest" / "pool.pt"
    flat = load_tensors(path)
    assert flat  # the tiny run keeps snapshots
    # -1 would index the last snapshot: a pool of one quietly loaded, or two overwrote each other
    torch.save(
        {("-1" + k[k.index("/") :] if k.startswith("0/") else k): v for k, v in flat.items()}, path
    )
    with pytest.raises(ValueError, match="pool.pt numbers its snapshots"):
        train_moves_aec.run_training(resume=run)
