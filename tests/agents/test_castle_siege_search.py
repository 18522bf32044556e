"""The Castle Siege search agent (perfect-information Monte Carlo over the compiled solver):
legal play, decisions that depend only on what the player sees, a known-deck endgame won,
and its agent spec."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents import make_agent  # noqa: E402
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy  # noqa: E402
from castle_envs.agents.search.castle_siege_search import SearchPolicy  # noqa: E402
from castle_envs.agents.solvers.castle_siege import deal_deck  # noqa: E402

from castle_envs.castle_siege.rules import State  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCORER = ROOT / "models" / "castle_siege_very_hard_linear" / "policy.json"
SMALL = dict(samples=3, candidates=3, nodes=300, endgame=2000)
NESTED = dict(inner="nested", level=1, width=2, playouts=1)  # worlds finished by nested search


def _policy(**options):
    return SearchPolicy(LinearPolicy.load(SCORER), **{**SMALL, **options})


@pytest.mark.parametrize(
    "difficulty,inner", [("easy", {}), ("very_hard", {}), ("very_hard", NESTED)]
)
def test_plays_legal_moves_to_the_end(difficulty, inner):
    policy = _policy(**inner)
    s = State.new_game(difficulty=difficulty, deck=deal_deck(4))
    rng = np.random.default_rng(0)
    moves = 0
    while not s.outcome:
        action = policy(s, rng)
        assert s.legal_action_mask()[action]
        s.apply_action(action)
        moves += 1
    assert moves > 5


def _reshuffle_unseen(state: State, rng) -> State:
    """The same position for the player: only the order of the unseen deck cards differs."""
    other = state.clone()
    deck = state.deck_cards()
    unseen = [c for c in deck if not state.recycled[c]]
    known = deck[len(unseen) :]
    order = deck
    while order == deck and len(unseen) > 1:  # a permutation may give the same order back
        order = [unseen[i] for i in rng.permutation(len(unseen))] + known
    idx = (state.deck_head + np.arange(state.deck_size)) % 52
    other.deck[idx] = order
    assert other.deck_cards() != deck or len(unseen) < 2
    return other


def _twin_walk(policy, twin_policy, state: State, shuffler, steps: int):
    """Play ``state`` (in place) with ``policy`` for up to ``steps`` moves while
    ``twin_policy`` decides each position's twin (``_reshuffle_unseen``), asserting that the
    two choose the same move; yield each position and its move before the move is played."""
    for step in range(steps):
        if state.outcome:
            return
        twin = _reshuffle_unseen(state, shuffler)
        a = policy(state, np.random.default_rng(step))
        b = twin_policy(twin, np.random.default_rng(step))
        assert a == b, (step, state.describe_action(a), twin.describe_action(b))
        yield state, a
        state.apply_action(a)


@pytest.mark.parametrize("inner", [{}, NESTED], ids=["solver", "nested"])
def test_decisions_depend_only_on_what_the_player_sees(inner):
    """Two deals that differ only in the order of cards the player has not seen get the same
    decision at every position of a game: the agent reads no hidden card."""
    policy_a, policy_b = _policy(**inner), _policy(**inner)
    s = State.new_game(difficulty="hard", deck=deal_deck(21))
    shuffler = np.random.default_rng(1)
    checked = 0
    for position, _ in _twin_walk(policy_a, policy_b, s, shuffler, 40):
        checked += len(np.flatnonzero(position.legal_action_mask())) > 1
    assert checked > 10


def test_a_known_deck_endgame_is_solved_and_won():
    """data/known_deck_endgame.json: a Hard position from a game of the shipped scorer (deal
    seed 40,000,002) in which every card left in the deck was recycled by the player, so its
    order is known; the scorer alone loses from there, and a win exists."""
    data = json.loads((Path(__file__).parent / "data" / "known_deck_endgame.json").read_text())
    s = State.from_dict(data)
    assert s.deck_size == int(s.recycled.sum()) > 0
    scorer = LinearPolicy.load(SCORER)
    alone = s.clone()
    while not alone.outcome:
        alone.apply_action(scorer(alone))
    assert alone.outcome == -1
    policy, rng = _policy(), np.random.default_rng(0)
    while not s.outcome:
        s.apply_action(policy(s, rng))
    assert s.outcome == 1


def test_agent_spec_and_bad_options():
    agent = make_agent("search:samples=2,candidates=3,nodes=100", "castle-siege", seed=0)
    assert agent.name == "search:samples=2,candidates=3,nodes=100"
    assert (agent.policy.samples, agent.policy.candidates, agent.policy.nodes) == (2, 3, 100)
    with pytest.raises(ValueError, match="unknown search option 'depth'"):
        make_agent("search:depth=3", "castle-siege")
    with pytest.raises(ValueError, match="samples must be an int >= 1"):
        make_agent("search:samples=0", "castle-siege")
    with pytest.raises(ValueError, match="plays castle-siege only"):
        make_agent("search", "castellion")
    nested = make_agent("search:inner=nested,level=0,playouts=3,width=4", "castle-siege")
    assert (
        nested.policy.inner,
        nested.policy.level,
        nested.policy.playouts,
        nested.policy.width,
    ) == ("nested", 0, 3, 4)
    with pytest.raises(ValueError, match="inner must be one of solver, nested"):
        make_agent("search:inner=mcts", "castle-siege")
    with pytest.raises(ValueError, match="level must be an int in 0..2"):
        make_agent("search:inner=nested,level=3", "castle-siege")
    with pytest.raises(ValueError, match="width must be an int in 2..16"):
        make_agent("search:inner=nested,width=1", "castle-siege")


def test_nested_worlds_win_a_known_deck_endgame_without_the_endgame_solver():
    """The known-deck position of data/known_deck_endgame.json (the scorer alone loses it):
    with the endgame solve starved (1 node), the worlds finished by nested search carry the
    agent to the win."""
    data = json.loads((Path(__file__).parent / "data" / "known_deck_endgame.json").read_text())
    s = State.from_dict(data)
    policy = _policy(samples=2, candidates=4, endgame=1, **{**NESTED, "level": 2})
    rng = np.random.default_rng(0)
    while not s.outcome:
        s.apply_action(policy(s, rng))
    assert s.outcome == 1
