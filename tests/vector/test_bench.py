"""``castle-envs bench castle-siege`` reports single and batched figures."""

import json

from castle_envs.experiments.cli import main


def test_bench_reports_batched_figures(capsys):
    assert (
        main(
            [
                "bench",
                "castle-siege",
                "--difficulty",
                "easy",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "1,16",
                "--json",
            ]
        )
        == 0
    )
    results = json.loads(capsys.readouterr().out)
    siege = results[0]
    assert siege["game"] == "castle-siege" and siege["env"]["steps"] > 0
    assert siege["env_compiled"]["steps"] > 0
    assert [b["num_envs"] for b in siege["batched"]] == [1, 16]
    for b in siege["batched"]:
        assert b["steps"] >= b["num_envs"] and b["steps"] % b["num_envs"] == 0
        assert 1000 < b["bytes_per_env"] < 100_000
    peer = results[-1]
    assert peer["game"] == "pettingzoo connect_four_v3"
    assert "steps_per_s" in peer["env"] or "error" in peer["env"]


def test_bench_table_without_batched(capsys):
    assert (
        main(["bench", "castle-siege", "--seconds", "0.05", "--batch-sizes", "", "--no-peer"]) == 0
    )
    out = capsys.readouterr().out
    assert "castle-siege very_hard" in out and "batched" not in out


def test_bench_times_the_solver(capsys):
    assert (
        main(
            [
                "bench",
                "castle-siege",
                "--difficulty",
                "very_hard",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "",
                "--no-peer",
                "--solver-deals",
                "2",
                "--solver-nodes",
                "2000",
                "--json",
            ]
        )
        == 0
    )
    solvers = json.loads(capsys.readouterr().out)[0]["solvers"]
    assert solvers["deals"] == 2 and sum(solvers["verdicts"].values()) == 2
    assert solvers["nodes"] > 0 and solvers["nodes_per_second"] > 0
