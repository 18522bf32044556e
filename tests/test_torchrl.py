"""TorchRL's ``PettingZooWrapper`` takes the multi-player games as ``env()`` makes them (the
dict observation with its mask, the game's infos): reset, a random rollout that TorchRL
keeps to the mask, and a collector, for every player count. TorchRL reads the mask from
the observation and every info entry as data, so the mask must not also be an info entry."""

import warnings

import pytest

pytest.importorskip("torchrl")

import torch  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402

from castle_envs import castell_v0, castle_rooms_v0  # noqa: E402

GAMES = {"castle-rooms": castle_rooms_v0, "castell": castell_v0}


def wrapped(game: str, players: int, seed: int | None = None, aec=None) -> PettingZooWrapper:
    aec = aec or GAMES[game].env(num_players=players)
    with warnings.catch_warnings():
        # TorchRL warns that it was tested with an older PettingZoo
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL")
        return PettingZooWrapper(aec, use_mask=True, seed=seed)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_reset_and_a_masked_rollout_play_a_whole_game(game, players):
    aec = GAMES[game].env(num_players=players)
    env = wrapped(game, players, seed=players, aec=aec)
    groups = sorted(env.group_map)
    assert groups == [f"player_{i}" for i in range(players)]
    start = env.reset()
    acting = [g for g in groups if start[g, "mask"].all()]
    assert len(acting) == 1 and start[acting[0], "action_mask"].any()
    # no policy: TorchRL samples from the action spec, whose mask it keeps up to date
    rollout = env.rollout(2000)
    assert rollout["next", "done"][-1].item() and rollout["next", "terminated"][-1].item()
    assert not rollout["next", "done"][:-1].any(), "one whole game, ended by its rules"
    for group in groups:
        turns = rollout[group, "mask"].squeeze(-1)  # the steps this seat acted
        chosen = rollout[group, "action"][turns]
        legal = rollout[group, "action_mask"][turns]
        assert turns.any()
        assert legal.gather(-1, chosen.unsqueeze(-1)).all(), "every move was a legal one"
        assert not rollout["next", group, "info", "illegal_action"].any()
    rewards = torch.cat([rollout["next", g, "reward"][-1].flatten() for g in groups])
    returns = torch.as_tensor(aec.unwrapped.game_state.returns(), dtype=rewards.dtype)
    assert torch.equal(rewards, returns), "the game's result reaches every seat at the end"


def masked_random(groups: list[str]):
    """A policy that picks uniformly among each seat's legal actions (``action_mask``)."""

    def policy(td):
        for group in groups:
            mask = td[group, "action_mask"].float()
            picks = torch.multinomial(mask.reshape(-1, mask.shape[-1]), 1)
            td[group, "action"] = picks.reshape(mask.shape[:-1])
        return td

    return policy


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_collector_with_a_masked_policy_runs(game, players):
    groups = [f"player_{i}" for i in range(players)]
    collector = Collector(
        lambda: wrapped(game, players, seed=0),
        policy=masked_random(groups),
        frames_per_batch=50,
        total_frames=100,
    )
    try:
        batches = list(collector)
    finally:
        collector.shutdown()
    assert [b.numel() for b in batches] == [50, 50]
    for batch in batches:
        for group in groups:
            turns = batch[group, "mask"].squeeze(-1)
            chosen = batch[group, "action"][turns]
            assert batch[group, "action_mask"][turns].gather(-1, chosen.unsqueeze(-1)).all()
            assert not batch["next", group, "info", "illegal_action"].any()


def test_gym_env_makes_a_solitaire_by_id():
    """``GymEnv`` passes ``frameskip`` first and retries without it on Python's wording."""
    from torchrl.envs import GymEnv

    import castle_envs  # noqa: F401  (registers the ids)

    env = GymEnv("castle_envs/CastleSiege-v0", difficulty="easy", categorical_action_encoding=True)
    start = env.reset()
    assert start["observation"].shape == env.observation_spec["observation"].shape
    step = env.rand_step(start)
    assert step["next", "reward"].shape == (1,)
