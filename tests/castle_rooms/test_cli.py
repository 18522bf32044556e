"""`castle-envs play castle-rooms` drives the game end to end through the registry."""

import io

import pytest
from castle_envs.experiments.cli import build_parser


@pytest.mark.parametrize("players,extra", [(3, ["--hotseat"]), (2, ["--human", "1"])])
def test_play_to_the_end_by_typed_moves(players, extra):
    from castle_envs.experiments import play

    args = build_parser().parse_args(
        ["play", "castle-rooms", "--players", str(players), "--seed", "1", *extra]
    )
    out = io.StringIO()
    assert play.run(args, stdin=io.StringIO("zzz\n" + "0\n" * 2000), stdout=out) == 0
    text = out.getvalue()
    assert "is not a move number" in text  # bad input re-prompts
    assert "game over" in text and "+1" in text
