"""The player's view (``GameState.player_view``): what an agent is handed holds nothing the
player has not seen, refuses to reveal what it hides, and determinizes into legal worlds."""

import numpy as np
import pytest
from castle_envs.agents.base import Agent
from castle_envs.agents.solvers.castle_siege import deal_deck

from castle_envs.castellion.rules import MENACE
from castle_envs.castellion.rules import State as CastellionState
from castle_envs.castle_siege.rules import State as SiegeState
from castle_envs.core.errors import HiddenInformationError


def _siege_midgame(seed):
    s = SiegeState.new_game(difficulty="medium", deck=deal_deck(seed))
    rng = np.random.default_rng(seed)
    for _ in range(30):
        if s.outcome:
            break
        s.apply_action(int(rng.choice(np.flatnonzero(s.legal_action_mask()))))
    return s


def _twin(s, rng):
    other = s.clone()
    deck = s.deck_cards()
    unseen = [c for c in deck if not s.recycled[c]]
    order = [unseen[i] for i in rng.permutation(len(unseen))] + deck[len(unseen) :]
    other.deck[(s.deck_head + np.arange(s.deck_size)) % 52] = order
    return other


@pytest.mark.parametrize("seed", range(8))
def test_siege_view_is_the_same_for_every_order_of_the_unseen_cards(seed):
    s = _siege_midgame(seed)
    twin = _twin(s, np.random.default_rng(seed + 100))
    assert s.player_view().to_dict() == twin.player_view().to_dict()
    view = s.player_view()
    assert sorted(view.deck_cards()) == sorted(s.deck_cards())
    assert [c for c in view.deck_cards() if view.recycled[c]] == [
        c for c in s.deck_cards() if s.recycled[c]
    ]
    for name in ("hand", "columns", "castles", "captured", "discard", "out_of_game"):
        assert np.array_equal(getattr(view, name), getattr(s, name))
    assert np.array_equal(view.legal_action_mask(), s.legal_action_mask())


def test_siege_view_refuses_to_draw_an_unseen_card_and_determinizes():
    s = SiegeState.new_game(difficulty="very_hard", deck=deal_deck(5))
    view = s.player_view()
    with pytest.raises(HiddenInformationError, match="determinize"):
        view.apply_action(1669)  # end battle phase: the next turn draws unseen cards
    world = view.determinize(0, np.random.default_rng(0))
    assert not world.hidden
    assert sorted(world.deck_cards()) == sorted(s.deck_cards())
    world.apply_action(1669)
    # the same generator deals the same world from the view and from the full state
    a = view.determinize(0, np.random.default_rng(3)).deck_cards()
    assert a == s.determinize(0, np.random.default_rng(3)).deck_cards()


def _menace(seed):
    return CastellionState.new_game(np.random.default_rng(seed), level="menace")


def test_castellion_view_hides_pile_order_and_face_down_ordeals():
    s = _menace(1)
    assert s.level == MENACE and all(s.face_down)
    views = []
    for seed in (1, 2):
        other = s.clone()
        rng = np.random.default_rng(seed)
        other.regular = [s.regular[i] for i in rng.permutation(len(s.regular))]
        other.safe = [s.safe[i] for i in rng.permutation(len(s.safe))]
        views.append(other.player_view().to_dict())
    assert views[0] == views[1]
    view = s.player_view()
    assert sorted(view.regular) == sorted(s.regular)
    with pytest.raises(HiddenInformationError):
        view.apply_action(int(np.flatnonzero(view.legal_action_mask())[0]))  # a draw
    world = view.determinize(0, np.random.default_rng(0))
    world.apply_action(int(np.flatnonzero(world.legal_action_mask())[0]))


class _Spy(Agent):
    """Records what the harness hands it."""

    needs_state = True
    name = "spy"
    seen: list = []

    def act(self, observation, action_mask, state=None) -> int:
        _Spy.seen.append(state.hidden)
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize(
    "game,variant",
    [("castle-siege", (("difficulty", "easy"),)), ("castellion", (("level", "menace"),))],
)
def test_the_episode_harness_hands_agents_the_view(monkeypatch, game, variant):
    from castle_envs.experiments import episodes

    monkeypatch.setattr(episodes, "_agent", lambda spec, g, i: _Spy())
    _Spy.seen = []
    episodes.play_episode(game, variant, (), ("spy",), 0, 0)
    assert _Spy.seen and all(_Spy.seen)
