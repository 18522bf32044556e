"""The disagreement study: its figures on hand-made verdicts, and that measuring a game does
not change the game the agent plays."""

import json

import numpy as np
import pytest
from castle_envs.experiments import siege_disagreement as D

pytest.importorskip("numba")


def test_figures_of_agreeing_and_disagreeing_worlds():
    agree = {"worlds": [[1, 0], [1, 1], [0, 0]], "chosen": 1}
    f = D.decision_figures(agree)
    assert f["informative"] and not f["disagree"]
    assert f["gap"] == 0.0 and f["best_share"] == pytest.approx(2 / 3)
    assert f["chosen_share"] == pytest.approx(1 / 3)
    split = {"worlds": [[1, 0], [0, 1], [0, 1], [0, 0]], "chosen": 0}
    f = D.decision_figures(split)
    assert f["disagree"] and f["gap"] == pytest.approx(0.25)
    assert not D.decision_figures({"worlds": [[0, 0], [0, 0]], "chosen": 0})["informative"]


SPEC = "ismcts:iterations=30,width=4,temp=2,shaped=0.1,endgame=2000"


def test_measuring_leaves_the_agents_game_unchanged(tmp_path):
    from castle_envs.agents.registry import make_agent

    from castle_envs.castle_siege.rules import State

    seed = 20_000_003
    agent = make_agent(SPEC, "castle-siege", seed=0)
    state = State.new_game(np.random.default_rng(seed), difficulty="very_hard")
    agent.reset([0, seed, 0])
    alone = []
    while not state.outcome:
        a = agent.act(None, None, state=state.player_view())
        alone.append(a)
        state.apply_action(a)
    out = tmp_path / "j.jsonl"
    argv = [
        "--agent",
        SPEC,
        "--seed",
        str(seed),
        "--episodes",
        "1",
        "--worlds",
        "2",
        "--nodes",
        "50",
        "--out",
        str(out),
    ]
    D.main(argv)
    game = json.loads(out.read_text())
    assert game["seed"] == seed and game["won"] == (state.outcome == 1)
    assert game["decisions"], "the agent searched no battle decision"
    for d in game["decisions"]:
        assert len(d["worlds"]) == 2 and all(len(w) == len(d["moves"]) for w in d["worlds"])
        assert d["moves"][d["chosen"]] == alone[d["step"]]
    D.main(argv)  # resumed: the deal is not played again
    assert len(out.read_text().splitlines()) == 1
    s = D.summary([str(out)])
    assert s["games"] == 1 and sum(v["decisions"] for v in s["by_outcome"].values()) == len(
        game["decisions"]
    )


GAME = {"seed": 1, "won": False, "decisions": [{"turn": 1, "chosen": 0, "worlds": [[1, 0]]}]}


@pytest.mark.parametrize(
    "damage, message",
    [
        ("{not json\n", "line 2"),
        (json.dumps({**GAME, "won": "no"}) + "\n", "line 2: expected a game"),
        (
            json.dumps({**GAME, "decisions": [{"turn": 1, "chosen": 5, "worlds": [[1, 0]]}]}),
            "chosen",
        ),
        (
            json.dumps({**GAME, "decisions": [{"turn": 1, "chosen": 0, "worlds": [[1], [1, 0]]}]}),
            "worlds",
        ),
        (json.dumps({**GAME, "decisions": [{"turn": 1, "chosen": 0, "worlds": "x"}]}), "worlds"),
    ],
)
def test_a_damaged_journal_is_a_one_line_error_naming_the_line(tmp_path, capsys, damage, message):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(GAME) + "\n" + damage + "\n" + json.dumps(GAME) + "\n")
    for argv in (["--summary", str(path)], ["--out", str(path), "--episodes", "0"]):
        with pytest.raises(SystemExit) as stop:
            D.main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert str(path) in err and message in err and "Traceback" not in err


def test_a_cut_last_line_is_dropped_and_the_rest_summarised(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(GAME) + "\n" + json.dumps(GAME)[:20])
    assert D.summary([str(path)])["games"] == 1
