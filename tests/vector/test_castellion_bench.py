"""``castle-envs bench castellion`` reports the compiled single and batched figures."""

import json

from castle_envs.experiments.cli import main


def test_bench_reports_castellion_batched_figures(capsys):
    assert (
        main(
            [
                "bench",
                "castellion",
                "--level",
                "menace",
                "--seconds",
                "0.05",
                "--batch-sizes",
                "1,16",
                "--json",
                "--no-peer",
            ]
        )
        == 0
    )
    results = json.loads(capsys.readouterr().out)
    (castellion,) = results
    assert castellion["game"] == "castellion" and castellion["level"] == "menace"
    assert castellion["env_compiled"]["steps"] > 0
    assert [b["num_envs"] for b in castellion["batched"]] == [1, 16]
    for b in castellion["batched"]:
        assert b["steps"] >= b["num_envs"] and b["steps"] % b["num_envs"] == 0
        assert b["games"] > 0  # Menace games under random play last a few steps
        assert 1000 < b["bytes_per_env"] < 100_000
