"""The Castle Siege linear move scorer: legal, faithful to the heuristic at its starting
weights, features that say what the move does, weights that round-trip."""

import json

import numpy as np
import pytest
from castle_envs.agents.baselines.castle_siege import heuristic_policy
from castle_envs.agents.learned.castle_siege_linear import (
    BATTLE_FEATURES,
    RECYCLE_FEATURES,
    LinearPolicy,
    battle_features,
    recycle_features,
)
from castle_envs.agents.registry import make_agent

from castle_envs.castle_siege.actions import ACTIONS, END_BATTLE, RECYCLE_BASE, Play
from castle_envs.castle_siege.rules import State
from tests.castle_siege.helpers import C, position, slots


def _row(state, action):
    actions, feats = battle_features(state)
    return dict(zip(BATTLE_FEATURES, feats[actions.tolist().index(action)]))


@pytest.mark.parametrize("difficulty", ["easy", "very_hard"])
def test_plays_only_legal_moves_with_any_weights(difficulty):
    rng = np.random.default_rng(0)
    for seed in range(10):
        policy = LinearPolicy.from_vector(rng.normal(0, 5, len(LinearPolicy.names())))
        s = State.new_game(np.random.default_rng(seed), difficulty)
        while not s.is_terminal():
            a = policy(s)
            assert s.legal_action_mask()[a], s.describe_action(a)
            s.apply_action(a)


def test_starting_weights_play_like_the_heuristic():
    policy, rng = LinearPolicy(), np.random.default_rng(0)
    same = total = 0
    for seed in range(40):
        s = State.new_game(np.random.default_rng(seed), "hard")
        while not s.is_terminal():
            same += policy(s) == heuristic_policy(s, rng)
            total += 1
            s.apply_action(heuristic_policy(s, rng))
    assert same / total >= 0.99, (same, total)


def test_battle_features_describe_the_move():
    s = position(
        hand=C("7H", "2C", "5C", "QS", "KD"),
        columns=(C("7S"), C("9S", "4C"), (), ()),
        castles=C("10S", "10C", "2H", "10D"),
    )
    exact = _row(s, ACTIONS.encode(Play(slots(s, "7H"), C("7S")[0])))
    assert exact["attack"] == 1 and exact["precision"] == 1 and exact["cards"] == 1
    assert exact["overkill"] == 0 and exact["clear"] == 1 and exact["target_rank"] == 7
    flush = _row(s, ACTIONS.encode(Play(tuple(sorted(slots(s, "2C", "5C"))), C("4C")[0])))
    assert flush["flush"] == 1 and flush["precision"] == 0 and flush["overkill"] == 3
    capture = _row(s, ACTIONS.encode(Play(slots(s, "2C"), C("2H")[0])))
    assert capture["capture"] == 1 and capture["attack"] == 0 and capture["rank_spent"] == 2
    royal_spent = _row(s, ACTIONS.encode(Play(slots(s, "QS"), C("9S")[0])))
    assert royal_spent["royals_spent"] == 1 and royal_spent["overkill"] == 3
    actions, feats = battle_features(s)
    assert actions[-1] == END_BATTLE and not feats[-1].any()


def test_a_royal_assault_is_labelled_as_one():
    s = position(hand=C("JH", "QS", "KD"), columns=(C("7S"), (), (), ()))
    row = _row(s, ACTIONS.encode(Play(tuple(sorted(slots(s, "JH", "QS", "KD"))), C("7S")[0])))
    assert row["royal"] == 1 and row["attack"] == 0 and row["royals_spent"] == 0


def test_recycle_features_see_castle_ranks_and_missing_royals():
    s = position(
        hand=C("JH"),
        castles=C("10S", "10C", "10H", "4D"),
        discard=C("4C", "QS", "3C"),
        phase="precision_strike",
    )
    cards, feats = recycle_features(s)
    row = {int(c): dict(zip(RECYCLE_FEATURES, f)) for c, f in zip(cards, feats)}
    assert row[C("4C")[0]]["castle_exact"] == 1 and row[C("3C")[0]]["castle_distance"] == 1
    assert row[C("QS")[0]]["royal_missing"] == 1 and row[C("4C")[0]]["royal_missing"] == 0
    assert LinearPolicy()(s) == RECYCLE_BASE + C("4C")[0]


def test_weights_round_trip_and_bad_weights_are_named(tmp_path):
    theta = np.arange(len(LinearPolicy.names()), dtype=float)
    policy = LinearPolicy.from_vector(theta)
    policy.save(tmp_path / "p.json")
    assert np.array_equal(LinearPolicy.load(tmp_path / "p.json").vector(), theta)
    with pytest.raises(ValueError, match="unknown feature weights \\['kil'\\]"):
        LinearPolicy({"battle": {"kil": 1.0}})
    with pytest.raises(ValueError, match="need"):
        LinearPolicy.from_vector(theta[:-1])
    (tmp_path / "x.json").write_text(json.dumps({"policy": "ppo"}))
    with pytest.raises(ValueError, match="not a Castle Siege linear policy"):
        LinearPolicy.load(tmp_path / "x.json")


def test_registry_builds_it_for_castle_siege_only(tmp_path):
    LinearPolicy().save(tmp_path / "p.json")
    agent = make_agent(f"linear:{tmp_path / 'p.json'}", "castle-siege", seed=0)
    assert agent.name.startswith("linear:")
    with pytest.raises(ValueError, match="castle-siege only"):
        make_agent(f"linear:{tmp_path / 'p.json'}", "castellion")
    with pytest.raises(ValueError, match="needs a weights file"):
        make_agent("linear", "castle-siege")


def _endgame_position():
    # one castle left (9D) behind a 7S; the deck is empty, so its order is known
    return position(
        hand=C("7H", "2C", "7C"),
        columns=(C("7S"), (), (), ()),
        castles=C("9D", "10C", "10H", "10S"),
        captured=(False, True, True, True),
        deck=[],
    )


def test_endgame_search_plays_a_proven_win_once_the_deck_is_known(monkeypatch):
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    calls = []
    real = CompiledSolver.solve

    def counting(self, state):
        calls.append(state.turn)
        return real(self, state)

    monkeypatch.setattr(CompiledSolver, "solve", counting)
    s = _endgame_position()
    policy = LinearPolicy(endgame_nodes=500)
    while not s.is_terminal():
        s.apply_action(policy(s))
    assert s.outcome == 1 and len(calls) == 1  # solved once, then the plan was followed


def test_endgame_search_never_runs_while_unseen_cards_remain(monkeypatch):
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    def forbidden(self, state):
        raise AssertionError("solved a position with unseen deck cards")

    monkeypatch.setattr(CompiledSolver, "solve", forbidden)
    policy = LinearPolicy(endgame_nodes=500)
    s = State.new_game(np.random.default_rng(3), "very_hard")
    for _ in range(10):  # the first turns: the deck still holds unseen cards
        assert s.deck_size > int(s.recycled.sum())
        s.apply_action(policy(s))


def test_endgame_spec_is_parsed_and_checked(tmp_path):
    from castle_envs.agents.registry import split_agent_list

    LinearPolicy().save(tmp_path / "p.json")
    specs = split_agent_list(f"heuristic,linear:{tmp_path / 'p.json'},endgame=300,random")
    assert specs[1] == f"linear:{tmp_path / 'p.json'},endgame=300" and len(specs) == 3
    agent = make_agent(specs[1], "castle-siege", seed=0)
    assert agent.policy.endgame_nodes == 300
    with pytest.raises(ValueError, match="unknown linear option 'depth'"):
        make_agent(f"linear:{tmp_path / 'p.json'},depth=3", "castle-siege")
    with pytest.raises(ValueError, match="endgame_nodes must be a non-negative int"):
        LinearPolicy(endgame_nodes=-1)
