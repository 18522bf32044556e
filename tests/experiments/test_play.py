"""castle-envs play in the multi-player games: built-in opponents and bad input."""
import io

from castle_envs.experiments.cli import build_parser, main
from castle_envs.experiments.play import run


def test_opponents_play_a_whole_game_when_no_seat_is_human():
    args = build_parser().parse_args(["play", "castle-rooms", "--players", "3", "--seed", "2",
                                      "--human", "--opponent", "heuristic"])
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
