"""ISMCTS: legal, reproducible, and blind to what the player cannot see."""

import numpy as np
import pytest
from castle_envs.agents import make_agent
from castle_envs.experiments.episodes import play_episode

from castle_envs.castle_siege.rules import State


def _mid_game(seed=3, difficulty="medium", moves=6):
    s = State.new_game(np.random.default_rng(seed), difficulty)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = np.flatnonzero(s.legal_action_mask())
        s.apply_action(int(legal[rng.integers(len(legal))]))
    return s


def _permute_unseen(state, rng):
    d = state.to_dict()
    n_unseen = len(d["deck"]) - len(d["recycled"])
    d["deck"] = [d["deck"][i] for i in rng.permutation(n_unseen)] + d["deck"][n_unseen:]
    return State.from_dict(d)


@pytest.mark.parametrize("rollout", ["random", "heuristic"])
def test_choices_do_not_change_when_the_hidden_deck_is_permuted(rollout):
    agent = make_agent(f"mcts:sims=25,rollout={rollout}", "castle-siege")
    rng = np.random.default_rng(1)
    for seed in range(4):
        s = _mid_game(seed)
        if s.is_terminal():
            continue
        others = [_permute_unseen(s, rng) for _ in range(2)]
        assert any(o.deck_cards() != s.deck_cards() for o in others)
        choices = set()
        for state in [s] + others:
            agent.reset(seed)
            choices.add(agent.act(None, state.legal_action_mask(), state.clone()))
        assert len(choices) == 1


def test_a_cheating_search_would_notice_the_permutation():
    """Control for the test above: a search that skips determinize sees different worlds."""
    s = _mid_game(0)
    o = _permute_unseen(s, np.random.default_rng(5))
    assert s.deck_cards() != o.deck_cards()
    assert (
        s.determinize(0, np.random.default_rng(2)).deck_cards()
        == o.determinize(0, np.random.default_rng(2)).deck_cards()
    )


def test_the_passed_state_is_not_changed():
    s = _mid_game(1)
    before = s.to_dict()
    agent = make_agent("mcts:sims=20", "castle-siege", seed=0)
    a = agent.act(None, s.legal_action_mask(), s)
    assert s.to_dict() == before and s.legal_action_mask()[a]


def test_reproducible_and_legal_through_the_harness():
    spec = ("mcts:sims=8",)
    r1 = play_episode("castle-siege", (("difficulty", "easy"),), (), spec, 0, 2)
    r2 = play_episode("castle-siege", (("difficulty", "easy"),), (), spec, 0, 2)
    assert r1 == r2 and r1["length"] > 0 and not r1["truncated"]


def test_search_improves_on_uniform_play():
    # Easy, common deals: random never wins; a small heuristic-rollout search mostly does
    wins = sum(
        play_episode(
            "castle-siege", (("difficulty", "easy"),), (), ("mcts:sims=10,rollout=heuristic",), 0, i
        )["returns"][0]
        for i in range(6)
    )
    assert wins >= 3


def test_single_legal_move_is_returned_without_search():
    agent = make_agent("mcts:sims=1", "castle-siege")
    mask = np.zeros(10, bool)
    mask[4] = True
    assert agent.act(None, mask, object()) == 4


def test_game_without_determinize_is_a_clear_error():
    from castle_envs.core.state import GameState

    class Opaque(GameState):
        num_players = 2
        legal_action_mask = lambda self: np.ones(3, bool)  # noqa: E731
        is_terminal = lambda self: False  # noqa: E731
        apply_legal = returns = clone = to_dict = from_dict = None

    with pytest.raises(ValueError, match="determinize"):
        make_agent("mcts:sims=2", "castle-siege").act(None, np.ones(3, bool), Opaque())


class _Nim:
    """Two-player Nim (take 1-3, taking the last wins): a perfect-information toy to check
    that the search plays each seat for itself."""

    num_players = 2

    def __init__(self, stones, player=0):
        self.stones, self.player = stones, player

    @property
    def current_player(self):
        return -1 if self.stones == 0 else self.player

    def legal_action_mask(self):
        m = np.zeros(3, bool)
        m[: min(3, self.stones)] = True
        return m

    def apply_legal(self, a):
        self.stones -= a + 1
        self.player = 1 - self.player

    def is_terminal(self):
        return self.stones == 0

    def returns(self):
        winner = 1 - self.player  # the seat that took the last stone
        return np.array([1.0 if s == winner else -1.0 for s in range(2)])

    def determinize(self, player, rng):
        return _Nim(self.stones, self.player)


@pytest.mark.parametrize("stones, player", [(5, 0), (6, 1), (7, 0), (9, 1)])
def test_search_finds_the_winning_nim_move_for_either_seat(stones, player):
    agent = make_agent("mcts:sims=400", "castle-siege", seed=0)
    s = _Nim(stones, player)
    assert agent.act(None, s.legal_action_mask(), s) + 1 == stones % 4
