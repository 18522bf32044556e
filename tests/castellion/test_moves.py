"""Castellion's move view (castle_envs/castellion/moves.py): the Python, compiled and
batched envs agree, the rows are the legal moves, each row says what its move does (the
formations a placement completes or cancels, the foundation, the Traitors and encounter,
the planner's cost), and nothing hidden is read."""

import warnings

import numpy as np
import pytest
from castle_envs.agents.baselines.castellion import heuristic_policy
from gymnasium.utils.env_checker import check_env

from castle_envs.castellion import moves as M
from castle_envs.castellion.actions import (
    DISCARD_TRAITOR,
    ENCOUNTER_NOW,
    PLACE,
    PLACE_LEFT,
    PLACE_TRAITOR,
)
from castle_envs.castellion.rules import DESTROY_PHASE, State
from castle_envs.moves import (
    CastellionMoves,
    feature_names,
    make_move_env,
    make_move_vec,
    move_view,
)

from .helpers import position, tile

LEVELS = ("school", "academy", "menace")


def _rows(state):
    out, n = CastellionMoves().from_state(state)
    return {
        int(a): dict(zip(M.FEATURES, out["move_features"][i]))
        for i, a in enumerate(out["move_ids"][:n])
    }


@pytest.mark.parametrize("compiled", [False, True])
def test_check_env(compiled):
    env = make_move_env("castellion", compiled=compiled, level="menace", illegal_action="penalty")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped.*")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("level", LEVELS)
def test_python_compiled_and_batched_views_agree(level):
    n = 3
    envs = make_move_vec("castellion", n, level=level)
    singles = [make_move_env("castellion", compiled=bool(i % 2), level=level) for i in range(n)]
    batch, _ = envs.reset(seed=20_000_000)
    assert envs.observation_space.contains(batch)
    obs = [e.reset(seed=20_000_000 + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(150):
        actions = np.zeros(n, np.int64)
        for i, e in enumerate(singles):
            for key in ("observation", "move_features", "move_ids", "move_mask"):
                assert np.array_equal(obs[i][key], batch[key][i]), key
            assert e.observation_space.contains(obs[i])
            rows = np.flatnonzero(obs[i]["move_mask"])
            actions[i] = obs[i]["move_ids"][rng.choice(rows)]
        batch, _, _, _, _ = envs.step(actions)
        for i, e in enumerate(singles):
            o, _, term, trunc, _ = e.step(actions[i])
            obs[i] = e.reset()[0] if term or trunc else o  # the batch autoresets alike


def test_rows_are_the_legal_moves_with_one_kind_each():
    view = move_view("castellion")
    assert view.capacity == 137 and feature_names("castellion") == M.FEATURES
    rng = np.random.default_rng(20_000_001)
    positions = 0
    for level in LEVELS:
        for _ in range(4):
            state = State.new_game(rng, level)
            while not state.is_terminal():
                out, n = view.from_state(state)
                legal = np.flatnonzero(state.legal_action_mask())
                assert n == len(legal) and out["move_mask"].sum() == n
                assert out["move_ids"][:n].tolist() == legal.tolist()
                feats = out["move_features"][:n]
                assert feats.min() >= 0 and feats.max() <= 1
                assert (feats[:, : len(M.KINDS)].sum(1) == 1).all()
                assert (feats[:, M.CONTEXT + state.level] == 1).all()
                state.apply_action(heuristic_policy(state, rng))
                positions += 1
    assert positions > 500


def test_a_placement_that_completes_a_line_or_cancels_one_says_so():
    # three pyros in the foundation: a fourth beside them makes a line; then a fifth cancels
    state = position(castle=["P^ P# Po S^"], hand="P#")
    rows = _rows(state)
    left = rows[PLACE_LEFT]  # a new left column: P# beside P^
    assert left["place"] == left["tile_pyro"] == left["tile_square"] == 1
    assert left["completes_line"] == 1 and left["lines/9"] == pytest.approx(1 / 9)
    assert left["new_column"] == 1 and left["foundation_cell"] == 1 and left["group/8"] == 0.5
    assert left["group_can_form"] == 1
    on_seer = rows[PLACE + 3]  # on top of the seer: no line
    assert on_seer["completes_line"] == 0 and on_seer["row/5"] == pytest.approx(0.2)
    assert rows[PLACE + 4]["foundation/6"] == pytest.approx(5 / 6)
    state = position(castle=["P^ P# Po P^ S#"], hand="P#")
    rows = _rows(state)
    assert rows[PLACE_LEFT]["cancels_formation"] == 1 and rows[PLACE_LEFT]["lines/9"] == 0
    assert rows[PLACE_LEFT]["group_can_form"] == 0


def test_traitor_rows_name_the_trigger_the_encounter_and_the_discard_cost():
    # Exam I needs a tower, a bastion and a line; four Traitors lie beside it (of 5)
    castle = ["S^ P# Po P^ P# C^", "S# . C# . Co", "So . C^", "S^"]
    state = position(castle=castle, hand="T", beside=[(4, 0), (0, 0), (0, 0)])
    row = _rows(state)[PLACE_TRAITOR]
    assert row["place_traitor"] == row["tile_traitor"] == row["triggers_encounter"] == 1
    assert row["traitors_beside/5"] == 1 and row["traitors_to_trigger/5"] == 0
    assert row["encounter_passes"] == 0 and row["encounter_unknown"] == 0
    after = state.clone()
    after.apply_action(PLACE_TRAITOR)
    assert after.outcome == -1  # the row said it would not pass
    # at the Menace a Traitor's discard destroys 4 tiles less one per line of defense
    menace = position(level="menace", castle=["P^ P# Po P^ S# C^", "S#"], hand="T")
    assert menace.formations()[2] == 1
    cost = _rows(menace)[DISCARD_TRAITOR]["traitor_discard_cost/4"]
    assert cost == pytest.approx(3 / 4)
    assert _rows(menace)[PLACE_TRAITOR]["encounter_unknown"] == 0  # 1 of 2: no encounter yet


def test_encounter_rows_match_what_the_rules_then_do():
    # "passes": the encounter now passes the lowest ordeal with no tile to give up
    rng = np.random.default_rng(20_000_002)
    checked = {0.0: 0, 1.0: 0}
    for level in ("academy", "menace"):
        for _ in range(12):
            state = State.new_game(rng, level)
            while not state.is_terminal():
                if state.legal_action_mask()[ENCOUNTER_NOW] and not state.face_down[state.current]:
                    passes = _rows(state)[ENCOUNTER_NOW]["encounter_passes"]
                    after = state.clone()
                    after.apply_action(ENCOUNTER_NOW)
                    clean = (
                        after.outcome >= 0
                        and after.current == state.current + 1
                        and after.phase != DESTROY_PHASE
                    )
                    assert passes == float(clean)
                    checked[float(passes)] += 1
                state.apply_action(heuristic_policy(state, rng))
    assert checked[0.0] > 20 and checked[1.0] > 0


def test_the_plan_costs_are_the_planners():
    # the planner's costs of the unresolved ordeals in plain Python (its value's loop)
    from tests.reference.castellion_planner import reference_costs

    rng = np.random.default_rng(20_000_003)
    seen = 0
    for level in LEVELS:
        for _ in range(3):
            state = State.new_game(rng, level)
            while not state.is_terminal():
                if state.hand >= 0 and state.hand < 12 and state.phase == 1:
                    for a, row in _rows(state).items():
                        if not PLACE <= a <= PLACE_LEFT:
                            continue
                        after = state.clone()
                        after.apply_action(a)
                        if after.current != state.current or after.outcome:
                            continue
                        expect = reference_costs(after)
                        got = [row[f"cost_{k}/60"] for k in ("current", "next", "third")]
                        assert got == pytest.approx([min(c, 60) / 60 for c in expect])
                        seen += 1
                state.apply_action(heuristic_policy(state, rng))
    assert seen > 100


def test_rows_read_only_what_the_player_sees():
    view = CastellionMoves()
    rng = np.random.default_rng(20_000_004)
    checked = face_down = 0
    for level in ("academy", "menace"):
        for _ in range(3):
            state = State.new_game(rng, level)
            while not state.is_terminal():
                out, _ = view.from_state(state)
                for k in range(2):  # the piles' order and the face-down cards drawn again
                    other = state.determinize(0, np.random.default_rng(k))
                    face_down += sum(other.ordeals[i] != state.ordeals[i] for i in range(3))
                    again, _ = view.from_state(other)
                    for key in out:
                        assert np.array_equal(out[key], again[key]), key
                checked += 1
                state.apply_action(heuristic_policy(state, rng))
    assert checked > 200 and face_down > 50


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="capacity"):
        CastellionMoves(0)
    from castle_envs.moves import MoveFeatureObservation

    with pytest.raises(ValueError, match="Castle Siege or Castellion"):
        MoveFeatureObservation(make_move_env("castle-rooms").unwrapped)
    assert tile("P#") == 10
