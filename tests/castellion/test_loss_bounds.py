"""Castellion's proofs of loss (``castle_envs.agents.solvers.castellion_loss``) and the solver's loss
search: against plain exhaustive search over ``rules.State`` on every position reachable
from small positions at every level and under both rules options (zero disagreements: a
position the bounds call lost is lost), on the positions of winning lines, in hand-built
rules scenarios (a hopeless position is proven lost, a winnable one is never flagged), and
the mirror-canonical table (a position and its mirror image have the same value)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents.solvers import castellion_kernel as C  # noqa: E402
from castle_envs.agents.solvers import castellion_loss as L  # noqa: E402
from castle_envs.agents.solvers.castellion import (  # noqa: E402
    LOST,
    PASSED,
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Solver,
    deal,
    exhaustive,
)

from castle_envs.castellion import kernel as K  # noqa: E402
from castle_envs.castellion.rules import State  # noqa: E402
from castle_envs.castellion.vector import write_state  # noqa: E402

from .helpers import at_ordeal, position  # noqa: E402
from .test_solver import SMALL, truncated  # noqa: E402


def row_of(s: State) -> np.ndarray:
    row = np.zeros(K.WORDS, np.int8)
    write_state(
        row,
        s,
        s.level,
        {"foundation_exemption": s.foundation_exemption, "early_encounter": s.early_encounter},
    )
    return row


def code(s: State, on: int = L.ALL) -> int:
    flags = K.rule_flags(
        {"foundation_exemption": s.foundation_exemption, "early_encounter": s.early_encounter}
    )
    return int(L.loss_code(row_of(s), s.level, flags, on)[0])


#: each bound alone, and all together
ALONE = [
    1 << r for r in (L.FOUNDATION, L.ROWS, L.FACTIONS, L.GEOMETRY, L.ASSAULT, L.FORCED, L.TILES)
]


def all_values(start: State, limit: int = 6000):
    """Every position reachable from ``start`` with its exact value (won?), by plain
    exhaustive search over ``rules.State`` without short cuts; None past ``limit``."""
    memo: dict = {}

    def value(s: State) -> bool:
        key = s.to_json()
        if key in memo:
            return memo[key][0]
        if len(memo) >= limit:
            raise TimeoutError
        if s.outcome:
            won = s.outcome == 1
        else:
            won = False
            for action in np.flatnonzero(s.legal_action_mask()):
                child = s.clone()
                child.apply_action(int(action))
                won = value(child) or won
        memo[key] = (won, s)
        return won

    try:
        value(start.clone())
    except TimeoutError:
        return None
    return list(memo.values())


def random_positions(level: str, count: int, seed: int, rules=None):
    """Positions of random games, cut to a few tiles left in each pile."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = deal(int(rng.integers(1 << 30)), level, **(rules or {}))
        for _ in range(int(rng.integers(5, 90))):
            if s.outcome:
                break
            legal = np.flatnonzero(s.legal_action_mask())
            s.apply_action(int(legal[rng.integers(len(legal))]))
        if s.outcome or s.revealed or s.phase not in (0, 1, 2):
            continue
        try:
            t = truncated(s, int(rng.integers(1, 4)), int(rng.integers(0, 2)))
        except ValueError:
            continue
        if not t.is_terminal():
            out.append(t)
    return out


def scenario_positions():
    """Hand-built School positions near the bounds' edges (row removal, geometry), cut to a
    few tiles: winnable and lost ones."""
    five = [
        " ".join("SCJP"[(r + c) % 4] + "^#o"[(r + 2 * c) % 3] for c in range(6)) for r in range(5)
    ]
    out = []
    for start in (
        at_ordeal(["C^ J# Jo P^ S# Po", "C# J^ J# Po C^"], 1, 1, hand=None),
        at_ordeal(["C^ J# Jo P^ S# Po", "C# J^ Jo Po"], 1, 1, hand=None),
        at_ordeal(["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So"], 1, 1, hand=None),
        position(castle=five, beside=[[4, 0], [0, 0], [0, 0]]),
        position(castle=five[:4], beside=[[4, 0], [0, 0], [0, 0]]),
        position(castle=["S^ C# J^ P# S^", "C^ J# P^ S#"], beside=[[3, 0], [0, 0], [0, 0]]),
    ):
        for n_regular, n_safe in ((1, 1), (2, 0), (3, 1), (4, 0)):
            try:
                t = truncated(start, n_regular, n_safe)
            except ValueError:
                continue
            if not t.is_terminal():
                out.append(t)
    return out


GROUPS = {
    "solver tests' positions": [s for _, s in SMALL],
    "scenarios": scenario_positions(),
    "school": random_positions("school", 40, 1),
    "school, neighbors": random_positions("school", 15, 2, {"foundation_exemption": "neighbors"}),
    "academy and menace": random_positions("academy", 12, 3) + random_positions("menace", 12, 4),
}
CASES = [s for group in GROUPS.values() for s in group]


@pytest.mark.slow
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_bounds_agree_with_plain_exhaustive_search_on_every_reachable_position(group):
    fired, checked, wrong = Counter(), 0, []
    for start in GROUPS[group]:
        values = all_values(start)
        if values is None:
            continue
        for won, s in values:
            checked += 1
            for on in [L.ALL] + ALONE:
                c = code(s, on)
                if c:
                    fired[(L.REASONS[c], on == L.ALL)] += 1
                    if won:
                        wrong.append((L.REASONS[c], s.to_json()))
    assert not wrong, wrong[:3]
    assert checked > 1000, checked
    # the bounds fire here (beyond positions already lost)
    assert (
        sum(n for (r, together), n in fired.items() if together and r != L.REASONS[L.LOST]) > 5
    ), fired
    if group == "scenarios":  # row removal and geometry, each alone
        alone = {r for (r, together) in fired if not together}
        assert {L.REASONS[L.ROWS], L.REASONS[L.GEOMETRY]} <= alone, fired
    if group == "academy and menace":
        alone = {r for (r, together) in fired if not together}
        assert {L.REASONS[L.ASSAULT], L.REASONS[L.TILES]} & alone, fired


def test_loss_search_agrees_with_plain_exhaustive_search():
    solver = Solver(max_nodes=1, loss_nodes=20_000)
    proven = 0
    for start in CASES:
        proof, how, _ = solver.prove_loss(start)
        if not proof:
            continue
        verdict = exhaustive(start, 50_000)
        assert verdict in (UNWINNABLE, UNKNOWN), (how, proof, start.to_json())
        proven += verdict == UNWINNABLE
    assert proven >= 10


def test_loss_stages_are_what_prove_loss_reads():
    """Each stage is the next ordeal, run only after the one before passed; the nodes add up
    across stages; a proof by the loss search is its last stage's LOST, and no proof means
    no stage found one."""
    solver = Solver(max_nodes=1, loss_nodes=20_000)
    seen = Counter()
    for start in CASES[::5]:
        stages = solver.loss_stages(start)
        proof, how, nodes = solver.prove_loss(start)
        first = start.current + 1
        assert [s.goal for s in stages] == list(range(first, first + len(stages)))
        assert all(s.verdict == PASSED for s in stages[:-1])
        assert [s.nodes for s in stages] == sorted(s.nodes for s in stages)
        if how == "loss-search":
            assert stages[-1].verdict == LOST
            assert f"(ordeal {stages[-1].goal})" in proof and nodes == stages[-1].nodes
        elif not how:
            assert all(s.verdict != LOST for s in stages)
            assert nodes == (stages[-1].nodes if stages else 0)
        seen[how, stages[-1].verdict if stages else None] += 1
    assert seen["loss-search", LOST] and sum(n for (how, _), n in seen.items() if not how), seen


def test_no_bound_fires_on_a_winning_line():
    solver = Solver(max_nodes=600_000, loss=False)
    for level in ("school", "academy"):
        for seed in range(10):
            r = solver.solve(deal(seed, level))
            if r.verdict == WINNABLE:
                break
        assert r.verdict == WINNABLE, level
        s = deal(seed, level)
        assert Solver(max_nodes=1, loss_nodes=20_000).prove_loss(s)[0] == ""
        for action in r.line:
            assert code(s) == 0, (level, seed)
            s.apply_action(action)
        assert s.won


def test_hopeless_school_positions_are_proven_lost():
    # Exam I: one Traitor away, an empty safe pile, a Traitor on top: nothing more can come
    # (the helper takes the Traitors beside an ordeal from the top of the pile first)
    s = position(
        castle=["C^ J# Jo P^"],
        hand="Po",
        beside=[[4, 0], [0, 0], [0, 0]],
        regular_top="T T T T T",
        safe_empty=True,
    )
    assert s.regular[-1] == 12
    assert L.REASONS[code(s)] == L.REASONS[L.FOUNDATION]
    # three Exam I formations, but the Traitors come before any more Juggler, Chameleon or
    # Pyro tile: the Seers alone (four more) make one formation at most
    s = position(
        castle=["S^ S# So C^ J#"],
        beside=[[3, 0], [0, 0], [0, 0]],
        regular_top="T T T S^ P^ T T",
        safe_empty=True,
    )
    assert L.REASONS[code(s)] == L.REASONS[L.FACTIONS]
    proof = L.prove_loss(s)
    assert "Exam I (ordeal 1)" in proof and "3 formations" in proof
    # the same with no Juggler, Chameleon or Pyro tile in the castle or to come: none of the
    # factions can make one more formation
    full = ["P^ S# P^ S# P^ S#", "S# P^ S# P^ S# P^"]
    s = position(
        castle=full, beside=[[4, 0], [0, 0], [0, 0]], regular_top="T T T T S^ T", safe_empty=True
    )
    assert L.REASONS[code(s)] == L.REASONS[L.FACTIONS]
    # geometry: a castle five high, no two neighbours of one faction (faction (r + c) % 4):
    # only row 5 is open, and every four cells of it lie on all four factions, so no line,
    # tower or bastion fits, though the Jugglers to come and those in the castle are many
    five = [
        " ".join("SCJP"[(r + c) % 4] + "^#o"[(r + 2 * c) % 3] for c in range(6)) for r in range(5)
    ]
    s = position(
        castle=five,
        beside=[[4, 0], [0, 0], [0, 0]],
        regular_top="T T T T J^ J# Jo P^ T",
        safe_empty=True,
    )
    assert L.REASONS[code(s)] == L.REASONS[L.GEOMETRY]
    assert "do not fit the castle" in L.prove_loss(s)
    # Exam II with a one-high column and no tile left before its last Traitor
    s = at_ordeal(
        ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^"],
        1,
        1,
        hand=None,
        regular_top="T T T T T T T",
        safe_empty=True,
    )
    assert s.regular[-1] == 12
    assert L.REASONS[code(s)] == L.REASONS[L.ROWS]
    # the Traitor in hand completes Exam I now, and the castle fails it
    s = at_ordeal(["C^ J# Jo P^ S# Po"], 4, 0)
    assert L.REASONS[code(s)] == L.REASONS[L.FORCED]
    assert exhaustive(s) == UNWINNABLE
    r = Solver(max_nodes=1000).solve(s)
    assert r.verdict == UNWINNABLE and r.found_by == "bound" and "Exam I" in r.proof


def test_hopeless_academy_and_menace_positions_are_proven_lost():
    sims = ["sim-1", "sim-2a", "sim-3a"]
    # a black Traitor in hand completes Simulation I, whose formations are missing
    s = position(
        level="academy",
        castle=["C^ J# Jo P^ S# Po"],
        hand="B",
        beside=[[0, 2], [0, 0], [0, 0]],
        ordeals=sims,
    )
    assert L.REASONS[code(s)] == L.REASONS[L.FORCED]
    # the same one Traitor short, with a normal Traitor in hand: it can be discarded
    s = position(
        level="academy",
        castle=["C^ J# Jo P^ S# Po"],
        hand="T",
        beside=[[0, 2], [0, 0], [0, 0]],
        ordeals=sims,
    )
    assert code(s) == 0
    # Assault I (Harpy) one black Traitor away, black on top, no Seer or Chameleon anywhere
    # near: 2 towers or 22 tiles, with at most a few tiles to come
    harpies = ["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"]
    s = position(
        level="menace",
        castle=["C^ J#"],
        beside=[[0, 1], [0, 0], [0, 0]],
        regular_top="B P^ B J^ J# P#",
        safe_empty=True,
        ordeals=harpies,
    )
    assert code(s) in (L.ASSAULT, L.FACTIONS), L.REASONS[code(s)]


def test_winnable_positions_are_never_flagged():
    exam1 = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]
    for s in (
        at_ordeal(exam1, 4, 0),
        position(castle=["C^ J# Jo P^ S# Po"], beside=[[4, 0], [0, 0], [0, 0]]),
        deal(0, "school"),
        deal(1, "academy"),
        deal(2, "menace"),
    ):
        assert code(s) == 0 and L.prove_loss(s) is None


def mirrored(s: State) -> State:
    d = s.to_dict()
    w = s.width
    d["castle"] = [row[:w][::-1] + row[w:] for row in d["castle"]]
    return State.from_dict(d)


def test_mirror_images_have_the_same_value_and_the_same_canonical_key():
    n = 0
    for start in CASES[:60]:
        if start.phase not in (0, 1, 2) or not start.width:
            continue
        m = mirrored(start)
        a, b = exhaustive(start, 20_000), exhaustive(m, 20_000)
        if UNKNOWN in (a, b):
            continue
        assert a == b, start.to_json()
        assert C._hash(row_of(start), C._Z, True) == C._hash(row_of(m), C._Z, True)
        n += 1
    assert n >= 10


def test_solver_records_the_proof():
    s = at_ordeal(["C^ J# Jo P^ S# Po"], 4, 0)
    d = Solver(max_nodes=500).solve(s).to_dict()
    assert d["verdict"] == UNWINNABLE and d["found_by"] == "bound" and d["proof"]
    d = Solver(max_nodes=500, loss=False).solve(s).to_dict()
    assert d["proof"] == "" and d["loss_nodes"] == 0
    with pytest.raises(ValueError, match="loss_nodes"):
        Solver(loss_nodes=-1)


def test_solve_cli_records_proofs_of_loss(tmp_path, capsys):
    import json

    from castle_envs.experiments import cli

    out = tmp_path / "r.jsonl"
    # School deal 130: six Pyros and nothing else above the fifth Traitor (the study's)
    assert (
        cli.main(
            [
                "solve",
                "--game",
                "castellion",
                "--level",
                "school",
                "--deals",
                "1",
                "--seed",
                "130",
                "--budget",
                "2000",
                "--random-games",
                "0",
                "--loss-budget",
                "0",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["unwinnable"] == 1 and summary["winnable_interval_95"][1] < 1
    assert "Exam I" in summary["unwinnable_proofs"]["130"] and summary["loss_budget"] == 0
    record = json.loads(out.read_text())
    assert record["verdict"] == UNWINNABLE and record["found_by"] == "bound"
    assert record["proof"] == summary["unwinnable_proofs"]["130"]
    assert cli.main(["solve", "--game", "castellion", "--loss-budget", "-1"]) == 2
