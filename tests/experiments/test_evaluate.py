"""The evaluation harness: numbers, reproducibility across workers, files, bad input."""

import json
import os

import numpy as np
import pytest
from castle_envs.experiments.cli import main
from castle_envs.experiments.evaluate import evaluate


def test_summary_fields_and_events():
    r = evaluate("castle-siege", ["easy"], ["random", "heuristic"], 30, seed=3, workers=1)
    rows = {x["agent"]: x for x in r["results"]}
    h = rows["heuristic"]
    assert h["episodes"] == 30 and 0 <= h["win_low"] <= h["win_rate"] <= h["win_high"] <= 1
    assert h["wins"] == round(h["win_rate"] * 30) and h["mean_length"] > 0
    assert {"precision_strikes", "royal_assaults", "turns"} <= set(h["events_mean"])
    assert h["mean_return"] == pytest.approx(h["win_rate"])  # reward 1 per win
    (p,) = r["paired"]
    assert p["agent"] == "heuristic" and p["baseline"] == "random"
    assert p["win_diff"]["mean"] == pytest.approx(h["win_rate"] - rows["random"]["win_rate"])


def test_same_numbers_whatever_the_worker_count():
    args = ("castle-siege", ["medium"], ["random", "greedy"], 24)
    one = evaluate(*args, seed=5, workers=1)
    two = evaluate(*args, seed=5, workers=2)
    for r in one["results"] + two["results"]:
        r.pop("seconds")
    assert one.pop("provenance")["workers"] == 1 and two.pop("provenance")["workers"] == 2
    assert one == two


def test_env_options_reach_the_game():
    a = evaluate("castle-siege", ["easy"], ["greedy"], 20, seed=0, workers=1)
    b = evaluate(
        "castle-siege",
        ["easy"],
        ["greedy"],
        20,
        seed=0,
        workers=1,
        env_options={"attack": "most_recent"},
    )
    assert a["results"][0]["events_mean"] != b["results"][0]["events_mean"]


def test_cli_writes_json_and_csv(tmp_path, capsys):
    code = main(
        [
            "evaluate",
            "--game",
            "castle-siege",
            "--difficulty",
            "easy,medium",
            "--agent",
            "random",
            "--agent",
            "greedy",
            "--episodes",
            "10",
            "--workers",
            "1",
            "--out",
            str(tmp_path),
            "--name",
            "run",
            "--no-progress",
        ]
    )
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0 and "greedy - random" in out
    data = json.load(open(tmp_path / "run.json"))
    assert len(data["results"]) == 4 and len(data["paired"]) == 2
    lines = open(tmp_path / "run.csv").read().splitlines()
    assert lines[0].startswith("agent,difficulty,episodes,wins,win_rate") and len(lines) == 5
    assert os.path.exists(tmp_path / "run-paired.csv")
    assert "deals" not in data
    import csv

    deals = list(csv.DictReader(open(tmp_path / "run-deals.csv")))
    assert [(d["difficulty"], int(d["seed"])) for d in deals] == [
        (v, s) for v in ("easy", "medium") for s in range(10)
    ]
    for r in data["results"]:  # the per-deal returns add up to each agent's wins
        won = sum(float(d[r["agent"]]) > 0 for d in deals if d["difficulty"] == r["difficulty"])
        assert won == r["wins"]
    try:
        import matplotlib  # noqa: F401

        assert os.path.exists(tmp_path / "run.png")
    except ImportError:
        assert "no plot: matplotlib is not installed" in captured.err


def test_multiplayer_game_seats_the_agent_in_turn():
    r = evaluate("castle-rooms", [2], ["heuristic"], 20, seed=0, workers=1)
    assert r["results"][0]["win_rate"] > 0.5 and r["opponent"] == "random"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--game", "castle-siege", "--agent", "alphago"], "unknown agent 'alphago'"),
        (["--game", "castle-siege", "--agent", "mcts:sims"], "malformed mcts option"),
        (["--game", "castle-siege", "--agent", "mcts:budget=3"], "unknown mcts option"),
        (["--game", "castle-siege", "--difficulty", "brutal"], "unknown difficulty 'brutal'"),
        (["--game", "castle-siege", "--level", "school"], "--level does not apply"),
        (["--game", "castle-siege", "--option", "attack=sideways"], "unknown attack rule"),
        (
            ["--game", "castle-siege", "--option", "colour=red"],
            "unexpected keyword argument 'colour'",
        ),
        (["--game", "castle-siege", "--option", "noequals"], "malformed --option"),
        (["--game", "castle-siege", "--episodes", "0"], "at least 1"),
        (["--game", "castle-siege", "--agent", "random,random"], "listed twice"),
        (["--game", "castle-siege", "--agent", "ppo:/no/such.zip"], "no MaskablePPO model"),
        (["--game", "castle-siege", "--backend", "local", "--address", "x:1"], "--backend ray"),
        (["--game", "castle-siege", "--workers", "0"], "at least 1"),
    ],
)
def test_bad_input_is_a_message_and_exit_2(argv, words, capsys, tmp_path):
    code = main(
        [
            "evaluate",
            *argv,
            "--episodes" if "--episodes" not in argv else "--seed",
            "2" if "--episodes" not in argv else "0",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err


# --- statistics and output ---------------------------------------------------------------------
def test_several_variants_get_stratified_bootstrap_aggregates():
    summary = evaluate(
        "castle-siege", ["easy", "medium"], ["random", "heuristic"], 6, seed=0, workers=1
    )
    assert [a["agent"] for a in summary["aggregate"]] == ["random", "heuristic"]
    for agg in summary["aggregate"]:
        rates = [r["win_rate"] for r in summary["results"] if r["agent"] == agg["agent"]]
        assert agg["mean_win_rate"] == pytest.approx(np.mean(rates))
        assert 0 <= agg["mean_win_low"] <= agg["mean_win_rate"] <= agg["mean_win_high"] <= 1
        assert agg["return_iqm_low"] <= agg["return_iqm"] <= agg["return_iqm_high"]
    for pair in summary["paired"]:
        d = pair["win_diff"]
        assert d["method"] == "newcombe" and -1 <= d["low"] <= d["high"] <= 1
    assert evaluate("castle-siege", ["easy"], ["random"], 2, workers=1)["aggregate"] == []


def test_the_win_rate_axis_fits_the_data():
    from castle_envs.experiments.evaluate import win_axis_top

    assert win_axis_top([0.0, 0.0]) == 0.05  # all-zero bars: still a readable axis
    assert win_axis_top([0.02, 0.08]) == pytest.approx(0.096)  # not 0-100% for 2-8%
    assert win_axis_top([0.9, 0.95]) == 1.0


def test_all_variants_run_in_the_games_order_and_are_counted_in_words(capsys):
    import argparse

    from castle_envs.experiments.evaluate import count_of, parse_variants, print_summary

    from castle_envs.castle_siege import DIFFICULTIES
    from castle_envs.registry import get_game

    args = argparse.Namespace(difficulty="all", level=None, players=None)
    easiest_first = sorted(DIFFICULTIES, key=DIFFICULTIES.get)  # by defender rows
    assert parse_variants(get_game("castle-siege"), args) == easiest_first
    args = argparse.Namespace(difficulty=None, level="all", players=None)
    assert parse_variants(get_game("castellion"), args) == ["school", "academy", "menace"]
    assert count_of(4, "difficulty") == "4 difficulties"
    assert count_of(1, "difficulty") == "1 difficulty"
    assert count_of(3, "level") == "3 levels"
    assert count_of(3, "num_players") == "3 player counts"
    summary = {
        "variant_arg": "difficulty",
        "game": "castle-siege",
        "episodes": 2,
        "seed": 0,
        "results": [],
        "paired": [],
        "aggregate": [
            {
                "agent": "random",
                "variants": easiest_first,
                "mean_win_rate": 0.0,
                "mean_win_low": 0.0,
                "mean_win_high": 0.1,
                "return_iqm": 0.0,
                "return_iqm_low": 0.0,
                "return_iqm_high": 0.0,
            }
        ],
    }
    print_summary(summary)
    out = capsys.readouterr().out
    assert "over 4 difficulties" in out and "difficultys" not in out


def test_progress_bars_only_on_a_terminal():
    pytest.importorskip("tqdm")
    from castle_envs.experiments.evaluate import progress_bar

    bar, tick = progress_bar(10, True, "x")  # pytest's stderr is not a terminal
    assert bar is not None and bar.disable
    bar.close()


def test_library_messages_go_through_logging_and_can_be_silenced(capsys, tmp_path):
    import logging

    argv = [
        "evaluate",
        "--game",
        "castle-siege",
        "--difficulty",
        "easy",
        "--agent",
        "best",
        "--episodes",
        "1",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
        "--no-plot",
    ]
    assert main(argv) == 0
    assert "agent 'best' for castle-siege is" in capsys.readouterr().err
    logger = logging.getLogger("castle_envs")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        assert main(argv) == 0
        assert "agent 'best'" not in capsys.readouterr().err
    finally:
        logger.setLevel(level)
