"""Castellion planner agent: legal, deterministic, blind to what the player cannot see, and its
compiled bastion count agrees with the rules."""

import numpy as np
import pytest
from castle_envs.agents.registry import make_agent
from castle_envs.agents.search.castellion_planner import PlannerPolicy

from castle_envs.castellion.plan import bastions
from castle_envs.castellion.rules import (
    DEFENDER_PHASE,
    DESTROY_PHASE,
    JUGGLE_PHASE,
    TRAITOR_PHASE,
    State,
    formations_of_boards,
)


def _play(level, seed, policy, limit=400):
    s = State.new_game(np.random.default_rng(seed), level)
    seq = []
    while not s.is_terminal() and len(seq) < limit:
        a = policy(s, None)
        assert s.legal_action_mask()[a], s.describe_action(a)
        seq.append(a)
        s.apply_action(a)
    return s, seq


def test_plays_legal_moves_to_the_end_at_every_level():
    for level in ("school", "academy", "menace"):
        for seed in range(3):
            s, _ = _play(level, seed, PlannerPolicy())
            assert s.is_terminal()


def test_deterministic_across_games():
    # a policy that has played other games must decide as a fresh one
    warm = PlannerPolicy()
    _play("menace", 7, warm)
    for seed in (3, 4):
        assert _play("menace", seed, warm)[1] == _play("menace", seed, PlannerPolicy())[1]


def test_never_reads_the_piles_order_or_a_face_down_ordeal():
    """Every decision is unchanged when the piles are re-dealt in another order and each
    face-down ordeal is replaced by another card its slot may hold."""
    rng = np.random.default_rng(0)
    policy, blind = PlannerPolicy(), PlannerPolicy()
    checked = with_face_down = 0
    for seed in range(4):
        s = State.new_game(np.random.default_rng(seed), "menace")
        while not s.is_terminal() and checked < 400:
            o = s.determinize(0, rng)  # piles re-dealt, face-down cards drawn again
            with_face_down += sum(o.ordeals[i] != s.ordeals[i] for i in range(3) if s.face_down[i])
            a = policy(s, None)
            assert blind(o, None) == a, (seed, checked, s.describe_action(a))
            s.apply_action(a)
            checked += 1
    assert checked > 200 and with_face_down > 100


#: planner options other than the defaults, for the compiled-against-reference tests
OTHER_WEIGHTS = {
    "w1": 0.7,
    "w2": 0.25,
    "useful": 1.3,
    "pressure": 2.0,
    "grow": 3.0,
    "info": 11.0,
    "scout": 13.0,
}


def test_compiled_value_is_the_plain_python_value_bit_for_bit():
    """``PlannerPolicy.value`` (compiled) against its plain-Python reference on every position
    one legal move away from the positions of planner games, at every level, with the
    default weights and others (a value that differed in the last bit could flip a tie)."""
    from tests.reference.castellion_planner import reference_value

    settings = ({}, {"scout": 0}, OTHER_WEIGHTS)
    checked = 0
    for level in ("school", "academy", "menace"):
        for seed in range(2):
            s = State.new_game(np.random.default_rng(500 + seed), level)
            play = PlannerPolicy()
            while not s.is_terminal():
                for a in np.flatnonzero(s.legal_action_mask())[:12]:
                    after = s.clone()
                    after.apply_action(int(a))
                    for options in settings:
                        planner = PlannerPolicy(**options)
                        ref = dict(
                            weights=planner.weights,
                            pressure=planner.pressure,
                            useful=planner.useful,
                            grow=planner.grow,
                            info=planner.info,
                            scout=planner.scout,
                        )
                        assert planner.value(after) == reference_value(after, **ref), (
                            level,
                            seed,
                            after.describe_action(int(a)),
                            options,
                        )
                    checked += 1
                s.apply_action(play(s, None))
    assert checked > 1000


def test_compiled_planner_moves_as_the_plain_python_planner():
    """The compiled planner (``search.castellion_planner_kernel``) against the plain-Python planner
    it replaced (``tests/reference/castellion_planner.py``): the same move at every decision
    of planner games and of games of random moves (which reach powers, penalties and
    reveals the planner avoids), and the same one-step and after-move values the ``pimc``
    agent reads, with the default options and others."""
    from tests.reference.castellion_planner import PlannerPolicy as Reference

    settings = ({}, {**OTHER_WEIGHTS, "pyro": 0, "reveal": 1}, {"scout": 0})
    rng = np.random.default_rng(7)
    checked = {"move": 0, "after": 0, "one_step": 0}
    for options in settings:
        new, old = PlannerPolicy(**options), Reference(**options)
        for level in ("school", "academy", "menace"):
            for seed in range(3):
                s = State.new_game(np.random.default_rng(900 + seed), level)
                while not s.is_terminal():
                    view = s.player_view()
                    move = new(view)
                    assert move == old(view), (options, level, seed, s.describe_action(move))
                    checked["move"] += 1
                    legal = np.flatnonzero(s.legal_action_mask()).tolist()
                    if s.phase in (DEFENDER_PHASE, TRAITOR_PHASE, JUGGLE_PHASE):
                        v = new.visible(view)
                        for a in legal[:6]:
                            assert new.value_after(v, a) == old.value_after(v, a)
                            checked["after"] += 1
                    if s.phase == DESTROY_PHASE:
                        v = new.visible(view)
                        for a in legal[:6]:
                            assert new.one_step(v, a) == old.one_step(v, a)
                            checked["one_step"] += 1
                    randomly = seed == 2 and rng.random() < 0.7
                    s.apply_action(int(rng.choice(legal)) if randomly else move)
    assert checked["move"] > 800 and checked["after"] > 500 and checked["one_step"] > 20, checked


def test_compiled_bastions_match_the_rules():
    rng = np.random.default_rng(1)
    seen = set()
    for level in ("school", "menace"):
        for seed in range(6):
            s = State.new_game(np.random.default_rng(seed), level)
            while not s.is_terminal():
                got = bastions(np.array(s.cells, np.int8))
                assert got == s.formations()[1]
                seen.add(got)
                legal = np.flatnonzero(s.legal_action_mask())
                s.apply_action(int(legal[rng.integers(len(legal))]))
    # random boards of two factions make bastions often enough to test both sides
    for _ in range(300):
        cells = np.full(36, -1, np.int8)
        filled = rng.random(36) < 0.6
        cells[filled] = 3 * rng.integers(0, 2, filled.sum())
        boards = [
            sum(1 << i for i in range(36) if cells[i] >= 0 and cells[i] // 3 == f) for f in range(4)
        ]
        assert bastions(cells) == formations_of_boards(boards)[1]
        seen.add(int(bastions(cells)))
    assert len(seen) >= 3


def test_spec_and_bad_options():
    agent = make_agent("planner:w1=0.5,pyro=0", "castellion", seed=0)
    assert agent.name == "planner:w1=0.5,pyro=0"
    with pytest.raises(ValueError, match="castellion only"):
        make_agent("planner", "castle-siege")
    with pytest.raises(ValueError, match="pyro"):
        PlannerPolicy(pyro=2)
    with pytest.raises(ValueError, match="w1"):
        PlannerPolicy(w1=-1)
    with pytest.raises(ValueError, match="grow"):
        PlannerPolicy(grow=-1)
    with pytest.raises(ValueError, match="grow"):
        make_agent("planner:grow=1000", "castellion")


def test_info_charges_each_face_down_card_and_a_tower_about_to_reveal_one():
    s = State.new_game(np.random.default_rng(5), "menace")
    plain, curious = PlannerPolicy(info=0), PlannerPolicy(info=30)
    assert curious.value(s) == pytest.approx(plain.value(s) - 90)
    s.face_down[2] = False
    assert curious.value(s) == pytest.approx(plain.value(s) - 60)
    # a completed tower waits for the player to turn up a card: that card counts as known
    from castle_envs.castellion.rules import REVEAL_ORDEAL_PHASE

    s.phase, s._mask = REVEAL_ORDEAL_PHASE, None
    assert curious.value(s) == pytest.approx(plain.value(s) - 30)
    with pytest.raises(ValueError, match="info"):
        make_agent("planner:info=-1", "castellion")


def test_scout_charges_the_tiles_to_one_more_tower_while_a_card_is_face_down():
    from castle_envs.castellion.moves import tower_cost

    s = State.new_game(np.random.default_rng(5), "menace")
    plain, scout = PlannerPolicy(scout=0), PlannerPolicy(scout=5)
    # an empty castle needs four tiles of one faction for its first tower
    assert scout.value(s) == pytest.approx(plain.value(s) - 5 * 4)
    s.face_down[:] = [False, False, False]
    assert scout.value(s) == pytest.approx(plain.value(s))  # nothing left to turn up
    school = State.new_game(np.random.default_rng(5), "school")
    assert scout.value(school) == pytest.approx(plain.value(school))
    # a castle that holds a tower (four Seers, one column) is charged for a second one
    from castle_envs.castellion import kernel as K

    s = State.new_game(np.random.default_rng(5), "menace")
    for row, kind in enumerate((0, 1, 0, 1)):
        s.s[K.CELL + row * K.SIZE] = kind
    s.s[K.HEIGHT] = 4
    assert s.formations() == (1, 0, 0)
    assert tower_cost(s.s, np.array([20, 20, 20, 20], np.int64)) == 4
    with pytest.raises(ValueError, match="scout"):
        make_agent("planner:scout=-1", "castellion")


def test_scout_turns_up_the_first_assault_before_it_is_met_more_often():
    """The point of ``scout``: the planner builds the tower that turns a face-down Assault
    up before it must be met (40 Menace training deals, the same for both settings)."""

    def face_up_at_first_encounter(planner):
        known = 0
        for seed in range(20_400_000, 20_400_040):
            s = State.new_game(np.random.default_rng(seed), "menace")
            while not s.is_terminal() and s.current == 0:
                before = not s.face_down[0]
                s.apply_action(planner(s))
            known += before
        return known

    assert face_up_at_first_encounter(PlannerPolicy(scout=5)) > face_up_at_first_encounter(
        PlannerPolicy(scout=0)
    )


def test_reveal_option_turns_up_the_card_after_the_current_one():
    from castle_envs.castellion.actions import REVEAL_ORDEAL
    from castle_envs.castellion.rules import REVEAL_ORDEAL_PHASE

    s = State.new_game(np.random.default_rng(2), "menace")
    s.phase, s._mask = REVEAL_ORDEAL_PHASE, None
    legal = np.flatnonzero(s.legal_action_mask()).tolist()
    assert legal == [REVEAL_ORDEAL, REVEAL_ORDEAL + 1, REVEAL_ORDEAL + 2]
    assert PlannerPolicy()(s) == REVEAL_ORDEAL
    assert PlannerPolicy(reveal=1)(s) == REVEAL_ORDEAL + 1
    s.face_down[1] = s.face_down[2] = False
    s._mask = None
    assert PlannerPolicy(reveal=1)(s) == REVEAL_ORDEAL  # nothing later left to turn up
    with pytest.raises(ValueError, match="reveal"):
        PlannerPolicy(reveal=2)
