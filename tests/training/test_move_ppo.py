"""algo: move_ppo (experiments/train_moves.py): a short run proves the path, checkpoints and
resume; its model loads as --agent model:DIR."""

import json
from pathlib import Path

import numpy as np
import pytest
from castle_envs.agents.learned.saved import load_tensors, read_card
from castle_envs.agents.registry import make_agent
from castle_envs.experiments.cli import main
from castle_envs.experiments.config import load_config, resolve
from castle_envs.experiments.train_moves import run_training

from castle_envs.castle_siege.observation import encode
from castle_envs.castle_siege.rules import State

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.train

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "configs" / "tiny" / "castle_siege_move_ppo.yaml"
LINEAR_FILE = ROOT / "models" / "castle_siege_very_hard_linear" / "policy.json"


def _weights(run_dir):
    return load_tensors(run_dir / "checkpoints" / "latest" / "policy.pt")


def test_a_run_writes_curve_checkpoint_tensorboard_and_a_loadable_model(tmp_path):
    summary = run_training(load_config(TINY), run_dir=tmp_path / "run")
    run = tmp_path / "run"
    assert summary["num_timesteps"] == 256
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("steps,wall_seconds") and len(rows) == 4  # 0, 128, 256
    assert list((run / "tb").iterdir())
    card = read_card(run / "final_model")
    assert card["kind"] == "move_policy" and card["game"] == "castle-siege"
    agent = make_agent(f"model:{run / 'final_model'}", "castle-siege", seed=0)
    state = State.new_game(np.random.default_rng(20_000_123), "easy")
    while not state.is_terminal():
        action = agent.act(encode(state), state.legal_action_mask(), state.clone())
        assert state.legal_action_mask()[action]
        state.apply_action(action)


def test_batched_held_out_evaluation_agrees_with_the_agent(tmp_path, capsys):
    from castle_envs.experiments import eval_moves

    run_training(load_config(TINY), run_dir=tmp_path / "run")
    # --check replays every deal with the model: spec's agent and stops on any difference
    assert (
        eval_moves.main(
            [
                "--model",
                str(tmp_path / "run" / "final_model"),
                "--difficulty",
                "easy",
                "--episodes",
                "12",
                "--check",
                "12",
                "--baseline",
                str(LINEAR_FILE),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "out" / "eval_seed0_n12.json").read_text())
    row = summary["results"][0]
    assert row["paired_model_minus_linear"]["n"] == 12
    per_deal = np.loadtxt(
        tmp_path / "out" / "per_deal_easy_seed0_n12.csv", delimiter=",", skiprows=1
    )
    assert per_deal.shape == (12, 3) and per_deal[:, 1].sum() == row["model"]["wins"]


def test_resume_reproduces_an_uninterrupted_run(tmp_path):
    config = load_config(TINY)
    run_training(config, run_dir=tmp_path / "whole")
    part = run_training(config, run_dir=tmp_path / "part", stop_after=128)
    assert part["stopped"] and part["num_timesteps"] == 128
    assert json.loads((tmp_path / "part" / "progress.json").read_text())["num_timesteps"] == 128
    from castle_envs.experiments.train_moves import export_model

    exported = export_model(tmp_path / "part", tmp_path / "exported")  # a stopped run ships
    assert read_card(exported)["trained"]["env_steps"] == 128
    assert torch.equal(
        load_tensors(exported / "weights.pt")["linear.weight"],
        _weights(tmp_path / "part")["linear.weight"],
    )
    resumed = run_training(resume=tmp_path / "part")
    assert resumed["num_timesteps"] == 256
    whole, split = _weights(tmp_path / "whole"), _weights(tmp_path / "part")
    assert whole.keys() == split.keys()
    for key in whole:
        assert torch.equal(whole[key], split[key]), key


def test_the_linear_start_plays_the_cem_scorer():
    # before any update the greedy policy is the CEM linear scorer (its 30 weights)
    from castle_envs.agents.learned import move_policy
    from castle_envs.agents.learned.castle_siege_linear import LinearPolicy

    from castle_envs.moves import SiegeMoves

    path = LINEAR_FILE
    net = move_policy.build_net(882, 75, 16)
    move_policy.init_linear(net, path)
    agent = move_policy.MovePolicyAgent(net, {"capacity": 256})
    linear = LinearPolicy.load(path)
    state = State.new_game(np.random.default_rng(20_000_321), "hard")
    while not state.is_terminal():
        assert agent.act(None, None, state) == linear(state)
        state.apply_action(linear(state))
    assert isinstance(agent.moves, SiegeMoves)


def test_a_run_starts_from_a_saved_models_weights(tmp_path):
    from castle_envs.agents.learned import move_policy
    from castle_envs.agents.learned.saved import init_from_model

    run_training(load_config(TINY), run_dir=tmp_path / "a")
    saved = tmp_path / "a" / "final_model"
    config = load_config(TINY, [f"move_ppo.init_model={saved}", "move_ppo.init_linear=''"])
    run_training(config, run_dir=tmp_path / "b")
    # b's first evaluation (before any update) plays a's final network on the same deals
    a_rows = (tmp_path / "a" / "eval.csv").read_text().splitlines()
    b_rows = (tmp_path / "b" / "eval.csv").read_text().splitlines()
    assert b_rows[1].split(",")[2:] == a_rows[-1].split(",")[2:]
    net = move_policy.build_net(882, 75, 32)
    arch = {"obs_size": 882, "num_features": 75, "hidden": 32, "linear_offset": 45, "capacity": 64}
    init_from_model(net, arch, "castle-siege", saved)
    for key, value in load_tensors(saved / "weights.pt").items():
        assert torch.equal(net.state_dict()[key], value), key
    with pytest.raises(ValueError, match=r"hidden 32 \(this run: 16\)"):
        init_from_model(
            move_policy.build_net(882, 75, 16), {**arch, "hidden": 16}, "castle-siege", saved
        )
    with pytest.raises(ValueError, match="needs a castellion move_policy model"):
        init_from_model(net, arch, "castellion", saved)
    with pytest.raises(ValueError, match="init_model .* or init_linear, not both"):
        load_config(TINY, [f"move_ppo.init_model={saved}"])


def test_cli_trains_and_resumes(tmp_path, capsys):
    run = tmp_path / "cli"
    assert (
        main(
            ["train", "--config", str(TINY), "--run-dir", str(run), "--set", "total_timesteps=128"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["num_timesteps"] == 128
    assert main(["train", "--resume", str(run)]) == 0  # already done: nothing to add
    assert json.loads(capsys.readouterr().out)["num_timesteps"] == 128


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            {
                "algo": "move_ppo",
                "game": "castell",
                "seed": 20_000_000,
                "move_ppo": {"levels": [2, 3]},
            },
            "solitaire",
        ),
        (
            {
                "algo": "move_ppo",
                "game": "castellion",
                "seed": 20_000_000,
                "pretrain": {"agent": "planner", "episodes": 2},
            },
            "pretrain.seed",
        ),
        (
            {
                "algo": "move_ppo",
                "game": "castellion",
                "seed": 20_000_000,
                "move_ppo": {"levels": ["school", "hard"]},
            },
            "move_ppo.levels",
        ),
        ({"algo": "move_ppo", "seed": 5}, "20,000,000"),
        (
            {"algo": "move_ppo", "seed": 20_000_000, "move_ppo": {"capacity": 0}},
            "move_ppo.capacity",
        ),
        (
            {"algo": "move_ppo", "seed": 20_000_000, "move_ppo": {"temperature": 0}},
            "move_ppo.temperature",
        ),
    ],
)
def test_bad_configs_name_the_key(raw, message):
    with pytest.raises(ValueError, match=message):
        resolve(raw)


def test_bench_learners_reports_both_learners(capsys):
    pytest.importorskip("sb3_contrib")
    assert (
        main(
            [
                "bench",
                "castle-siege",
                "--difficulty",
                "easy",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "",
                "--solver-deals",
                "0",
                "--no-peer",
                "--learners",
                "--learner-steps",
                "64",
                "--json",
            ]
        )
        == 0
    )
    learners = json.loads(capsys.readouterr().out)[-1]["learners"]
    for algo in ("move_ppo", "maskable_ppo"):
        assert learners[algo]["steps"] >= 64 and learners[algo]["steps_per_s"] > 0
    # printed, beside the PettingZoo reference (the learners' row has no env to compare)
    assert (
        main(
            [
                "bench",
                "castle-siege",
                "--difficulty",
                "easy",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "",
                "--solver-deals",
                "0",
                "--learners",
                "--learner-steps",
                "64",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "learner move_ppo" in out and "connect_four_v3" in out


def test_a_damaged_model_directory_is_refused(tmp_path):
    run_training(load_config(TINY), run_dir=tmp_path / "run")
    model = tmp_path / "run" / "final_model"
    card = json.loads((model / "model.json").read_text())
    card["policy"]["hidden"] = 7
    (model / "model.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="weights do not fit"):
        make_agent(f"model:{model}", "castle-siege")


TINY_CASTELLION = ROOT / "configs" / "tiny" / "castellion_move_ppo.yaml"


def test_castellion_warm_start_levels_and_resume(tmp_path):
    """Behaviour cloning of the planner with a DAgger round, then PPO on the three levels
    side by side: one curve row per level, the warm start saved, a model every level's
    evaluate plays, and --resume equal to the uninterrupted run."""
    from castle_envs.experiments.evaluate import evaluate

    config = load_config(TINY_CASTELLION)
    whole = run_training(config, run_dir=tmp_path / "whole")
    assert whole["num_timesteps"] == 288
    run = tmp_path / "whole"
    progress = json.loads((run / "progress.json").read_text())
    rounds = progress["pretrain"]["rounds"]
    assert [r["player"] for r in rounds] == ["teacher", "network"]
    assert rounds[1]["positions"] > rounds[0]["positions"] > 0
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].split(",")[:3] == ["steps", "wall_seconds", "level"]
    assert {r.split(",")[2] for r in rows[1:]} == {"school", "academy", "menace"}
    assert read_card(run / "pretrain_model")["trained"]["algo"] == "behaviour cloning"
    assert read_card(run / "final_model")["trained"]["levels"] == ["school", "academy", "menace"]
    spec = f"model:{run / 'final_model'}"
    result = evaluate(
        "castellion", ["school", "academy", "menace"], [spec], 2, seed=1_000_000, workers=1
    )
    assert len(result["results"]) == 3
    part = run_training(config, run_dir=tmp_path / "part", stop_after=96)
    assert part["stopped"] and part["num_timesteps"] == 96
    run_training(resume=tmp_path / "part")
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "part")
    for key in a:
        assert torch.equal(a[key], b[key]), key
