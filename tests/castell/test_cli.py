"""`castle-envs play castell` and `castle-envs bench castell` through the registry."""

import io

import pytest
from castle_envs.experiments.cli import build_parser


@pytest.mark.parametrize("players,extra", [(2, ["--hotseat"]), (3, ["--human", "1"])])
def test_play_to_the_end_by_typed_moves(players, extra):
    from castle_envs.experiments import play

    args = build_parser().parse_args(
        ["play", "castell", "--players", str(players), "--seed", "2", *extra]
    )
    out = io.StringIO()
    assert play.run(args, stdin=io.StringIO("zzz\n" + "0\n" * 3000), stdout=out) == 0
    text = out.getvalue()
    assert "is not a move number" in text  # bad input re-prompts
    assert "game over" in text and "Castell - game over" in text


def test_bench_runs():
    from castle_envs.experiments.bench import bench_game

    from castle_envs.registry import get_game

    result = bench_game(get_game("castell"), {"num_players": 2}, 0.2, 0)
    assert result["core"]["games"] >= 1 and result["env"]["steps"] > 0
