"""The Gymnasium layer: API checker, seeding, options, masks, errors, rendering, SB3."""

import io
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import castle_envs  # noqa: F401
from castle_envs.castle_siege import (
    ACTIONS,
    CastleSiegeEnv,
    decode_action,
    encode_action,
    play_action,
)
from castle_envs.castle_siege.actions import END_BATTLE, NUM_ACTIONS, Play, Recycle
from castle_envs.castle_siege.observation import OBS_SIZE
from castle_envs.core.errors import EpisodeOverError, IllegalActionError, InvalidStateError

from .helpers import C, deck_order

ENV_ID = "castle_envs/CastleSiege-v0"
DIFFICULTIES = ["easy", "medium", "hard", "very_hard"]


def run_random(env, seed, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    trajectory = [obs]
    while True:
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory.append((obs, reward))
        if terminated or truncated:
            return trajectory, info


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_check_env(difficulty):
    # the checker steps random (often illegal) actions, so it runs in penalty mode
    env = gymnasium.make(ENV_ID, difficulty=difficulty, illegal_action="penalty")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_make_with_difficulty_and_spaces():
    env = gymnasium.make(ENV_ID, difficulty="very_hard")
    assert env.action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    assert env.observation_space.shape == (OBS_SIZE,)
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert np.array_equal(info["action_mask"], env.unwrapped.action_masks())
    assert [len(env.unwrapped.state.column(c)) for c in range(4)] == [4, 4, 4, 4]


def test_same_seed_same_game_different_seed_different_deal():
    env = gymnasium.make(ENV_ID, difficulty="hard")
    a, _ = run_random(env, seed=11)
    b, _ = run_random(env, seed=11)
    assert len(a) == len(b) and np.array_equal(a[0], b[0])
    assert all(np.array_equal(x[0], y[0]) and x[1] == y[1] for x, y in zip(a[1:], b[1:]))
    c, _ = run_random(env, seed=12)
    assert not np.array_equal(a[0], c[0])


def test_reset_option_deck_deals_exactly_that_deck():
    env = gymnasium.make(ENV_ID, difficulty="easy")
    order = deck_order(C("QS", "JC", "9H", "8D"), [C("2S", "3S", "4S", "5S")])
    env.reset(options={"deck": order})
    state = env.unwrapped.state
    assert [int(c) for c in state.castles] == C("QS", "JC", "9H", "8D")
    assert [state.column(c) for c in range(4)] == [[x] for x in C("2S", "3S", "4S", "5S")]
    assert state.hand_cards() == sorted(order[8:13])


def test_reset_option_state_starts_from_a_saved_position():
    env = gymnasium.make(ENV_ID)
    env.reset(seed=5)
    saved = env.unwrapped.state.to_dict()
    env.reset(seed=99, options={"state": saved})
    assert env.unwrapped.state.to_dict() == saved


@pytest.mark.parametrize(
    "deck,why",
    [
        (list(range(51)), "52 card ids, got 51"),
        (list(range(51)) + [0], r"repeats card ids \[0\]"),
        (list(range(1, 53)), "card id 52, outside 0-51"),
        ([float(i) for i in range(52)], "non-integer"),
        ("A♠ 2♠", "must be a list"),
    ],
)
def test_malformed_deck_option_is_rejected(deck, why):
    env = gymnasium.make(ENV_ID)
    with pytest.raises(ValueError, match=why):
        env.reset(options={"deck": deck})


def test_bad_constructor_and_reset_arguments():
    with pytest.raises(ValueError, match="unknown difficulty 'impossible'"):
        gymnasium.make(ENV_ID, difficulty="impossible")
    with pytest.raises(
        ValueError,
        match=r"unexpected keyword argument 'speed'; .*rules options: \['attack', 'defeated', 'victory'\]",
    ):
        gymnasium.make(ENV_ID, speed=3)
    with pytest.raises(ValueError, match="unknown attack rule 'all'"):
        gymnasium.make(ENV_ID, attack="all")
    with pytest.raises(ValueError, match="unknown reward"):
        gymnasium.make(ENV_ID, reward="dense")
    with pytest.raises(ValueError, match="unknown render_mode"):
        CastleSiegeEnv(render_mode="human")
    env = gymnasium.make(ENV_ID)
    with pytest.raises(ValueError, match=r"unknown reset option \['dek'\]"):
        env.reset(options={"dek": list(range(52))})
    with pytest.raises(InvalidStateError):
        env.reset(options={"state": {"game": "castle_siege"}})


def test_illegal_action_raises_naming_move_and_reason():
    env = gymnasium.make(ENV_ID, difficulty="easy", illegal_action="raise")
    order = deck_order(
        C("QS", "JC", "9H", "8D"), [C("KS", "KC", "KH", "KD")], then=C("2S", "3S", "4S", "5S", "6S")
    )
    env.reset(options={"deck": order})
    action = play_action((0,), C("KS")[0])
    with pytest.raises(IllegalActionError, match=r"attack K♠ with 2♠.*sum to 2, less than"):
        env.step(action)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(NUM_ACTIONS)
    with pytest.raises(IllegalActionError, match="not an integer"):
        env.step("end")
    env.step(END_BATTLE)  # the env is still usable after the errors


def test_penalty_mode_ends_episode_on_illegal_action():
    env = gymnasium.make(ENV_ID, illegal_action="penalty", illegal_action_penalty=-2.0)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(NUM_ACTIONS - 1)  # discard: not now
    assert terminated and reward == -2.0 and info["illegal_action"]
    with pytest.raises(EpisodeOverError):
        env.step(END_BATTLE)


def test_step_after_the_end_raises():
    env = gymnasium.make(ENV_ID, difficulty="very_hard")
    _, info = run_random(env, seed=3)
    with pytest.raises(EpisodeOverError, match="after the episode ended"):
        env.step(END_BATTLE)
    env.reset(seed=4)
    env.step(END_BATTLE)


def test_truncation_at_step_limit():
    env = gymnasium.make(ENV_ID, max_episode_steps=3)
    env.reset(seed=0)
    results = [env.step(END_BATTLE) for _ in range(3)]
    assert [r[2] for r in results] == [False, False, False]  # not terminated ...
    assert [r[3] for r in results] == [False, False, True]  # ... but truncated


def test_reward_is_paid_once_at_the_end_and_info_has_events():
    env = gymnasium.make(ENV_ID, difficulty="easy")
    for seed in range(100):
        trajectory, info = run_random(env, seed)
        rewards = [r for _, r in trajectory[1:]]
        assert sum(rewards) == rewards[-1] == (1.0 if info["won"] else 0.0)
        assert set(info) >= {
            f"events_{name}"
            for name in (
                "precision_strikes",
                "flush_sieges",
                "royal_assaults",
                "regroups",
                "castles_captured",
                "turns",
            )
        }
        assert info["events_turns"] >= 1 and type(info["events_turns"]) is int


def test_victory_pays_one():
    env = gymnasium.make(ENV_ID, difficulty="easy")
    from .helpers import position

    state = position(
        hand=C("6S", "7S"),
        castles=C("KS", "KC", "KH", "KD"),
        captured=(False, True, True, True),
        difficulty="easy",
    )
    obs, info = env.reset(options={"state": state.to_dict()})
    action = play_action((0, 1), C("KS")[0])
    obs, reward, terminated, truncated, info = env.step(action)
    assert terminated and not truncated and reward == 1.0 and info["won"]


def test_shaped_reward_pays_progress():
    env = gymnasium.make(ENV_ID, difficulty="easy", reward="shaped")
    order = deck_order(
        C("QS", "JC", "9H", "8D"), [C("2S", "3S", "4S", "5S")], then=C("9S", "2C", "3C", "4C", "5C")
    )
    env.reset(options={"deck": order})
    state = env.unwrapped.state
    hand = state.hand_cards()
    _, reward, *_ = env.step(play_action((hand.index(C("9S")[0]),), C("2S")[0]))
    assert reward == pytest.approx(0.01)


def test_decode_encode_round_trip_for_every_action():
    for action in range(NUM_ACTIONS):
        move = decode_action(action)
        assert encode_action(move) == action
        assert encode_action(str(move)) == action
    assert decode_action(END_BATTLE) == ACTIONS.decode(END_BATTLE)
    assert isinstance(decode_action(0), Play) and isinstance(decode_action(1612), Recycle)
    env = gymnasium.make(ENV_ID)
    env.reset(seed=0)
    assert env.unwrapped.decode_action(END_BATTLE).__class__.__name__ == "EndBattle"
    with pytest.raises(ValueError):
        encode_action("fly over the walls")


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render(mode):
    env = gymnasium.make(ENV_ID, render_mode=mode)
    env.reset(seed=0)
    first = env.render()
    run_random(env, 0)
    last = env.render()
    if mode == "ansi":
        assert isinstance(first, str) and "hand" in first and "turn 1" in first
        assert "VICTORY" in last or "DEFEAT" in last
    else:
        assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
        assert first.shape == last.shape and not np.array_equal(first, last)


def test_vector_env_stacks_masks():
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode="sync")
    obs, info = envs.reset(seed=0)
    assert obs.shape == (3, OBS_SIZE) and info["action_mask"].shape == (3, NUM_ACTIONS)
    masks = np.stack(envs.call("action_masks"))
    assert np.array_equal(masks, info["action_mask"])
    envs.close()


def test_terminal_play_driven_by_scripted_input():
    from castle_envs.experiments.cli import build_parser
    from castle_envs.experiments.play import run

    args = build_parser().parse_args(
        ["play", "castle-siege", "--difficulty", "hard", "--seed", "7"]
    )
    script = "0\nabc\n999\n\n" + "0\n" * 400
    out = io.StringIO()
    assert run(args, stdin=io.StringIO(script), stdout=out) == 0
    text = out.getvalue()
    assert "'abc' is not a move number" in text and "'999' is not a move number" in text
    assert "game over" in text or "(end of input)" in text
    out = io.StringIO()
    run(args, stdin=io.StringIO("q\n"), stdout=out)
    assert "game abandoned" in out.getvalue()


def test_cli_rejects_bad_variant_without_traceback(capsys):
    from castle_envs.experiments.cli import main

    assert main(["play", "castle-siege", "--difficulty", "nightmare"]) == 2
    assert "unknown difficulty 'nightmare'" in capsys.readouterr().err


def test_maskable_ppo_runs_on_the_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    env = Monitor(gymnasium.make(ENV_ID, difficulty="easy"))
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    rewards, lengths = evaluate_policy(model, env, n_eval_episodes=3, return_episode_rewards=True)
    assert len(rewards) == 3 and all(r in (0.0, 1.0) for r in rewards)
