import pytest
from castle_envs.experiments.cli import main
from castle_envs.experiments.tournament import seat_plan, tournament


def test_seats_rotate():
    assert seat_plan(["a", "b"], 4) == (("a", "b", "a", "b"), ("b", "a", "b", "a"))
    plan = seat_plan(["a", "b", "c"], 2)
    assert plan == (("a", "b"), ("b", "c"), ("c", "a"))


@pytest.mark.parametrize("game, players, games", [("castle-rooms", 2, 40), ("castell", 3, 24)])
def test_heuristic_beats_random_significantly(game, players, games):
    r = tournament(game, players, ["random", "heuristic"], games, seed=0, workers=1, bootstrap=50)
    rows = {x["agent"]: x for x in r["results"]}
    assert rows["heuristic"]["rating_low"] > rows["random"]["rating_high"]
    assert rows["heuristic"]["win_low"] > rows["random"]["win_high"] or rows["random"]["wins"] == 0
    assert sum(x["seats_played"] for x in r["results"]) == games * players


def test_same_numbers_whatever_the_worker_count():
    a = tournament("castle-rooms", 2, ["random", "heuristic"], 16, seed=1, workers=1, bootstrap=20)
    b = tournament("castle-rooms", 2, ["random", "heuristic"], 16, seed=1, workers=2, bootstrap=20)
    a.pop("seconds"), b.pop("seconds")
    assert a == b


def test_cli_table_and_files(tmp_path, capsys):
    code = main(
        [
            "tournament",
            "--game",
            "castle-rooms",
            "--players",
            "2",
            "--agents",
            "random,heuristic",
            "--games",
            "10",
            "--workers",
            "1",
            "--out",
            str(tmp_path),
            "--name",
            "t",
            "--no-progress",
            "--bootstrap",
            "10",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "rating" in out
    assert (tmp_path / "t.json").exists() and (tmp_path / "t.csv").exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--game", "castle-siege"], "solitaire"),
        (["--game", "castle-rooms", "--players", "7"], "players"),
        (["--game", "castle-rooms", "--agents", "random"], "at least two agents"),
        (["--game", "castle-rooms", "--agents", "random,mcts:sims=x"], "needs a int"),
    ],
)
def test_bad_input(argv, words, capsys, tmp_path):
    code = main(["tournament", *argv, "--games", "2", "--out", str(tmp_path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and words in err
