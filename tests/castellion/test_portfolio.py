"""The portfolio ``castle-envs solve --game castellion`` runs (``castellion_portfolio``) and its
nested search (``castellion_nested``): a win is a line that replays to a win, a loss a proof
that holds where the rules decide the position, no proof fires on a deal a winning line
wins, and no stage spends more than the budget."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents.solvers.castellion import (  # noqa: E402
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Solver,
    deal,
    exhaustive,
    replay_wins,
)
from castle_envs.agents.solvers.castellion_nested import NestedSearch, level_planner  # noqa: E402
from castle_envs.agents.solvers.castellion_portfolio import (  # noqa: E402
    AHEAD,
    FURTHER,
    MENACE_SHARES,
    NESTED,
    PLANNER_NODES,
    SHARES,
    VALUE,
    Portfolio,
    shares,
)

from castle_envs.castellion import kernel as K  # noqa: E402
from castle_envs.castellion.data import ACADEMY, MENACE, SCHOOL  # noqa: E402
from castle_envs.castellion.rules import REVEAL_ORDEAL_PHASE  # noqa: E402

from .helpers import at_ordeal, position  # noqa: E402


def test_a_hopeless_exam_is_proven_lost_at_the_root():
    # the Traitor in hand completes Exam I now and the castle holds no formation: lost by
    # the rules (Exam I fails), which plain exhaustive search confirms
    s = at_ordeal(["C^ J# Jo P^ S# Po"], 4, 0)
    assert exhaustive(s) == UNWINNABLE
    portfolio = Portfolio(max_nodes=50_000)
    r = portfolio.solve(s)
    assert r.verdict == UNWINNABLE and r.found_by == "bound" and "Exam I" in r.proof
    assert [stage.name for stage in portfolio.stages] == ["bound"]


def test_a_menace_assault_that_cannot_be_met_is_proven_lost():
    # Assault I (Harpy) one black Traitor away with a black Traitor on top: the castle of
    # two tiles can neither show two towers nor keep a foundation after 16 tiles destroyed
    s = position(
        level="menace",
        castle=["C^ J#"],
        beside=[[0, 1], [0, 0], [0, 0]],
        regular_top="B P^ B J^ J# P#",
        safe_empty=True,
        ordeals=["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"],
    )
    r = Portfolio(max_nodes=50_000).solve(s)
    assert r.verdict == UNWINNABLE and r.found_by == "bound" and "Assault I" in r.proof


def test_every_proof_of_loss_holds_on_small_positions():
    """The loss tests' small positions (a few tiles left, every level): each one the
    portfolio calls lost (by the root bounds, by the solver searching the whole tree, by
    the loss search) is lost by plain exhaustive search, and each win is a line that wins."""
    from .test_loss_bounds import CASES

    seen: Counter = Counter()
    for s in CASES:
        r = Portfolio(max_nodes=60_000).solve(s)
        seen[r.found_by] += 1
        if r.verdict == UNWINNABLE:
            assert exhaustive(s, 50_000) in (UNWINNABLE, UNKNOWN), (r.found_by, s.to_json())
        elif r.verdict == WINNABLE:
            t = s.clone()
            for a in r.line:
                t.apply_action(a)
            assert t.won
    assert seen["bound"] >= 10 and seen["solver"] >= 10 and seen["loss-search"] >= 1, seen


@pytest.mark.parametrize(("level", "seed"), [("school", 5000), ("academy", 5002)])
def test_a_won_deal_is_a_line_that_replays(level, seed):
    portfolio = Portfolio(max_nodes=2_000_000)
    r = portfolio.solve(deal(seed, level))
    assert r.verdict == WINNABLE and r.found_by in ("planner", "nested:1")
    assert replay_wins(seed, level, r.line)
    assert r.nodes == sum(stage.nodes for stage in portfolio.stages) <= 2_000_000
    # the same budget gives the same verdict, line and nodes
    again = Portfolio(max_nodes=2_000_000).solve(deal(seed, level))
    assert (again.line, again.nodes, again.found_by) == (r.line, r.nodes, r.found_by)


def test_no_proof_of_loss_fires_on_a_deal_a_winning_line_wins():
    """On deals the nested search wins (the lines replay to a win), neither the root bounds
    nor the loss search calls any position of the line lost."""
    loss = Solver(max_nodes=1, loss_nodes=3_000)
    checked = 0
    for level, seeds in (("school", range(5000, 5003)), ("academy", range(5000, 5002))):
        for seed in seeds:
            found = NestedSearch(1, 4, 4.0, max_moves=60_000).search(deal(seed, level))
            if not found.won:
                continue
            assert replay_wins(seed, level, found.line)
            s = deal(seed, level)
            for k, action in enumerate(found.line):
                if k % 10 == 0 and s.phase in (0, 1, 2):
                    assert loss.prove_loss(s)[0] == "", (level, seed, k)
                s.apply_action(action)
            checked += 1
    assert checked >= 4


def test_budgets_bound_every_stage():
    s = deal(5000, "menace")
    for budget in (1, 150, PLANNER_NODES * 40, 300_000):
        portfolio = Portfolio(max_nodes=budget, loss_nodes=None)
        r = portfolio.solve(s)
        assert r.nodes <= budget, (budget, [st.to_dict() for st in portfolio.stages])
        if r.verdict == UNKNOWN:
            assert 0 <= r.reached <= 2
    found = NestedSearch(2, 4, 4.0, max_moves=500).search(deal(5000, "menace"))
    assert not found.finished and found.moves <= 500 and not found.won
    assert abs(sum(share for _, share in SHARES) - 1) < 1e-9
    with pytest.raises(ValueError, match="budget"):
        Portfolio(max_nodes=None, max_seconds=None)
    with pytest.raises(ValueError, match="max_nodes"):
        Portfolio(max_nodes=0)
    with pytest.raises(ValueError, match="loss_nodes"):
        Portfolio(loss_nodes=-1)
    with pytest.raises(ValueError, match="level"):
        NestedSearch(level=0)


def test_a_time_budget_is_shared_too():
    r = Portfolio(max_nodes=None, max_seconds=2.0).solve(deal(5001, "school"))
    assert r.verdict == WINNABLE and replay_wins(5001, "school", r.line)


def test_solve_cli_runs_the_portfolio_by_default(tmp_path, capsys):
    from castle_envs.experiments import cli

    out = tmp_path / "r.jsonl"
    argv = ["solve", "--game", "castellion", "--level", "academy", "--deals", "2", "--seed"]
    argv += ["5000", "--budget", "1500000", "--random-games", "0", "--out", str(out), "--json"]
    assert cli.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["probe_policy"] == "portfolio" and summary["winnable"] == 2
    assert summary["seconds_per_deal"] > 0 and sum(summary["found_by"].values()) == 2
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert record["verdict"] == WINNABLE and record["nodes"] <= 1_500_000
        assert record["stages"][-1]["verdict"] == WINNABLE
        assert record["stages"][0]["name"] == "bound"
        assert replay_wins(record["seed"], "academy", record["line"])
    assert cli.main(["solve", "--game", "castellion", "--probe-policy", "beam"]) == 2


def test_unknown_is_reported_with_the_furthest_ordeal():
    s = deal(5000, "menace")
    r = Portfolio(max_nodes=PLANNER_NODES * 30).solve(s)
    assert r.verdict == UNKNOWN and r.line == [] and not r.proof
    assert np.isin(r.reached, [0, 1, 2])


def test_the_seeing_search_plays_the_true_deal():
    """With ``see`` the planner plans on a copy whose face-down Assaults are turned up, but
    every move is played in the true deal: a win is a line the Gymnasium env replays to a
    win, and the position searched keeps its cards face down. Where nothing is face down
    (the School) it is the plain search, move for move."""
    s = deal(5009, "menace")
    found = NestedSearch(1, 4, 4.0, see=True, max_moves=200_000).search(s)
    assert found.won and replay_wins(5009, "menace", found.line)
    assert list(s.face_down) == [True, True, True] and s.current == 0
    plain = NestedSearch(1, 4, 4.0, max_moves=40_000).search(deal(5001, "school"))
    seeing = NestedSearch(1, 4, 4.0, see=True, max_moves=40_000).search(deal(5001, "school"))
    assert plain == seeing


def test_the_menace_adds_a_seeing_search_that_plans_ahead():
    """Menace deal 102 is lost by the seeing nested search with the planner's weights (its
    journal, ``seeing_wins.jsonl``); the planner weighing the later Assaults more
    (``AHEAD``) wins it, a line the Gymnasium env replays to a win. The Menace's stages run
    it and the other new seeing searches after the seeing searches; the other levels'
    stages are unchanged."""
    level, top, gap, see, options, score = NESTED[AHEAD]
    planner = level_planner(MENACE, **options)
    found = NestedSearch(level, top, gap, planner, 100_000, see=see, score=score).search(
        deal(102, "menace")
    )
    assert found.won and replay_wins(102, "menace", found.line)
    plain = NestedSearch(1, 4, 4.0, see=True, max_moves=100_000).search(deal(102, "menace"))
    assert not plain.won
    names = [name for name, _ in shares(MENACE)]
    assert names.index(AHEAD) > names.index("nested:1:top8") and names[-1] == "loss-search"
    assert {AHEAD, VALUE, FURTHER} <= set(names) <= set(NESTED) | {"solver", "loss-search"}
    assert abs(sum(share for _, share in MENACE_SHARES) - 1) < 1e-9
    assert shares(SCHOOL) == shares(ACADEMY) == SHARES and AHEAD not in dict(SHARES)


def _end_score(seed: int, line: list[int]) -> tuple[int, float]:
    """(Ordeals passed, the planner's value of the end with the Assaults turned up) of
    ``line`` played from Menace deal ``seed``: how ``score="value"`` ranks a lost line."""
    s = deal(seed, "menace")
    for a in line:
        s.apply_legal(a)
    assert s.outcome < 0
    end = s.clone()
    end.s[K.OUTCOME] = 0
    end.face_down = [False, False, False]
    return int(s.current), level_planner(MENACE).value(end)


def test_value_scoring_ranks_lost_lines_by_how_near_they_came():
    """With ``score="value"`` a search that wins nothing returns the line whose end the
    planner values most among those failing at the furthest Ordeal: never below the
    planner's own game (its first playout), and a win still wins."""
    seed = 5006
    planner = level_planner(MENACE)
    s, game = deal(seed, "menace"), []
    while not s.outcome:
        seen = s.clone()
        seen.face_down = [False, False, False]
        a = planner(seen, None) if s.phase != REVEAL_ORDEAL_PHASE else planner(s, None)
        a = a if s.legal_action_mask()[a] else planner(s, None)
        game.append(a)
        s.apply_legal(a)
    found = NestedSearch(1, 4, 4.0, see=True, score="value").search(deal(seed, "menace"))
    assert not found.won and found.finished
    assert _end_score(seed, found.line) >= _end_score(seed, game)
    won = NestedSearch(1, 4, 4.0, see=True, score="value", max_moves=200_000)
    found = won.search(deal(5009, "menace"))
    assert found.won and replay_wins(5009, "menace", found.line)
    with pytest.raises(ValueError, match="score"):
        NestedSearch(score="ordeals")
