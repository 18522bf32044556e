"""Castellion Monte Carlo agent (pimc): legal, blind to what the player cannot see,
reproducible from the deal and its seed, and strict about its options."""

import numpy as np
import pytest
from castle_envs.agents.registry import make_agent
from castle_envs.agents.search.castellion_pimc import PimcPolicy

from castle_envs.castellion.rules import State

#: small and short: two worlds, the planner's top two moves, worlds played to the next Ordeal
FAST = "pimc:worlds=2,top=2,gap=5,horizon=1"


def _play(agent, level, seed, limit=400):
    agent.reset([0, seed, 0])
    s = State.new_game(np.random.default_rng(seed), level)
    seq = []
    while not s.is_terminal() and len(seq) < limit:
        a = agent.act(None, s.legal_action_mask(), s)
        assert s.legal_action_mask()[a], s.describe_action(a)
        seq.append(a)
        s.apply_action(a)
    return s, seq


def test_plays_legal_moves_to_the_end_and_searches_some_decisions():
    agent = make_agent(FAST, "castellion")
    for level in ("school", "academy"):
        s, _ = _play(agent, level, 1)
        assert s.is_terminal()
    assert agent.policy.searched > 0 and agent.policy.rollouts > 0


def test_same_deal_and_seed_same_moves_whatever_was_played_before():
    agent = make_agent(FAST, "castellion")
    first = _play(agent, "menace", 3, limit=30)[1]
    _play(agent, "menace", 4, limit=30)  # another game moves the agent's generator
    assert _play(agent, "menace", 3, limit=30)[1] == first
    assert _play(make_agent(FAST, "castellion"), "menace", 3, limit=30)[1] == first


def test_never_reads_the_piles_order_or_a_face_down_ordeal():
    """Every decision is unchanged when the piles are re-dealt in another order and each
    face-down ordeal is replaced by another card its slot may hold (the two agents' generators
    seeded alike)."""
    rng = np.random.default_rng(0)
    policy, blind = (
        PimcPolicy(worlds=2, top=2, gap=5, horizon=1),
        PimcPolicy(worlds=2, top=2, gap=5, horizon=1),
    )
    checked = with_face_down = 0
    for seed in range(2):
        r1, r2 = np.random.default_rng([7, seed]), np.random.default_rng([7, seed])
        s = State.new_game(np.random.default_rng(seed), "menace")
        while not s.is_terminal() and checked < (seed + 1) * 60:
            o = s.determinize(0, rng)  # piles re-dealt, face-down cards drawn again
            with_face_down += sum(o.ordeals[i] != s.ordeals[i] for i in range(3) if s.face_down[i])
            a = policy(s, r1)
            assert blind(o, r2) == a, (seed, checked, s.describe_action(a))
            s.apply_action(a)
            checked += 1
    assert checked >= 100 and with_face_down > 30
    assert policy.searched > 10


def test_bad_options_refused():
    for bad, name in (
        ({"worlds": 0}, "worlds"),
        ({"top": 0}, "top"),
        ({"horizon": 4}, "horizon"),
        ({"gap": -1}, "gap"),
        ({"share": 2}, "share"),
        ({"margin": -0.1}, "margin"),
        ({"worlds": 2.5}, "worlds"),
        ({"share": True}, "share"),
    ):
        with pytest.raises(ValueError, match=name):
            PimcPolicy(**bad)
    with pytest.raises(ValueError, match="worlds"):
        make_agent("pimc:worlds=0", "castellion")
    with pytest.raises(ValueError, match="castellion only"):
        make_agent("pimc", "castle-siege")
    with pytest.raises(ValueError):
        make_agent("pimc:nope=1", "castellion")
    agent = make_agent("pimc:worlds=4,margin=0.05", "castellion", seed=0)
    assert agent.name == "pimc:worlds=4,margin=0.05"
    # the planner's options reach the planner inside
    tuned = make_agent("pimc:worlds=4,planner_w1=0.6,planner_pressure=1", "castellion", seed=0)
    assert tuned.policy.planner.weights == (1.0, 0.6, 0.1)
    assert tuned.policy.planner.pressure == 1.0
    with pytest.raises(ValueError, match="w1"):
        make_agent("pimc:planner_w1=-1", "castellion")
    # no planner_ option: each level's planner (LEVEL_PLANNER; the defaults elsewhere)
    from castle_envs.agents.search.castellion_pimc import LEVEL_PLANNER

    from castle_envs.castellion.data import SCHOOL

    levelled = make_agent("pimc:worlds=2", "castellion", seed=0).policy
    assert levelled.fixed is None
    school = LEVEL_PLANNER[SCHOOL]
    assert levelled.planners[SCHOOL].weights == (1.0, school["w1"], school["w2"])
    assert levelled.planners[1].weights == (1.0, 0.3, 0.1)
    for level, planner in ((0, levelled.planners[SCHOOL]), (1, levelled.planners[1])):
        levelled(
            State.new_game(np.random.default_rng(3), ("school", "academy")[level]),
            np.random.default_rng(0),
        )
        assert levelled.planner is planner
    assert agent.policy.worlds == 4 and agent.policy.margin == 0.05
