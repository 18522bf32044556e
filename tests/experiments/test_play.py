"""castle-envs play in the multi-player games: built-in opponents and bad input."""

import io

from castle_envs.experiments.cli import build_parser, main
from castle_envs.experiments.play import run


def test_opponents_play_a_whole_game_when_no_seat_is_human():
    args = build_parser().parse_args(
        [
            "play",
            "castle-rooms",
            "--players",
            "3",
            "--seed",
            "2",
            "--human",
            "--opponent",
            "heuristic",
        ]
    )
    out = io.StringIO()
    assert run(args, stdin=io.StringIO(""), stdout=out) == 0
    text = out.getvalue()
    assert "game over" in text and "player_2" in text


def test_unknown_opponent_is_a_clean_error(capsys):
    assert main(["play", "castell", "--opponent", "nobody"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err


def test_human_seat_out_of_range_is_a_clean_error(capsys):
    assert main(["play", "castle-rooms", "--players", "2", "--human", "5"]) == 2
    assert "seats [5]" in capsys.readouterr().err


# --- input robustness, filters, pages, typed moves, saving --------------------------------
import json

import numpy as np
import pytest
from castle_envs.experiments.play import Session

from castle_envs.castle_siege.rules import State

NASTY_LINES = [
    "²",
    "5" * 5000,
    "",
    "   ",
    "\t",
    "é",
    "☃",
    "-1",
    "+3",
    "0x1f",
    "1e3",
    " 3 ",
    "٣",
    "n",
    "p",
    "all",
    "?",
    "b",
    "save",
    "zzzz",
    "J♦ J♦",
    "((",
    "[a-z]*",
    "\\",
]


def _play(argv, script, stdin=None, width=0):
    """The play loop on ``argv`` reading ``script``; ``width``: ``--width`` (0: no
    wrapping, so that long lines such as file paths stay whole for the checks)."""
    args = build_parser().parse_args(["play", *argv, "--width", str(width)])
    out = io.StringIO()
    code = run(args, stdin=stdin if stdin is not None else io.StringIO(script), stdout=out)
    return code, out.getvalue()


def test_negative_seed_is_a_one_line_error(capsys):
    assert main(["play", "castle-siege", "--seed", "-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--seed must be a non-negative integer, got -5" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["castle-siege", "--difficulty", "hard"],
        ["castellion", "--level", "menace"],
        ["castle-rooms", "--players", "2"],
        ["castell", "--players", "3"],
    ],
)
def test_every_input_line_gets_a_new_prompt(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "save" with no file name writes here
    code, text = _play([*argv, "--seed", "3"], "\n".join(NASTY_LINES) + "\n")
    assert code == 0
    # one prompt per line read, and one more that met the end of input
    assert text.count("move> ") == len(NASTY_LINES) + 1
    assert "(end of input)" in text and "game abandoned" in text
    assert "'" + "5" * 24 + "…' is not a move number" in text
    assert "'²' is not a move number" in text
    assert "Traceback" not in text


def test_undecodable_bytes_and_end_of_input_are_survived():
    stdin = io.TextIOWrapper(io.BytesIO(b"\xff\xfe\x00\n0\n"), encoding="utf-8")
    code, text = _play(["castle-siege", "--seed", "1"], "", stdin=stdin)
    assert code == 0 and "unreadable input" in text and "game abandoned" in text


def test_long_lists_page_and_a_legend_explains_the_notation():
    code, text = _play(["castle-siege", "--difficulty", "hard", "--seed", "7"], "n\np\nq\n")
    assert "How to read the moves: Cards are rank + suit" in text
    assert "326 legal moves, page 1 of 17" in text and "326 legal moves, page 2 of 17" in text
    first = text.split("page 1 of 17")[1].split("move>")[0]
    assert sum(1 for line in first.splitlines() if line.strip()[:1].isdigit()) == 20
    assert "attack A♠ (31)" in text and "and end battle phase" in text


@pytest.mark.parametrize("typed", ["JD", "J♦", "jd", "  j♦ "])
def test_a_card_filters_the_moves(typed):
    code, text = _play(["castle-siege", "--difficulty", "hard", "--seed", "7"], f"{typed}\nq\n")
    listing = text.split("24 moves contain")[1].split("move>")[0]
    moves = [line for line in listing.splitlines() if line.strip()[:1].isdigit()]
    assert len(moves) == 20 and all("J♦" in m for m in moves)


def test_typed_move_texts_play_a_whole_hard_deal():
    """At every decision of a Hard game the move's words, and the action table's text, each
    name exactly one legal move and play it."""
    from castle_envs.agents import make_agent

    state = State.new_game(np.random.default_rng(7), "hard")
    agent = make_agent("heuristic", "castle-siege")
    agent.reset(7)
    decisions = 0
    while not state.is_terminal():
        mask = state.legal_action_mask()
        action = agent.act(None, mask, state.clone())
        for typed in (
            state.describe_action(action),
            str(state.actions.decode(action)),
            state.describe_action(action).upper().replace("♦", "D"),
        ):
            session = Session(io.StringIO(typed + "\n"), io.StringIO(), "castle-siege")
            assert session.choose(state, mask) == action, typed
        state.apply_action(action)
        decisions += 1
    assert decisions > 10


def test_a_move_named_by_part_of_its_text_is_played():
    state = State.new_game(np.random.default_rng(7), "hard")
    out = io.StringIO()
    session = Session(io.StringIO("attack k♠ with 10♠ + 3♥\n"), out, "castle-siege")
    action = session.choose(state, state.legal_action_mask())
    assert state.describe_action(action) == "attack K♠ with 10♠ + 3♥"
    # a text several moves contain lists them instead
    session = Session(io.StringIO("attack k♠ with 10♠\nq\n"), io.StringIO(), "castle-siege")
    assert session.choose(state, state.legal_action_mask()) is None


@pytest.mark.parametrize(
    "argv",
    [["castle-siege", "--difficulty", "hard"], ["castle-rooms", "--players", "3", "--human", "1"]],
)
def test_saved_game_replays_to_the_same_outcome(argv, tmp_path):
    from castle_envs.experiments.records import final_state, load

    path = tmp_path / "game.json"
    code, text = _play([*argv, "--seed", "5", "--save", str(path)], "0\n" * 3000)
    assert code == 0 and "game over" in text and f"saved the game record to {path}" in text
    record = load(str(path))
    assert record["seed"] == 5 and record["outcome"]["terminal"]
    assert "human" in record["agents"]
    final = final_state(record)
    assert [float(r) for r in final.returns()] == record["outcome"]["returns"]


def test_save_command_mid_game_writes_an_unfinished_record(tmp_path):
    from castle_envs.experiments.records import final_state, load

    path = tmp_path / "half.json"
    code, text = _play(["castellion", "--seed", "2"], f"0\n0\nsave {path}\nq\n")
    record = load(str(path))
    assert len(record["actions"]) == 2 and not record["outcome"]["terminal"]
    assert not final_state(record).is_terminal()
    assert json.loads(path.read_text())["source"] == "castle-envs play"


def test_ctrl_c_still_saves_the_game(tmp_path):
    class Interrupting(io.StringIO):
        def readline(self, *a):
            line = super().readline(*a)
            if not line:
                raise KeyboardInterrupt
            return line

    path = tmp_path / "g.json"
    args = build_parser().parse_args(["play", "castle-siege", "--seed", "1", "--save", str(path)])
    with pytest.raises(KeyboardInterrupt):
        run(args, stdin=Interrupting("0\n0\n"), stdout=io.StringIO())
    from castle_envs.experiments.records import load

    assert len(load(str(path))["actions"]) == 2
