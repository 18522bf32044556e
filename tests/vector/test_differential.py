"""The batched env is the single env: same seeds and actions give identical trajectories.

Thousands of random games across difficulties, rules options, reward modes, truncation and
illegal-action penalties; each step compares observations, masks, rewards, terminations,
truncations, final observations and wins with ``CastleSiegeEnv`` (and whole states in one
sweep), so the compiled kernels and ``castle_siege.rules`` cannot drift apart unnoticed.
"""

import pytest

from .helpers import games, lockstep


def test_default_very_hard_thousands_of_games():
    stats = lockstep(n_envs=32, n_games=games(2500), seed=0)
    assert stats["games"] >= games(2500)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_other_difficulties(difficulty):
    stats = lockstep(n_envs=16, n_games=games(400), seed=7, difficulty=difficulty)
    assert stats["games"] >= games(400)


def test_easy_games_include_victories():
    # random play rarely wins; Easy with 1200 games gives a handful, so the victory path
    # (capture of the fourth castle, reward 1) is compared too
    stats = lockstep(n_envs=32, n_games=games(1200), seed=3, difficulty="easy")
    assert stats["reward"] == stats["won"]
    assert stats["won"] > 0 or games(1200) < 1200


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
@pytest.mark.parametrize(
    "rules",
    [
        {"attack": "most_recent"},
        {"defeated": "leave_game"},
        {"attack": "most_recent", "defeated": "leave_game"},
    ],
)
def test_rules_options(rules, victory):
    stats = lockstep(
        n_envs=16, n_games=games(400), seed=11, difficulty="medium", victory=victory, **rules
    )
    assert stats["games"] >= games(400)


@pytest.mark.parametrize("difficulty", ["easy", "very_hard"])
def test_victory_deck_left(difficulty):
    # the strict reading of the victory sentence: an empty deck while a castle stands ends
    # the game at once (after a draw, Flush Siege, Regroup or the deal); Easy wins a few
    stats = lockstep(
        n_envs=16,
        n_games=games(600),
        seed=13,
        difficulty=difficulty,
        victory="deck_left",
        compare_states=True,
    )
    assert stats["games"] >= games(600)
    assert stats["reward"] == stats["won"]


def test_shaped_reward():
    stats = lockstep(n_envs=16, n_games=games(400), seed=5, difficulty="easy", reward="shaped")
    assert stats["reward"] > stats["won"]  # progress terms were paid and matched


def test_truncation():
    stats = lockstep(n_envs=8, n_games=games(200), seed=2, max_episode_steps=6)
    assert stats["truncated"] > 0


def test_illegal_action_penalty():
    stats = lockstep(
        n_envs=8,
        n_games=games(300),
        seed=4,
        illegal_every=5,
        illegal_action="penalty",
        illegal_action_penalty=-0.5,
    )
    assert stats["illegal"] > 0


def test_whole_states_match():
    lockstep(n_envs=8, n_games=games(150), seed=9, difficulty="hard", compare_states=True)
