"""The RLlib example (``distributed`` extra): the adapter's turn-taking, one tiny masked-PPO
iteration on Castle Rooms, and its checkpoint restored as a policy that plays legal moves."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

import ray  # noqa: E402
from castle_envs.experiments import rllib_castle_rooms as example  # noqa: E402

from castle_envs.core.errors import IllegalActionError  # noqa: E402
from castle_envs.rllib_adapter import RLlibTurnBasedEnv  # noqa: E402


def play_random(env, seed):
    """A random legal game through the adapter; returns the steps it took and the last step."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps = 0
    while True:
        assert len(obs) == 1, "mid-game, only the player to act observes"
        ((agent, o),) = obs.items()
        assert agent == env.aec.agent_selection
        assert o["action_mask"].dtype == np.float32 and o["action_mask"].sum() >= 1
        assert env.observation_spaces[agent].contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminateds, truncateds, infos = env.step({agent: action})
        steps += 1
        if terminateds["__all__"] or truncateds["__all__"]:
            return steps, (obs, rewards, terminateds, truncateds, infos)
        assert set(rewards) == {agent} and rewards[agent] == 0.0


@pytest.mark.parametrize("num_players", [2, 3])
def test_adapter_ends_with_every_players_reward(num_players):
    env = RLlibTurnBasedEnv({"num_players": num_players})
    for seed in range(3):
        _, (obs, rewards, terminateds, truncateds, infos) = play_random(env, seed)
        assert terminateds["__all__"] and not truncateds["__all__"]
        assert set(obs) == set(rewards) == set(env.possible_agents)
        winners = {f"player_{w}" for w in np.flatnonzero(infos["player_0"]["winners"])}
        assert winners and {a for a, r in rewards.items() if r == 1.0} == winners
        assert all(r == -1.0 for a, r in rewards.items() if a not in winners)
        assert all(o["action_mask"].sum() == 0 for o in obs.values())


def test_adapter_is_deterministic_and_passes_options_through():
    env = RLlibTurnBasedEnv({"game": "castle-rooms", "num_players": 2})
    assert play_random(env, 7)[0] == play_random(env, 7)[0]
    short = RLlibTurnBasedEnv({"num_players": 2, "max_episode_steps": 5})
    steps, (_, _, terminateds, truncateds, _) = play_random(short, 0)
    assert steps == 5 and truncateds["__all__"] and not terminateds["__all__"]


def test_adapter_rejects_illegal_moves_and_single_agent_games():
    env = RLlibTurnBasedEnv({"num_players": 2})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step({agent: illegal})
    other = "player_1" if agent == "player_0" else "player_0"
    with pytest.raises(ValueError, match=f"{agent}'s turn"):
        env.step({other: 0})
    with pytest.raises(ValueError, match="single-agent"):
        RLlibTurnBasedEnv({"game": "castle-siege"})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny PPO iteration on one CPU; yields the algorithm and its saved checkpoint."""
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        config = example.build_config(
            num_players=2, batch=256, minibatch=64, epochs=1, hidden=(32,), seed=0
        )
        algo = config.build_algo()
        result = algo.train()
        checkpoint = algo.save_to_path(tmp_path_factory.mktemp("rllib") / "checkpoint")
        yield algo, result, checkpoint
        algo.stop()
    finally:
        ray.shutdown()


def test_one_masked_iteration_plays_whole_games_for_both_seats(trained):
    # The env raises on an illegal action and the config does not restart failed envs,
    # so reaching here means the masked policy sampled only legal moves.
    _, result, _ = trained
    summary = example.iteration_summary(result)
    assert summary["iteration"] == 1 and summary["env_steps"] >= 256
    assert summary["episodes"] >= 1
    returns = summary["agent_returns_mean"]
    assert set(returns) == {"player_0", "player_1"}
    assert all(-1.0 <= r <= 1.0 for r in returns.values())
    assert np.isfinite(summary["policy_loss"]["shared"])


def test_checkpoint_restores_the_trained_policy(trained):
    algo, _, checkpoint = trained
    modules = example.load_modules(checkpoint)
    assert set(modules) == {"shared"}
    env = RLlibTurnBasedEnv({"num_players": 2})
    obs, _ = env.reset(seed=3)
    ((_, o),) = obs.items()
    # Same weights: the restored module's choice is the live learner's.
    live = algo.get_module("shared")
    assert example.greedy_action(modules["shared"], o) == example.greedy_action(live, o)


def test_masked_policy_only_picks_legal_moves(trained):
    _, _, checkpoint = trained
    module = example.load_modules(checkpoint)["shared"]
    env = RLlibTurnBasedEnv({"num_players": 2})
    obs, _ = env.reset(seed=5)
    ((_, o),) = obs.items()
    legal = np.flatnonzero(o["action_mask"])
    # With a single move left open, the mask alone decides, whatever the weights prefer.
    for a in legal[:5]:
        only = dict(o, action_mask=np.eye(len(o["action_mask"]), dtype=np.float32)[a])
        assert example.greedy_action(module, only) == a
    # And whole games against random players run to the end (illegal moves would raise).
    report = example.evaluate({"shared": module}, "shared", games=4, seed=0)
    assert report["trained"]["games"] == 4 and 0 <= report["trained"]["wins"] <= 4


def test_a_relative_checkpoint_reloads_as_the_readme_writes_it(trained, monkeypatch, capsys):
    """``--checkpoint runs/.../checkpoint`` relative to the working directory: RLlib's
    pyarrow file systems take absolute paths only, so the example resolves it."""
    _, _, checkpoint = trained
    where = Path(checkpoint)
    monkeypatch.chdir(where.parent.parent)
    relative = Path(where.parent.name) / where.name
    assert set(example.load_modules(relative)) == {"shared"}
    argv = ["--iterations", "0", "--checkpoint", str(relative), "--trust-checkpoint"]
    args = example.parse_args([*argv, "--out", "out"])
    assert (
        args.checkpoint == where.resolve() and args.out == (where.parent.parent / "out").resolve()
    )
    assert example.main([*argv, "--eval-games", "2", "--out", "out"]) == 0
    assert "won" in capsys.readouterr().out and (Path("out") / "summary.json").is_file()


def test_bad_example_arguments():
    with pytest.raises(ValueError, match="policies must be one of"):
        example.build_config(policies="league")
    with pytest.raises(SystemExit):
        example.parse_args(["--iterations", "0"])
    with pytest.raises(FileNotFoundError, match="not an RLlib algorithm checkpoint"):
        example.load_modules("/nonexistent")


def test_a_checkpoint_is_loaded_only_when_trusted(capsys):
    """RLlib checkpoints are pickles: --checkpoint alone is refused before anything is read."""
    with pytest.raises(SystemExit):
        example.parse_args(["--iterations", "0", "--checkpoint", "/some/checkpoint"])
    assert "--trust-checkpoint" in capsys.readouterr().err
    args = example.parse_args(["--iterations", "0", "--checkpoint", "/c", "--trust-checkpoint"])
    assert args.trust_checkpoint


def test_per_seat_policies_give_each_seat_its_own_module():
    config = example.build_config(num_players=3, policies="per_seat")
    seats = {f"player_{i}" for i in range(3)}
    assert set(config.policies) == seats
    assert {config.policy_mapping_fn(a, None) for a in seats} == seats
    shared = example.build_config(num_players=3)
    assert set(shared.policies) == {"shared"}
    assert {shared.policy_mapping_fn(a, None) for a in seats} == {"shared"}
