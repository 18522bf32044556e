"""Reproducible results: an agent's randomness on a deal comes from (agent seed,
deal seed) alone, never from where the deal sits in a run or how many workers play it; and
``evaluate`` writes down what it ran (version, git revision, agents with their model files'
hashes, seeds, options) beside its numbers."""

import hashlib
import importlib.util
import json
import subprocess

import pytest
from castle_envs.experiments.cli import main
from castle_envs.experiments.evaluate import evaluate
from castle_envs.experiments.provenance import agent_files, git_revision
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import castle_envs

HAS_NUMBA = importlib.util.find_spec("numba") is not None
LINEAR = "model:models/castle_siege_very_hard_linear"

AGENTS = [
    pytest.param("castle-siege", "very_hard", "heuristic", id="siege-heuristic"),
    pytest.param("castle-siege", "very_hard", LINEAR, id="siege-linear"),
    pytest.param(
        "castle-siege",
        "very_hard",
        "search:samples=4,candidates=2",
        id="siege-search",
        marks=pytest.mark.skipif(not HAS_NUMBA, reason="needs numba"),
    ),
    pytest.param(
        "castle-siege",
        "very_hard",
        "ismcts:iterations=40,width=4",
        id="siege-ismcts",
        marks=pytest.mark.skipif(not HAS_NUMBA, reason="needs numba"),
    ),
    pytest.param("castellion", "menace", "heuristic", id="castellion-heuristic"),
    pytest.param(
        "castellion",
        "menace",
        "planner",
        id="castellion-planner",
        marks=pytest.mark.skipif(not HAS_NUMBA, reason="needs numba"),
    ),
]

DEAL = 6


def actions_by_deal(game, variant, agent, seed, episodes, workers=1, agent_seed=0):
    summary = evaluate(
        game,
        [variant],
        [agent],
        episodes,
        seed=seed,
        workers=workers,
        record=episodes,
        agent_seed=agent_seed,
    )
    return {r["seed"]: r["actions"] for r in summary["records"]}


@pytest.mark.parametrize("game,variant,agent", AGENTS)
def test_a_deal_plays_the_same_alone_first_last_and_on_two_workers(game, variant, agent):
    alone = actions_by_deal(game, variant, agent, DEAL, 1)[DEAL]
    first = actions_by_deal(game, variant, agent, DEAL, 3)
    last = actions_by_deal(game, variant, agent, DEAL - 2, 3)
    assert set(first) == {DEAL, DEAL + 1, DEAL + 2} and set(last) == {DEAL - 2, DEAL - 1, DEAL}
    assert first[DEAL] == alone, "first in a batch differs from alone"
    assert last[DEAL] == alone, "last in a batch (after two other games) differs from alone"
    two = actions_by_deal(game, variant, agent, DEAL - 2, 3, workers=2)
    assert two[DEAL] == alone, "two workers differ from one"
    assert two == last


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    deal=st.integers(0, 10_000),
    before=st.integers(0, 3),
    after=st.integers(0, 2),
    agent=st.sampled_from(["random", "greedy", "heuristic"]),
    agent_seed=st.integers(0, 2**31),
)
def test_any_deal_plays_the_same_wherever_it_sits_in_a_run(deal, before, after, agent, agent_seed):
    """In one process (the agent object reused from game to game), with any agent seed."""
    start = max(0, deal - before)
    alone = actions_by_deal("castle-siege", "hard", agent, deal, 1, agent_seed=agent_seed)
    batch = actions_by_deal(
        "castle-siege", "hard", agent, start, deal - start + 1 + after, agent_seed=agent_seed
    )
    assert batch[deal] == alone[deal]


def test_the_agent_seed_matters_and_is_recorded():
    runs = [
        evaluate("castle-siege", ["easy"], ["random"], 4, seed=0, workers=1, record=4, agent_seed=k)
        for k in (0, 1)
    ]
    assert [g["actions"] for g in runs[0]["records"]] != [g["actions"] for g in runs[1]["records"]]
    assert [g["agent_seeds"] for g in runs[1]["records"]] == [[[1, d, 0]] for d in range(4)]
    assert runs[1]["agent_seed"] == 1


def test_evaluate_writes_what_it_ran(tmp_path, capsys):
    assert (
        main(
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--difficulty",
                "hard",
                "--agent",
                f"heuristic,{LINEAR}",
                "--episodes",
                "2",
                "--seed",
                "11",
                "--agent-seed",
                "3",
                "--option",
                "attack=most_recent",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
                "--name",
                "run",
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "run.json").read_text())
    p = summary["provenance"]
    assert p["castle_envs_version"] == castle_envs.__version__
    assert summary["seed"] == 11 and summary["agent_seed"] == 3 and summary["episodes"] == 2
    assert summary["env_options"] == {"attack": "most_recent"}
    assert summary["variants"] == ["hard"]
    assert p["workers"] == 1 and p["backend"] == "local"
    assert p["arguments"]["agent_seed"] == 3 and p["arguments"]["option"] == ["attack=most_recent"]
    assert isinstance(p["command"], list)
    by_spec = {a["spec"]: a for a in p["agents"]}
    assert by_spec["heuristic"]["files"] == []
    files = by_spec[LINEAR]["files"]
    assert any(f["path"].endswith("policy.json") for f in files)
    for f in files:  # the hashes are of the files read
        path = f["path"]
        assert f["sha256"] == hashlib.sha256(open(path, "rb").read()).hexdigest()
    git = git_revision()
    assert p["git_revision"] == git["revision"]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=castle_envs.__path__[0],
        ).stdout.strip()
    except OSError:
        head = ""
    if head:
        assert p["git_revision"] == head


def test_no_git_is_tolerated(tmp_path, monkeypatch):
    assert git_revision(tmp_path) == {"revision": None, "dirty": None}  # not a checkout
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all
    assert git_revision() == {"revision": None, "dirty": None}


def test_agent_files_follow_the_spec():
    assert agent_files("random", "castle-siege") == []
    linear = agent_files("linear:models/castle_siege_very_hard_linear/policy.json", "castle-siege")
    assert len(linear) == 1 and linear[0].endswith("policy.json")
    assert agent_files("search", "castle-siege")[0].endswith(
        "castle_siege_very_hard_linear/policy.json"
    )
    model = agent_files(LINEAR, "castle-siege")
    assert model and not any(f.endswith("README.md") for f in model)
