"""castle-envs play: Castle Siege's moves listed by usefulness, the help that
says how hand slots are numbered agreeing with the hand shown, text wrapped to the terminal
between words, events announced as they happen, phases shown in words — each checked with
the play loop driven by scripted input."""

import io
import re

import numpy as np
from castle_envs.experiments.cli import build_parser
from castle_envs.experiments.play import Session, _ordered, run, wrap
from castle_envs.experiments.records import final_state, load
from hypothesis import given, settings
from hypothesis import strategies as st

from castle_envs.castellion.rules import PHASE_NAMES as CASTELLION_PHASES
from castle_envs.castle_siege import render as siege_render
from castle_envs.castle_siege.actions import Discard, Play
from castle_envs.castle_siege.cards import RANKS, card_name
from castle_envs.castle_siege.render import (
    MOVE_CAPTURE as CAPTURE,
)
from castle_envs.castle_siege.render import (
    MOVE_EXACT as EXACT,
)
from castle_envs.castle_siege.render import (
    MOVE_OTHER as OTHER,
)
from castle_envs.castle_siege.render import (
    MOVE_OVERKILL as OVERKILL,
)
from castle_envs.castle_siege.render import (
    MOVE_ROYAL as ROYAL,
)
from castle_envs.castle_siege.render import (
    move_order as _siege_usefulness,
)
from castle_envs.castle_siege.rules import EVENTS, State
from castle_envs.castle_siege.rules import PHASE_NAMES as SIEGE_PHASES


def _play(argv, script, width=0):
    args = build_parser().parse_args(["play", *argv, "--width", str(width)])
    out = io.StringIO()
    assert run(args, stdin=io.StringIO(script), stdout=out) == 0
    return out.getvalue()


def _random_position(seed: int, difficulty: str, moves: int) -> State:
    rng = np.random.default_rng(seed)
    state = State.new_game(rng, difficulty)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(np.flatnonzero(state.legal_action_mask()))))
    return state


# --- moves by usefulness -------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    difficulty=st.sampled_from(["easy", "hard", "very_hard"]),
    moves=st.integers(0, 60),
)
def test_siege_moves_are_listed_by_usefulness(seed, difficulty, moves):
    state = _random_position(seed, difficulty, moves)
    if state.is_terminal():
        return
    legal, _ = _ordered(
        state, state.legal_action_mask(), lambda s, a: s.describe_action(a), _siege_usefulness
    )
    keys = [_siege_usefulness(state, a) for a in legal]
    assert keys == sorted(keys) and sorted(legal) == list(np.flatnonzero(state.legal_action_mask()))
    for action, (kind, waste, cards) in zip(legal, keys):
        move = state.actions.decode(action)
        after = state.clone()
        after.apply_action(action)
        grew = {e: int(after.events[i] - state.events[i]) for i, e in enumerate(EVENTS)}
        if kind == CAPTURE:
            assert isinstance(move, Play) and grew["castles_captured"] == 1
        elif kind == EXACT:  # an exact hit is a Precision Strike
            assert grew["precision_strikes"] == 1 and grew["defenders_defeated"] == 1
        elif kind == OVERKILL:
            total = sum(RANKS[int(state.hand[i])] for i in move.slots)
            assert waste == total - RANKS[move.target] > 0 and cards == len(move.slots)
            assert grew["precision_strikes"] == 0 and grew["defenders_defeated"] == 1
        else:
            assert kind in (ROYAL, OTHER) and not isinstance(move, Play)


def _waste(line: str):
    """A listed attack's rank wasted, read from its words ('attack K♠ with 10♠ + 3♥')."""
    m = re.match(r"\s*\d+\s+attack (\S+) with (.*)$", line)
    if not m:
        return None
    rank = {card_name(c): RANKS[c] for c in range(52)}
    return sum(rank[c] for c in m[2].split(" + ")) - rank[m[1]]


def test_the_first_page_shows_exact_hits_before_over_kill():
    text = _play(["castle-siege", "--difficulty", "hard", "--seed", "7"], "q\n")
    assert "326 legal moves, page 1 of 17" in text
    lines = [
        ln
        for ln in text.split("page 1 of 17")[1].split("move>")[0].splitlines()
        if re.match(r"\s+\d+\s", ln)
    ]
    wastes = [_waste(ln) for ln in lines]
    # turn 1 of this deal: 13 exact hits, end battle, then over-kill by the rank wasted
    assert wastes[:13] == [0] * 13 and lines[13].endswith("end battle phase")
    assert all(w > 0 for w in wastes[14:]) and wastes[14:] == sorted(wastes[14:])
    assert lines[0].endswith("attack 10♣ with 10♠")


# --- the help's slot numbering is the hand shown -------------------------------------------
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 80))
def test_hand_slots_are_numbered_as_the_help_says(seed, moves):
    state = _random_position(seed, "very_hard", moves)
    hand = state.hand_cards()
    shown = re.search(r"^hand  (.*)$", siege_render.render_ansi(state), re.M)[1]
    if hand:
        assert shown.split() == [f"{i}:{card_name(c)}" for i, c in enumerate(hand)]
    # the help: by suit (♠ ♣ ♥ ♦), then by rank within a suit
    order = [("♠♣♥♦".index(card_name(c)[-1]), RANKS[c]) for c in hand]
    assert order == sorted(order)
    for action in np.flatnonzero(state.legal_action_mask()):
        move = state.actions.decode(int(action))
        if isinstance(move, Discard):  # "discard slot i" discards the card shown as i
            assert state.describe_action(int(action)) == f"discard {card_name(hand[move.slot])}"


def test_the_help_says_the_order_the_hand_is_shown_in():
    text = _play(["castle-siege", "--seed", "3"], "?\nq\n")
    assert "lowest card first" not in text
    assert text.count("in the order the hand is shown: by suit (♠ ♣ ♥ ♦), then by rank") == 2
    hand = re.search(r"^hand  (.*)$", text, re.M)[1].split()
    cards = [h.split(":")[1] for h in hand]
    assert [("♠♣♥♦".index(c[-1]), c) for c in cards] == sorted(
        ("♠♣♥♦".index(c[-1]), c) for c in cards
    ) or len(cards) < 2


# --- wrapping -------------------------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(width=st.integers(20, 120), game=st.sampled_from(["castle-siege", "castellion"]))
def test_text_is_wrapped_to_the_width_between_words(width, game):
    script = "?\n0\n0\nzzzz\nq\n"
    whole = _play([game, "--seed", "4"], script, width=0)
    wrapped = _play([game, "--seed", "4"], script, width=width)
    assert wrapped.split() == whole.split()  # no word cut in two
    for line in wrapped.splitlines():
        assert len(line.replace("move> ", "")) <= width or " " not in line.strip(), line


def test_wrap_keeps_a_move_number_s_indent():
    line = "   12  attack K♠ with 10♠ + 3♥ and a long tail of words to wrap somewhere"
    out = wrap(line, 30).splitlines()
    assert len(out) > 1 and all(ln.startswith(" " * 7) for ln in out[1:])
    assert wrap("x" * 50, 20) == "x" * 50


def test_the_terminal_width_is_the_default(monkeypatch):
    monkeypatch.setenv("COLUMNS", "33")
    session = Session(io.StringIO(), io.StringIO())
    assert session.columns() == 33
    session.say("word " * 30)
    assert max(map(len, session.stdout.getvalue().splitlines())) <= 33


# --- events announced as they happen --------------------------------------------------------
def test_siege_events_are_announced_as_they_happen(tmp_path):
    path = tmp_path / "g.json"
    text = _play(
        ["castle-siege", "--difficulty", "hard", "--seed", "5", "--save", str(path)], "0\n" * 3000
    )
    final = final_state(load(str(path)))
    counts = final.event_counts()
    notes = [ln[4:] for ln in text.splitlines() if ln.startswith("  * ")]
    assert notes.count("Precision Strike") == counts["precision_strikes"] > 0
    assert sum(n.startswith("Flush Siege") for n in notes) == counts["flush_sieges"]
    assert notes.count("Royal Assault") == counts["royal_assaults"]
    assert sum(n.endswith("is captured") for n in notes) == counts["castles_captured"]
    assert sum("new defenders dealt" in n for n in notes) == counts["turns"] - 1
    # each note comes right after the move that set it off, before the next board
    first = text.index("  * Precision Strike")
    assert text.rfind("> attack", 0, first) > text.rfind("Castle Siege  turn", 0, first)


def test_castellion_events_are_announced(tmp_path):
    path = tmp_path / "g.json"
    text = _play(
        ["castellion", "--level", "academy", "--seed", "2", "--save", str(path)], "0\n" * 3000
    )
    final = final_state(load(str(path)))
    notes = [ln[4:] for ln in text.splitlines() if ln.startswith("  * ")]
    assert sum(n.startswith("passed ") for n in notes) == final.current
    assert notes and notes[-1] in ("Victory", "Defeat")


# --- phases in words ------------------------------------------------------------------------
def test_phases_are_shown_in_words():
    text = _play(["castle-siege", "--difficulty", "hard", "--seed", "7"], "0\nq\n")
    assert "now: Precision Strike: recycle a discard to the deck's bottom" in text
    assert "now: Battle: attack, capture, regroup or end the battle" in text
    for name in SIEGE_PHASES:
        assert f"phase {name}" not in text and "precision_strike" not in text
    text = _play(["castellion", "--level", "menace", "--seed", "2"], "0\n" * 40 + "q\n")
    assert "decision: Draw a tile" in text
    snake = [n for n in CASTELLION_PHASES if "_" in n or n in ("draw", "defender", "destroy")]
    for name in snake:
        assert f"decision: {name}" not in text
