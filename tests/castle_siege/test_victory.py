"""The rules option ``victory`` (RULES.md, interpretation 9): ``"any_time"`` (default: the
fourth capture wins even with an empty deck; a turn ending on an empty deck loses) and
``"deck_left"`` (the victory sentence read strictly: "capture all four castles ... before the
reinforcement deck is exhausted", so the fourth castle must fall while the deck holds a card,
and the game is lost the moment the deck is empty while a castle stands).

Each scenario runs on ``rules.State`` and, from the same saved position, on the compiled
kernel (``write_state`` + ``castle_siege.kernel.apply``), which must agree move for move."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import castle_envs  # noqa: F401
from castle_envs.castle_siege.actions import END_BATTLE, RECYCLE_BASE, REGROUP, play_action
from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.castle_siege.rules import BATTLE, PRECISION, RULE_DEFAULTS, State
from castle_envs.core.errors import InvalidStateError

from .helpers import C, position, slots

ENV_ID = "castle_envs/CastleSiege-v0"
KINGS = C("KS", "KC", "KH", "KD")
TENS = C("10S", "10C", "10H", "10D")


def rules(victory):
    return {"attack": "any", "defeated": "discard", "victory": victory}


def play(state, names, target):
    """The action playing the named hand cards at ``target`` (applied by the caller)."""
    return play_action(slots(state, *names), C(target)[0])


def run_both(state, actions):
    """Apply ``actions`` (ids, or callables of the current Python state giving one) to the
    Python state and to kernel rows written from it; after every action the two positions
    must be equal. Returns the final Python state."""
    pytest.importorskip("numba")
    from castle_envs.castle_siege import kernel as K
    from castle_envs.castle_siege.vector import read_state, write_state

    b = np.zeros(K.CARD_WORDS, np.int8)
    v = np.zeros(K.INT_WORDS, np.int32)
    write_state(b, v, state, state.rows, state.rule_options())
    assert v[K.STRICT] == (state.victory == "deck_left")
    s = state.clone()
    for action in actions:
        action = int(action(s) if callable(action) else action)
        s.apply_action(action)
        K.apply(b, v, action, s.defeated == "leave_game")
        kernel = read_state(b, v, s.rows, s.rule_options())
        assert kernel.to_dict() == s.to_dict(), action
    return s


# --- a fourth capture with an empty deck ----------------------------------------------------
def endgame(victory, deck):
    """One castle (K♠) left, no defender, 2♠ in hand: ending the turn deals the top deck card
    (A♥) as its defender and draws up to five."""
    return position(
        hand=C("2S"),
        castles=KINGS,
        captured=(False, True, True, True),
        deck=deck,
        rules=rules(victory),
    )


def test_fourth_capture_with_empty_deck_wins_under_any_time():
    s = run_both(
        endgame("any_time", C("AH", "6S", "7S")),
        [
            END_BATTLE,  # A♥ defends; 6♠ 7♠ drawn; deck empty
            lambda s: play(s, ["2S"], "AH"),
            lambda s: play(s, ["6S", "7S"], "KS"),
        ],
    )  # 13 = K♠, with the deck empty
    assert s.won and s.deck_size == 0 and s.returns()[0] == 1.0


def test_same_line_is_lost_under_deck_left_when_the_draw_empties_the_deck():
    s = run_both(endgame("deck_left", C("AH", "6S", "7S")), [END_BATTLE])
    # the reinforcement draw took the last card while K♠ stands: lost at once, though the
    # hand could still capture it
    assert s.is_terminal() and s.outcome == -1 and not s.won
    assert s.deck_size == 0 and s.hand_cards() == sorted(C("2S", "6S", "7S"))
    assert not s.legal_action_mask().any()


def test_fourth_capture_with_a_card_left_wins_under_deck_left():
    s = run_both(
        endgame("deck_left", C("AH", "6S", "7S", "9C", "10C", "3D")),
        [
            END_BATTLE,  # draws 6♠ 7♠ 9♣ 10♣; 3♦ stays
            lambda s: play(s, ["2S"], "AH"),
            lambda s: play(s, ["6S", "7S"], "KS"),
        ],
    )
    assert s.won and s.deck_cards() == C("3D")


def test_existing_empty_deck_capture_scenario_cannot_even_be_loaded_under_deck_left():
    # under deck_left an empty deck while a castle stands is already a loss, so a playing
    # position with an empty deck is not a state of that game
    with pytest.raises(InvalidStateError, match="deck_left"):
        position(
            hand=C("6S", "7S"),
            castles=KINGS,
            captured=(False, True, True, True),
            deck=[],
            rules=rules("deck_left"),
        )
    s = position(
        hand=C("6S", "7S"),
        castles=KINGS,
        captured=(False, True, True, True),
        deck=[],
        rules=rules("any_time"),
    )
    s.apply_action(play(s, ["6S", "7S"], "KS"))
    assert s.won


# --- a deck emptied mid-turn ------------------------------------------------------------------
@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_flush_siege_draw_of_the_last_card(victory):
    s = position(
        hand=C("3H", "5H", "9S"),
        columns=(C("7D"), C("QD"), (), ()),
        castles=TENS,
        deck=C("KS"),
        rules=rules(victory),
    )
    s = run_both(s, [lambda s: play(s, ["3H", "5H"], "7D")])  # 8 > 7, one suit: draws K♠
    assert s.deck_size == 0 and s.hand_cards() == sorted(C("9S", "KS"))
    if victory == "any_time":
        assert not s.is_terminal() and s.phase == BATTLE  # the turn is played out
        s = run_both(s, [lambda s: play(s, ["KS"], "QD"), END_BATTLE])
        assert s.outcome == -1  # it ends on an empty deck
    else:
        assert s.outcome == -1 and not s.legal_action_mask().any()  # lost at once


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_flush_and_precision_strike_emptying_the_deck(victory):
    # the Flush Siege draw comes first ("immediately") and takes the last card; under
    # deck_left the game is lost before the Precision Strike could refill the deck
    s = position(
        hand=C("3H", "4H"),
        columns=(C("7D"), C("QD"), (), ()),
        castles=TENS,
        deck=C("KS"),
        rules=rules(victory),
    )
    s = run_both(s, [lambda s: play(s, ["3H", "4H"], "7D")])
    assert s.deck_size == 0 and s.hand_cards() == C("KS")
    if victory == "any_time":
        assert s.phase == PRECISION and not s.is_terminal()
        s = run_both(s, [RECYCLE_BASE + C("4H")[0]])
        assert s.deck_cards() == C("4H") and not s.is_terminal()
    else:
        assert s.outcome == -1 and not s.legal_action_mask().any()


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_regroup_drawing_the_last_cards(victory):
    s = position(hand=C("2S", "3S"), castles=KINGS, deck=C("AH", "2H", "3H"), rules=rules(victory))
    s = run_both(s, [REGROUP])
    assert s.deck_size == 0 and s.hand_cards() == C("AH", "2H", "3H")
    assert s.outcome == (0 if victory == "any_time" else -1)


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_end_of_turn_deal_emptying_the_deck_loses_under_both(victory):
    s = position(
        hand=C("2S"),
        columns=(C("9D"), (), (), ()),
        castles=TENS,
        deck=C("AS", "AC"),
        rules=rules(victory),
    )
    s = run_both(s, [END_BATTLE])
    assert s.outcome == -1


def test_precision_strike_keeps_a_one_card_deck_alive_under_deck_left():
    # a capture or an attack spends hand cards only: the deck's last card stays
    s = position(
        hand=C("3S", "4C", "KH"),
        columns=(C("7D"), C("QD"), (), ()),
        castles=TENS,
        deck=C("KS"),
        rules=rules("deck_left"),
    )
    s = run_both(
        s,
        [
            lambda s: play(s, ["3S", "4C"], "7D"),  # exact, two suits: no draw
            RECYCLE_BASE + C("7D")[0],
            lambda s: play(s, ["KH"], "QD"),
        ],
    )
    assert not s.is_terminal() and s.deck_cards() == C("KS", "7D")


def test_new_games_under_deck_left_start_with_a_deck():
    for difficulty in ("easy", "very_hard"):
        s = State.new_game(np.random.default_rng(0), difficulty, victory="deck_left")
        assert s.victory == "deck_left" and s.deck_size > 0 and not s.outcome


# --- saving, options, errors ------------------------------------------------------------------
def test_to_dict_from_dict_round_trip_keeps_the_option():
    s = State.new_game(np.random.default_rng(3), "hard", victory="deck_left")
    data = s.to_dict()
    assert data["rules"] == {"attack": "any", "defeated": "discard", "victory": "deck_left"}
    back = State.from_dict(data)
    assert back.victory == "deck_left" and back.to_dict() == data
    assert State.from_json(s.to_json()).to_dict() == data
    assert (
        State.new_game(np.random.default_rng(3), "hard").to_dict()["rules"]["victory"] == "any_time"
    )


def test_states_saved_without_the_option_read_as_any_time():
    data = State.new_game(np.random.default_rng(4), "easy").to_dict()
    del data["rules"]["victory"]
    assert State.from_dict(data).victory == "any_time"


def test_bad_option_values_are_named():
    assert RULE_DEFAULTS["victory"] == "any_time"
    with pytest.raises(
        ValueError,
        match=r"unknown victory rule 'sudden'; choose one of "
        r"\['any_time', 'deck_left'\]",
    ):
        State.new_game(difficulty="easy", victory="sudden")
    with pytest.raises(ValueError, match="unknown victory rule 'sudden'"):
        gymnasium.make(ENV_ID, victory="sudden")
    data = State.new_game(np.random.default_rng(5), "easy").to_dict()
    data["rules"]["victory"] = "sudden"
    with pytest.raises(InvalidStateError, match="rules.victory must be one of"):
        State.from_dict(data)
    data["rules"]["victory"] = "deck_left"
    data["rules"]["speed"] = 1
    with pytest.raises(InvalidStateError, match="unknown keys"):
        State.from_dict(data)


def test_a_deck_left_win_must_leave_a_card():
    s = position(
        hand=C("6S", "7S"),
        castles=KINGS,
        captured=(False, True, True, True),
        deck=C("AH"),
        rules=rules("deck_left"),
    )
    s.apply_action(play(s, ["6S", "7S"], "KS"))
    data = s.to_dict()
    assert s.won and State.from_dict(data).won
    data["discard"] = sorted(data["discard"] + data["deck"])
    data["deck"] = []
    with pytest.raises(InvalidStateError, match="deck_left"):
        State.from_dict(data)


def test_env_passes_the_option_through_and_checks_saved_states():
    env = gymnasium.make(ENV_ID, difficulty="easy", victory="deck_left")
    env.reset(seed=0)
    assert env.unwrapped.rules["victory"] == "deck_left"
    assert env.unwrapped.state.victory == "deck_left"
    saved = State.new_game(np.random.default_rng(1), "easy").to_dict()  # any_time
    with pytest.raises(InvalidStateError, match="'victory': 'any_time'"):
        env.reset(options={"state": saved})
    assert CastleSiegeEnv("easy").rules["victory"] == "any_time"


def test_random_games_under_deck_left_never_end_won_with_an_empty_deck():
    env = CastleSiegeEnv("easy", victory="deck_left")
    rng = np.random.default_rng(0)
    ended = 0
    for seed in range(60):
        _, info = env.reset(seed=seed)
        while True:
            state = env.state
            assert state.outcome or state.deck_size > 0
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            _, _, term, trunc, info = env.step(action)
            if term or trunc:
                ended += 1
                assert (env.state.deck_size > 0) == bool(info["won"])
                break
    assert ended == 60


@pytest.mark.parametrize("victory", ["any_time", "deck_left"])
def test_check_env(victory):
    env = gymnasium.make(ENV_ID, difficulty="easy", illegal_action="penalty", victory=victory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_solve_command_takes_the_option(capsys):
    import json

    from castle_envs.experiments.cli import main

    base = [
        "solve",
        "--difficulty",
        "easy",
        "--deals",
        "3",
        "--budget",
        "3000",
        "--random-games",
        "1",
        "--probe-policy",
        "none",
        "--json",
    ]
    summaries = {}
    for victory in ("any_time", "deck_left"):
        assert main(base + ["--victory", victory]) == 0
        summaries[victory] = json.loads(capsys.readouterr().out)
        assert summaries[victory]["rules"]["victory"] == victory
    assert summaries["deck_left"]["wins_with_empty_deck"] == 0
    assert (
        summaries["deck_left"]["winnable"]
        <= summaries["any_time"]["winnable"] + summaries["any_time"]["unknown"]
    )
    assert main(base + ["--victory", "sudden"]) == 2
    assert "invalid choice" in capsys.readouterr().err
