"""Castellion's perfect-information solver: its verdicts against plain exhaustive search on
small positions (the reductions are sound), its winning lines win, the School supply bound
never calls a position on a winning line lost, node budgets are deterministic and a smaller
budget decides exactly what a larger one decided within it, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents.solvers import castellion_kernel as C  # noqa: E402
from castle_envs.agents.solvers.castellion import (
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Solver,  # noqa: E402
    deal,
    exhaustive,
    replay_wins,
)

from castle_envs.castellion import kernel as K  # noqa: E402
from castle_envs.castellion.rules import State  # noqa: E402
from castle_envs.castellion.vector import write_state  # noqa: E402

from .helpers import position  # noqa: E402


def truncated(state: State, n_regular: int, n_safe: int) -> State:
    """The same position with only the top tiles of each pile left (the rest discarded)."""
    d = state.to_dict()
    keep_r, keep_s = d["regular"][:n_regular], d["safe"][:n_safe]
    for k in d["regular"][n_regular:] + d["safe"][n_safe:]:
        d["discard"][k] += 1
    d["regular"], d["safe"] = keep_r, keep_s
    return State.from_dict(d)


def small_positions():
    from tests.vector.test_castellion_positions import POSITIONS

    out = []
    for name, start in sorted(POSITIONS.items()):
        for n_regular, n_safe in ((1, 0), (2, 1), (3, 0)):
            try:
                s = truncated(start, n_regular, n_safe)
            except ValueError:
                continue  # e.g. a discard pile over its limits
            if not s.is_terminal():
                out.append((f"{name}/{n_regular}+{n_safe}", s))
    return out


SMALL = small_positions()


def test_reduced_search_agrees_with_plain_exhaustive_search():
    reduced = Solver(max_nodes=30_000, beam=False)
    plain = Solver(max_nodes=30_000, beam=False, prune=False, table=False, order=False, loss=False)
    full = Solver(max_nodes=30_000)
    counts = {WINNABLE: 0, UNWINNABLE: 0}
    checked_in_python = 0
    for name, s in SMALL:
        a, b, c = reduced.solve(s), plain.solve(s), full.solve(s)
        if UNKNOWN in (a.verdict, b.verdict, c.verdict):
            continue
        assert a.verdict == b.verdict == c.verdict, name
        counts[a.verdict] += 1
        if b.nodes < 1500:
            assert exhaustive(s, 20_000) == a.verdict, name
            checked_in_python += 1
        for r in (a, c):
            if r.verdict == WINNABLE:  # the line wins from the position
                t = s.clone()
                for action in r.line:
                    t.apply_action(action)
                assert t.won, name
    assert counts[WINNABLE] >= 5 and counts[UNWINNABLE] >= 5, counts
    assert checked_in_python >= 10


def test_school_supply_bound_fires_only_on_lost_positions():
    # Exam I with 4 Traitors beside it, a Traitor on top of the regular pile and an empty
    # safe pile: one Defender in hand is all the castle can still get, and it needs more
    # (the helper takes the Traitors beside the ordeal from the top of the pile first)
    s = position(
        castle=["C^ J# Jo P^ S#"],
        hand="Po",
        beside=[[4, 0], [0, 0], [0, 0]],
        regular_top="T T T T T",
        safe_empty=True,
    )
    assert s.regular[-1] == 12
    row = np.zeros(K.WORDS, np.int8)
    write_state(row, s, s.level, {"foundation_exemption": "placed", "early_encounter": "any_time"})
    assert C.hopeless(row, 0)
    small = truncated(s, 2, 0)
    assert exhaustive(small) == UNWINNABLE
    # the foundation complete and the three formations one tile away each: not hopeless
    s = position(castle=["C^ J# Jo P^ S# Po"], beside=[[4, 0], [0, 0], [0, 0]])
    write_state(row, s, s.level, {"foundation_exemption": "placed", "early_encounter": "any_time"})
    assert not C.hopeless(row, 0)
    fired = 0
    for name, s in SMALL:
        if s.level != 0:
            continue
        r = Solver(max_nodes=30_000, beam=False, table=False, loss=False).solve(s)
        fired += r.pruned
        if r.verdict != UNKNOWN:
            plain = Solver(
                max_nodes=30_000, beam=False, prune=False, table=False, order=False, loss=False
            ).solve(s)
            assert plain.verdict in (r.verdict, UNKNOWN), name
    assert fired > 0


@pytest.fixture(scope="module")
def school_win():
    """A School deal the solver wins within its budget (the first of seeds 0-9)."""
    solver = Solver(max_nodes=600_000)
    for seed in range(10):
        r = solver.solve(deal(seed, "school"))
        if r.verdict == WINNABLE:
            return seed, r
    pytest.fail("no School deal of seeds 0-9 won within 600,000 nodes")


def test_winning_line_replays_in_the_gymnasium_env_and_never_meets_the_bound(school_win):
    seed, r = school_win
    assert replay_wins(seed, "school", r.line)
    assert not replay_wins(seed, "school", r.line[:-1])  # the last move wins
    s = deal(seed, "school")
    row = np.zeros(K.WORDS, np.int8)
    rules = {"foundation_exemption": "placed", "early_encounter": "any_time"}
    for action in r.line:
        write_state(row, s, 0, rules)
        assert not C.hopeless(row, 0)  # every position on a winning line is winnable
        s.apply_action(action)
    assert s.won


def test_node_budgets_are_deterministic_and_a_smaller_budget_is_a_prefix(school_win):
    seed, big = school_win
    again = Solver(max_nodes=600_000).solve(deal(seed, "school"))
    assert (again.verdict, again.nodes, again.line) == (big.verdict, big.nodes, big.line)
    for budget in (big.nodes - 1, big.nodes, big.nodes + 5000, big.nodes // 3):
        r = Solver(max_nodes=budget).solve(deal(seed, "school"))
        expect = big.verdict if big.nodes <= budget else UNKNOWN
        assert r.verdict == expect, budget
        if expect == WINNABLE:
            assert r.line == big.line and r.nodes == big.nodes
        else:
            assert r.nodes <= budget


def test_time_budget_and_bad_budgets():
    import time

    start = time.perf_counter()
    r = Solver(max_nodes=None, max_seconds=0.3).solve(deal(3, "academy"))
    assert r.verdict in (WINNABLE, UNKNOWN, UNWINNABLE) and time.perf_counter() - start < 30
    with pytest.raises(ValueError, match="budget"):
        Solver(max_nodes=None, max_seconds=None)
    with pytest.raises(ValueError, match="max_nodes"):
        Solver(max_nodes=0)


def test_solve_cli(tmp_path, capsys):
    from castle_envs.experiments import cli

    out = tmp_path / "r.jsonl"
    assert (
        cli.main(
            [
                "solve",
                "--game",
                "castellion",
                "--level",
                "academy",
                "--deals",
                "2",
                "--seed",
                "5",
                "--budget",
                "3000",
                "--probe-policy",
                "planner",
                "--random-games",
                "1",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["level"] == "academy" and summary["deals"] == 2
    assert summary["seeds"] == [5, 6] and summary["random"]["games"] == 2
    lo, hi = summary["winnable_interval_95"]
    assert 0 <= lo <= hi <= 1
    assert [row["budget_nodes"] for row in summary["budget_curve"]] == [300, 750, 1500, 3000]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in records] == [5, 6]
    assert all(r["nodes"] <= 3000 for r in records)
    # --resume keeps the deals solved and solves the rest
    assert (
        cli.main(
            [
                "solve",
                "--game",
                "castellion",
                "--level",
                "academy",
                "--deals",
                "3",
                "--seed",
                "5",
                "--budget",
                "3000",
                "--probe-policy",
                "planner",
                "--random-games",
                "0",
                "--out",
                str(out),
                "--resume",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Castellion academy, 3 deals" in text and "nodes/s" in text
    assert [json.loads(line)["seed"] for line in out.read_text().splitlines()] == [5, 6, 7]
    assert cli.main(["solve", "--game", "castellion", "--budget", "soon"]) == 2
    assert cli.main(["solve", "--game", "castellion", "--deals", "0"]) == 2
    assert cli.main(["solve", "--game", "chess"]) == 2


def test_planner_probe_proves_deals_the_planner_wins_and_leaves_the_rest_to_the_solver():
    """The probe's won game is the verdict (its moves counted as nodes, the line replayed);
    a lost probe game leaves the solver the rest of the budget."""
    from castle_envs.agents.solvers.castellion import replay_wins
    from castle_envs.experiments.solve_castellion import probe_game, solve_deal

    rules = {"early_encounter": "any_time", "foundation_exemption": "placed"}
    seeds = {}
    for seed in range(30):
        won, line = probe_game(seed, "academy", rules, "planner")
        seeds.setdefault(won, (seed, line))
        if len(seeds) == 2:
            break
    assert set(seeds) == {True, False}
    seed, line = seeds[True]
    assert replay_wins(seed, "academy", line, **rules)
    solver = Solver(max_nodes=5000)
    r = solve_deal(solver, seed, "academy", rules, 0, "planner")
    assert r["verdict"] == WINNABLE and r["found_by"] == "probe:planner"
    assert r["line"] == line and r["nodes"] == len(line) and r["solver_nodes"] == 0
    # a budget below the probe's length: the probe does not count, the solver has it all
    r = solve_deal(Solver(max_nodes=len(line) - 1), seed, "academy", rules, 0, "planner")
    assert r["found_by"] != "probe:planner" and r["nodes"] <= len(line) - 1
    seed, line = seeds[False]
    r = solve_deal(solver, seed, "academy", rules, 0, "planner")
    plain = solve_deal(Solver(max_nodes=5000 - len(line)), seed, "academy", rules, 0, "none")
    assert r["nodes"] == plain["nodes"] + len(line) and r["verdict"] == plain["verdict"]
    assert r["probe"] == {
        "policy": "planner",
        "won": False,
        "moves": len(line),
        "seconds": r["probe"]["seconds"],
    }
    assert solver.max_nodes == 5000  # the budget is restored for the next deal
