"""The Ray backend gives the local numbers (local Ray instance; needs the distributed extra)."""

import pytest
from castle_envs.experiments.evaluate import evaluate

ray = pytest.importorskip("ray")


def test_ray_matches_local():
    local = evaluate("castle-siege", ["easy"], ["greedy"], 12, seed=2, workers=1)
    remote = evaluate("castle-siege", ["easy"], ["greedy"], 12, seed=2, workers=2, backend="ray")
    for r in local["results"] + remote["results"]:
        r.pop("seconds")
    # the provenance names the backend and the workers: everything else must be equal
    assert local.pop("provenance")["backend"] == "local"
    assert remote.pop("provenance")["backend"] == "ray"
    assert local == remote
