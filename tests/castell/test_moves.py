"""Castell's move view (castle_envs/castell/moves.py): the PettingZoo wrapper passes api_test,
the rows are exactly the legal moves, each row says what its move does, and no row reads the
bag's order."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

from castle_envs.castell import data as D
from castle_envs.castell.actions import ACTIONS, END_TURN, AddLevel, Move, Recruit, Train
from castle_envs.castell.measure import heuristic_action
from castle_envs.castell.moves import DIST, FEATURES, CastellMoves, move_rows, next_festival
from castle_envs.moves import feature_names, make_move_env, move_view

from .helpers import act, build, clear_hand, deal, give


def _row(state, move):
    return dict(zip(FEATURES, move_rows(state, [ACTIONS.encode(move)])[0]))


@pytest.mark.parametrize("players", [2, 4])
def test_the_wrapped_env_passes_pettingzoo_api_test(players):
    env = make_move_env("castell", num_players=players)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=200)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    rows = obs["move_mask"] == 1
    assert sorted(obs["move_ids"][rows]) == np.flatnonzero(obs["action_mask"]).tolist()
    other = next(a for a in env.agents if a != env.agent_selection)
    assert not env.observe(other)["move_mask"].any()


def test_rows_are_the_legal_moves_with_one_kind_each():
    view = move_view("castell")
    assert view.capacity == 395 and feature_names("castell") == FEATURES
    rng = np.random.default_rng(20_000_000)
    positions = 0
    for players in (2, 3):
        state = deal(players, seed=int(rng.integers(1 << 30)))
        while not state.is_terminal():
            out, n = view.from_state(state)
            legal = np.flatnonzero(state.legal_action_mask())
            assert n == len(legal) and out["move_ids"][:n].tolist() == legal.tolist()
            feats = out["move_features"][:n]
            assert feats.min() >= 0 and feats.max() <= 1
            assert (feats[:, :13].sum(1) == 1).all()
            state.apply_action(
                heuristic_action(state) if rng.random() < 0.8 else int(rng.choice(legal))
            )
            positions += 1
    assert positions > 300
    assert view.from_state(state)[1] == 0


def test_a_move_row_names_the_region_and_the_next_festival():
    state = deal(2, seed=3)
    fest = next_festival(state)
    target = int(state.fest_region[fest])
    row = _row(state, Move(target))  # the first move may go anywhere
    assert row["move"] == row[f"region_{D.REGION_ABBR[target]}"] == row["moved"] == 1
    assert row["at_next_festival"] == 1 and row["festival_distance/3"] == 0
    assert row["region_castellers/5"] == pytest.approx(state.regions[target].sum() / 5)
    far = int(np.argmax(DIST[target]))
    away = _row(state, Move(far))
    assert away["at_next_festival"] == 0
    assert away["festival_distance/3"] == pytest.approx(min(DIST[far, target], 3) / 3)
    assert _row(state, Move(far))["rounds_to_next_festival/8"] == pytest.approx(
        (D.CALENDAR[fest][0] - state.round) / 8
    )


def test_recruit_train_and_level_rows_say_what_changes():
    state = deal(2, seed=4)
    act(state, Move(0))
    size = int(np.flatnonzero(state.regions[0])[0])
    row = _row(state, Recruit(size + 1))
    assert row["recruit"] == 1 and row["size/10"] == pytest.approx((size + 1) / 10)
    assert row["owned_of_size/8"] == pytest.approx(min(state.hand[0, size] + 1, 8) / 8)
    assert row["second_recruit_open"] == 1 and row["free_castellers/15"] > 0
    trainable = [k for k in range(5) if state.legal_action_mask()[ACTIONS.encode(Train(k))]]
    if trainable:
        row = _row(state, Train(trainable[0]))
        assert row["train"] == row[f"skill_{D.SKILLS[trainable[0]].lower()}"] == 1
        assert row["skill_after/3"] == pytest.approx(1 / 3) and row["trained"] == 1
    clear_hand(state, 0)
    give(state, 0, 9, 9, 9, 7, 7, 5, 3)
    state._mask = None
    build(state, (3, 9), (2, 7))
    row = _row(state, AddLevel(1, 5, 0))
    assert row["add_level"] == 1 and row["level_width/8"] == pytest.approx(1 / 8)
    assert row["tower_levels/10"] == pytest.approx(0.3)
    assert row["tower_castellers/30"] == pytest.approx(6 / 30)
    assert row["tower_bottom_width/8"] == pytest.approx(3 / 8)
    assert row["free_castellers/15"] == pytest.approx(1 / 15)
    top = _row(state, ACTIONS.decode(ACTIONS.encode("dismantle the top level")))
    assert top["dismantle_top"] == 1 and top["tower_levels/10"] == pytest.approx(0.1)
    end = _row(state, ACTIONS.decode(END_TURN))
    assert end["end_turn"] == 1 and end["tower_levels/10"] == pytest.approx(0.2)


def test_a_four_level_tower_with_the_festival_numbers_is_ready():
    state = deal(2, seed=5)
    fest = next_festival(state)
    sizes = state.fest_sizes[fest]
    clear_hand(state, 0)
    big = [10, 10, 10, 8, 8, 6, 4]
    give(state, 0, *big)
    state._mask = None
    build(state, (3, 10), (2, 8), (1, 6))
    row = _row(state, AddLevel(1, 4, 0))
    in_tower = {10, 8, 6, 4}
    ready = all(s + 1 in in_tower for s in sizes)
    assert row["tower_festival_ready"] == ready
    assert row["tower_levels/10"] == pytest.approx(0.4)
    if ready:
        matches = sum({10: 3, 8: 2, 6: 1, 4: 1}[n] for n in {s + 1 for s in sizes})
        assert row["tower_score_next/20"] == pytest.approx((4 + matches) / 20)


def test_rows_do_not_read_the_bags_order():
    view = CastellMoves()
    rng = np.random.default_rng(20_000_001)
    state = deal(3, seed=7)
    checked = 0
    while not state.is_terminal() and checked < 300:
        out, _ = view.from_state(state)
        other, _ = view.from_state(state.determinize(0, rng))
        for key in out:
            assert np.array_equal(out[key], other[key]), key
        state.apply_action(heuristic_action(state))
        checked += 1
    assert checked > 150 and state.round > 5


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="no compiled env"):
        make_move_env("castell", compiled=True)
    with pytest.raises(ValueError, match="capacity"):
        CastellMoves(0)
