"""The Castle Siege n-tuple afterstate value: it never reads a hidden card, its TD step
learns, its weights save and load (and bad ones are refused), and its training is
deterministic and resumable."""

import json

import numpy as np
import pytest
from castle_envs.agents.baselines.castle_siege import heuristic_policy
from castle_envs.agents.learned import castle_siege_ntuple_kernel as M
from castle_envs.agents.learned.castle_siege_ntuple import NTuplePolicy, NTupleValue
from castle_envs.agents.learned.saved import load_agent, read_card
from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch

from castle_envs.castle_siege.rules import State


def random_value(seed=0) -> NTupleValue:
    return NTupleValue(np.random.default_rng(seed).normal(0, 0.5, M.N_WEIGHTS).astype(np.float32))


def midgame(seed: int, moves: int, difficulty: str = "hard") -> State:
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if state.outcome:
            break
        state.apply_legal(heuristic_policy(state, rng))
    return state


@pytest.mark.parametrize("seed, moves", [(20_000_001, 0), (20_000_002, 6), (20_000_003, 14)])
def test_the_value_never_reads_the_unseen_cards_order(seed, moves):
    state = midgame(seed, moves)
    assert not state.outcome
    a, b = (
        state.determinize(0, np.random.default_rng(1)),
        state.determinize(0, np.random.default_rng(2)),
    )
    assert a.deck_cards() != b.deck_cards()  # the worlds differ in the unseen order only
    policy = NTuplePolicy(random_value())
    first = policy(a)
    values_a = policy.values.copy()
    second = policy(b)
    assert first == second
    np.testing.assert_array_equal(values_a, policy.values)
    # ending the turn draws unseen cards (new defenders, the hand refilled): it is rated
    assert np.isfinite(values_a[1669])


def test_a_different_hand_changes_the_value():
    # the test above would pass for a value that reads nothing: here the player's view
    # differs (a hand card swapped with a card deep in the deck)
    order = np.random.default_rng(20_000_004).permutation(52)
    other = order.copy()
    first_hand = 4 + 4 * 3  # castles, three rows of defenders: then the hand is drawn
    other[first_hand], other[-1] = order[-1], order[first_hand]
    policy = NTuplePolicy(random_value())
    policy(State.new_game(deck=order, difficulty="hard"))
    before = policy.values.copy()
    policy(State.new_game(deck=other, difficulty="hard"))
    assert not np.array_equal(np.nan_to_num(before, nan=-1), np.nan_to_num(policy.values, nan=-1))


def test_the_td_step_lowers_the_error_on_a_fixed_batch():
    rng = np.random.default_rng(0)
    feats = rng.integers(0, M.N_WEIGHTS, (64, M.MAX_FEATURES)).astype(np.int64)
    nfeat = rng.integers(40, 100, 64).astype(np.int64)
    targets = rng.random(64)
    weights = np.zeros(M.N_WEIGHTS, np.float32)
    errors = [M.update(weights, feats, nfeat, targets, 64, 0.5) for _ in range(5)]
    assert all(later < earlier for earlier, later in zip(errors, errors[1:]))


def train(seed: int, games: int = 6) -> np.ndarray:
    from castle_envs.agents.learned.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy
    from castle_envs.experiments.train_ntuple import deals

    weights = np.zeros(M.N_WEIGHTS, np.float32)
    guide = LinearPolicy(HEURISTIC_WEIGHTS).vector()
    rows = np.array([3, 4] * (games // 2), np.int64)
    M.play_games(
        deals(seed, games), rows, weights, True, 1.0, 0.5, 0.1, 0.1, True, seed, 0.5, guide,
        new_scratch(), np.zeros(games, np.bool_), np.zeros(3),
    )  # fmt: skip
    return weights


def test_training_is_deterministic_with_a_seed():
    a, b, c = train(20_000_000), train(20_000_000), train(20_000_100)
    assert np.abs(a).sum() > 0
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_save_and_load_round_trip(tmp_path):
    value = random_value(3)
    value.save(tmp_path / "m")
    agent = load_agent(tmp_path / "m", "castle-siege")
    np.testing.assert_array_equal(agent.policy.value.weights, value.weights)
    state = midgame(20_000_005, 4)
    assert agent.act(None, state.legal_action_mask(), state) == NTuplePolicy(value)(state)


def break_weights(directory, array):
    np.savez(directory / "weights.npz", weights=array)


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda d: break_weights(d, np.full(M.N_WEIGHTS, np.nan, np.float32)), "non-finite"),
        (lambda d: break_weights(d, np.zeros(M.N_WEIGHTS - 1, np.float32)), "shape"),
        (lambda d: break_weights(d, np.zeros(M.N_WEIGHTS, np.int32)), "dtype"),
        (
            lambda d: np.savez(d / "weights.npz", weights=np.zeros(3), extra=np.zeros(1)),
            "one array",
        ),
        (lambda d: pickled(d / "weights.npz"), "weights"),
        (lambda d: bare_array(d / "weights.npz"), "bare array"),
        (lambda d: (d / "weights.npz").unlink(), "no such weights file"),
        (lambda d: (d / "weights.npz").write_bytes(b"PK\x03\x04 not a zip"), "weights"),
        (lambda d: edit_card(d, policy={"tables": [["clock", 1]]}), "table layout"),
        (lambda d: edit_card(d, options={"search": 1}), "unknown ntuple_value options"),
        (lambda d: edit_card(d, options={"shaped": 2.0}), "shaped"),
        (lambda d: edit_card(d, options={"two_ply": 1}), "two_ply"),
    ],
)
def test_bad_weights_are_refused(tmp_path, damage, why):
    random_value().save(tmp_path / "m")
    damage(tmp_path / "m")
    with pytest.raises(ValueError, match="not a castle-envs model directory") as err:
        load_agent(tmp_path / "m", "castle-siege")
    assert why in str(err.value)


def pickled(path):
    with open(path, "wb") as f:
        np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)


def bare_array(path):
    with open(path, "wb") as f:
        np.save(f, np.zeros(M.N_WEIGHTS, np.float32))


def edit_card(directory, **changes):
    card = json.loads((directory / "model.json").read_text())
    card.update(changes)
    (directory / "model.json").write_text(json.dumps(card))


def test_a_model_directory_names_its_kind(tmp_path):
    random_value().save(tmp_path / "m")
    assert read_card(tmp_path / "m")["kind"] == "ntuple_value"


def test_pruning_keeps_every_move_but_needless_cards():
    # every legal move outside the filter carries a card it could leave out
    state = midgame(20_000_006, 2, "very_hard")
    b, v = state.b.astype(np.int8), state.v.astype(np.int32)
    from castle_envs.castle_siege.cards import RANK

    kept = dropped = 0
    for action in np.flatnonzero(state.legal_action_mask()):
        if M.worth_trying(b, v, action):
            kept += 1
            continue
        dropped += 1
        subset, target = divmod(int(action), 52)
        ranks = [RANK[state.hand_cards()[i]] for i in range(5) if (subset + 1) >> i & 1]
        assert sum(ranks) > RANK[target] and sum(ranks) - min(ranks) >= RANK[target]
    assert kept and dropped


def small_config(**ntuple):
    from castle_envs.experiments.config import resolve

    return resolve(
        {
            "name": "nt",
            "algo": "ntuple_value",
            "seed": 20_000_000,
            "ntuple": {
                "games": 8,
                "chunk_games": 4,
                "eval_every": 4,
                "eval_games": 2,
                "guide_until": 6,
                **ntuple,
            },
        }  # fmt: skip
    )


def test_a_stopped_run_resumes_to_the_same_weights(tmp_path):
    from castle_envs.experiments.train_ntuple import run_training

    quiet = lambda line: None  # noqa: E731
    run_training(small_config(), run_dir=tmp_path / "straight", log=quiet)
    stopped = run_training(small_config(), run_dir=tmp_path / "split", stop_after=1, log=quiet)
    assert stopped["stopped"] and stopped["games"] == 4
    summary = run_training(resume=tmp_path / "split", log=quiet)
    assert summary["games"] == 8
    weights = [
        np.load(tmp_path / run / "final_model" / "weights.npz")["weights"]
        for run in ("straight", "split")
    ]
    assert np.abs(weights[0]).sum() > 0
    np.testing.assert_array_equal(*weights)
    agent = load_agent(tmp_path / "split" / "final_model", "castle-siege")
    assert agent.policy.value.prune


def test_the_step_falls_from_lr_to_lr_end():
    from castle_envs.experiments.train_ntuple import NTupleTrainer

    falling = NTupleTrainer(small_config(lr=1.0, lr_end=0.01), log=lambda line: None)
    steps = [falling.lr_now(games) for games in range(9)]
    assert steps[0] == 1.0 and steps[-1] == pytest.approx(0.01)
    assert all(later < earlier for earlier, later in zip(steps, steps[1:]))
    assert steps[4] == pytest.approx(0.1)  # geometric: halfway in games, halfway in log
    constant = NTupleTrainer(small_config(lr=0.5), log=lambda line: None)
    assert {constant.lr_now(games) for games in range(9)} == {0.5}


@pytest.mark.parametrize(
    "change, why",
    [
        ({"seed": 5}, "20,000,000"),
        ({"ntuple": {"levels": {"impossible": 1}}}, "known difficulties"),
        ({"ntuple": {"lam": 1.5}}, "ntuple.lam"),
        ({"ntuple": {"lr": 0.0}}, "ntuple.lr"),
        ({"ntuple": {"lr_end": -0.5}}, "ntuple.lr_end"),
        ({"game": "castellion"}, "castle-siege"),
    ],
)
def test_bad_configs_are_refused(change, why):
    from castle_envs.experiments.config import resolve

    config = {"name": "nt", "algo": "ntuple_value", "seed": 20_000_000, **change}
    with pytest.raises(ValueError, match=why):
        resolve(config)


def test_the_shipped_model_plays_whole_legal_games():
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "models" / "castle_siege_ntuple_value"
    agent = load_agent(shipped, "castle-siege")
    assert read_card(shipped)["kind"] == "ntuple_value"
    for seed, difficulty in ((20_000_011, "hard"), (20_000_012, "very_hard")):
        state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
        moves = 0
        while not state.outcome:
            mask = state.legal_action_mask()
            action = agent.act(None, mask, state)
            assert mask[action], (seed, moves, action)
            state.apply_action(action)
            moves += 1
        assert moves > 0


def two_ply_values(state: State, value: NTupleValue) -> np.ndarray:
    from castle_envs.castle_siege import kernel as K

    values = np.full(1676, np.nan)
    M.best_move2(
        state.b.astype(np.int8), state.v.astype(np.int32), value.weights, False, False, True,
        0.1, np.zeros((2, K.CARD_WORDS), np.int8), np.zeros((2, K.INT_WORDS), np.int32),
        np.zeros((2, K.MASK_WIDTH), np.bool_), np.zeros((2, 52), np.int64),
        np.zeros((2, 14), np.int64), np.zeros(M.WORK, np.int64),
        np.zeros(M.MAX_FEATURES, np.int64), values,
    )  # fmt: skip
    return values


@pytest.mark.parametrize("seed, moves", [(20_000_021, 0), (20_000_022, 8)])
def test_the_two_ply_player_never_reads_the_unseen_cards_order(seed, moves):
    state = midgame(seed, moves, "very_hard")
    a, b = (
        state.determinize(0, np.random.default_rng(1)),
        state.determinize(0, np.random.default_rng(2)),
    )
    assert a.deck_cards() != b.deck_cards()
    value = random_value(5)
    values_a, values_b = two_ply_values(a, value), two_ply_values(b, value)
    np.testing.assert_array_equal(values_a, values_b)
    assert np.isfinite(values_a[1669])  # the turn's end, which draws, is rated


def test_a_move_that_draws_nothing_is_worth_its_best_next_move():
    # the two-ply value of a plain attack is the 1-ply value of the position after it
    value = random_value(6)
    state = midgame(20_000_023, 0, "very_hard")
    deep = two_ply_values(state, value)
    policy = NTuplePolicy(value)
    checked = 0
    for action in np.flatnonzero(~np.isnan(deep)):
        after = state.clone()
        deck = len(after.deck_cards())
        after.apply_action(int(action))
        if after.outcome or len(after.deck_cards()) < deck:
            continue
        policy(after)
        assert deep[action] == pytest.approx(np.nanmax(policy.values)), action
        checked += 1
    assert checked > 3


def test_a_two_ply_model_plays_whole_legal_games_by_best_move2(tmp_path):
    value = random_value(7)
    value.two_ply = True
    value.save(tmp_path / "m")
    agent = load_agent(tmp_path / "m", "castle-siege")
    assert agent.policy.value.two_ply
    state = State.new_game(np.random.default_rng(20_000_024), difficulty="very_hard")
    while not state.outcome:
        mask = state.legal_action_mask()
        action = agent.act(None, mask, state)
        assert mask[action]
        expected = two_ply_values(state, value)
        assert action == int(np.nanargmax(expected))
        state.apply_action(action)
