"""The perfect-information solver: known answers, soundness against plain exhaustive search,
winning lines that replay in the Gymnasium env, determinism, and the ``solve`` command."""

import json

import gymnasium
import numpy as np
import pytest
from castle_envs.agents.solvers.castle_siege import (
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    deal_deck,
    line_events,
    replay_wins,
    state_key,
)
from castle_envs.experiments import cli
from castle_envs.experiments.solve import parse_budget

import castle_envs  # noqa: F401
from castle_envs.castle_siege.actions import END_BATTLE, RECYCLE_BASE, REGROUP, play_action
from castle_envs.castle_siege.rules import BATTLE, State

from ..reference.castle_siege_solver import Solver, relaxed_winnable, solve_deck
from .helpers import C, position, slots

PLAIN = dict(prune=False, table=False, order=False)  # exhaustive search, no reductions


def replay_state_wins(state: State, line) -> bool:
    difficulty = state.to_dict()["difficulty"]
    env = gymnasium.make(
        "castle_envs/CastleSiege-v0", difficulty=difficulty, **state.rule_options()
    )
    env.reset(options={"state": state.to_dict()})
    for action in line:
        _, _, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            return bool(info["won"])
    return False


# --- the deals ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 7, 123])
def test_deal_deck_is_the_deck_env_reset_with_that_seed_deals(seed):
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="hard")
    env.reset(seed=seed)
    dealt = State.new_game(difficulty="hard", deck=deal_deck(seed))
    assert env.unwrapped.state.to_dict() == dealt.to_dict()


# --- hand-built positions with known answers ---------------------------------------------
def test_trivially_winnable_position_is_solved_with_a_replayable_line():
    # no defenders; each hand card equals one castle's rank: four exact captures win
    s = position(
        hand=C("2S", "3S", "4S", "5S", "6S"), castles=C("2C", "3C", "4C", "5C"), difficulty="easy"
    )
    result = Solver(max_nodes=1000).solve(s)
    assert result.verdict == WINNABLE and replay_state_wins(s, result.line)
    # the depth-first search alone follows the move order: captures first, four of them
    result = Solver(max_nodes=1000, probe_share=0).solve(s)
    assert result.verdict == WINNABLE and result.nodes == 4
    assert len(result.line) == 4 and END_BATTLE not in result.line
    assert replay_state_wins(s, result.line)


def test_last_turn_win_needs_the_kill_and_four_captures():
    # empty deck: win this turn or never. 2H guards castle 0; 5 cards, 5 plays needed
    s = position(
        hand=C("9S", "2S", "3S", "4S", "5S"),
        castles=C("2C", "3C", "4C", "5C"),
        columns=(C("2H"), (), (), ()),
        difficulty="easy",
        deck=[],
    )
    result = Solver(max_nodes=5000, probe_share=0).solve(s)
    assert result.verdict == WINNABLE and replay_state_wins(s, result.line)
    # the search's own line is subtler than "9S kills, four captures": 2S hits 2H exactly
    # (Precision Strike), recycles itself to the empty deck, and Regroup draws it back
    recycle_2s = RECYCLE_BASE + C("2S")[0]
    assert recycle_2s in result.line and REGROUP in result.line
    # two Aces hit 2H exactly: the same trick wins (a regression: bound 2 once pruned the
    # pending Precision Strike, when deck + hand is briefly 0 before the card comes back)
    tricky = position(
        hand=C("AS", "AH", "3S", "4S", "5S"),
        castles=C("2C", "3C", "4C", "5C"),
        columns=(C("2H"), (), (), ()),
        difficulty="easy",
        deck=[],
    )
    assert Solver(max_nodes=100_000, **PLAIN).solve(tricky).verdict == WINNABLE
    result = Solver(max_nodes=100_000).solve(tricky)
    assert result.verdict == WINNABLE and replay_state_wins(tricky, result.line)
    # with a King for the 5, castle 5C cannot be taken: lost
    lost = position(
        hand=C("AS", "AH", "3S", "4S", "KD"),
        castles=C("2C", "3C", "4C", "5C"),
        columns=(C("2H"), (), (), ()),
        difficulty="easy",
        deck=[],
    )
    assert Solver(max_nodes=100_000, **PLAIN).solve(lost).verdict == UNWINNABLE
    assert Solver(max_nodes=100_000).solve(lost).verdict == UNWINNABLE


@pytest.mark.parametrize(
    "hand,deck,castles",
    [
        (C("2S", "3S"), [], C("KC", "KH", "KD", "KS")),  # 2 cards, 4 castles
        (C("AS"), C("2S"), C("KC", "KH", "KD", "KS")),  # supply 2 < 4 castles
        (C("AS", "AC", "2S", "2C", "3S"), C("4D"), C("KC", "KH", "QD", "QS")),  # no sum reaches
    ],
)
def test_provably_lost_positions(hand, deck, castles):
    s = position(hand=hand, castles=castles, deck=deck, difficulty="easy")
    assert Solver(max_nodes=100_000, **PLAIN).solve(s).verdict == UNWINNABLE
    assert Solver(max_nodes=100_000).solve(s).verdict == UNWINNABLE


# --- soundness: the reductions against plain exhaustive search ----------------------------
def _endgames(n_random: int, n_winning: int, deck_left: int):
    """Positions near the end of Easy games: from random attacking play (mostly lost) and
    from the solver's own winning lines (winnable)."""
    rng = np.random.default_rng(5)
    out = []
    for g in range(n_random):
        s = State.new_game(np.random.default_rng(1000 + g), "easy")
        while not s.outcome and not (s.deck_size <= deck_left and s.phase == BATTLE):
            legal = np.flatnonzero(s.legal_action_mask())
            plays = legal[legal < END_BATTLE - 57]
            pick = plays if len(plays) and rng.random() < 0.8 else legal
            s.apply_action(int(pick[rng.integers(len(pick))]))
        if not s.outcome:
            out.append(s)
    for seed in range(n_winning):
        deck = deal_deck(500 + seed)
        result = solve_deck(deck, "easy", max_nodes=20_000)
        if result.verdict != WINNABLE:
            continue
        s = State.new_game(difficulty="easy", deck=deck)
        for action in result.line:
            if s.deck_size <= deck_left and s.phase == BATTLE:
                out.append(s.clone())
                break
            s.apply_action(action)
    return out


def test_reductions_agree_with_exhaustive_search_on_easy_endgames():
    decided = {WINNABLE: 0, UNWINNABLE: 0}
    for s in _endgames(n_random=25, n_winning=25, deck_left=2):
        fast = Solver(max_nodes=20_000).solve(s)
        slow = Solver(max_nodes=20_000, **PLAIN).solve(s)
        if UNKNOWN in (fast.verdict, slow.verdict):
            continue
        assert fast.verdict == slow.verdict, s.to_json()
        decided[fast.verdict] += 1
        if fast.verdict == WINNABLE:
            assert replay_state_wins(s, fast.line)
    assert decided[WINNABLE] >= 5 and decided[UNWINNABLE] >= 5, decided


def test_bounds_never_fire_on_a_position_of_a_winning_line():
    solver = Solver()
    checked = 0
    for seed in range(20):
        for difficulty in ("easy", "medium"):
            deck = deal_deck(seed)
            result = solve_deck(deck, difficulty, max_nodes=5000)
            if result.verdict != WINNABLE:
                continue
            s = State.new_game(difficulty=difficulty, deck=deck)
            for action in result.line:
                assert not solver._hopeless(s), (seed, difficulty, s.to_json())
                s.apply_action(action)
                checked += 1
            assert s.won
    assert checked > 200


def test_relaxed_game_answers_small_cases_by_hand():
    # one castle, no defenders, a card in hand: capture now
    assert relaxed_winnable((0,), 1, 1, False, False)
    # one castle behind 3 defenders, 2 plays, no supply to survive the deal: lost
    assert not relaxed_winnable((3,), 2, 2, False, False)
    # the same with a Royal Assault in reach: it takes the castle
    assert relaxed_winnable((3,), 3, 3, False, True)
    # four castles, no supply beyond the hand: one capture per card, never 4 with 3 cards
    assert not relaxed_winnable((0, 0, 0, 0), 3, 3, True, False)


# --- winnable verdicts replay in the public env; determinism ------------------------------
@pytest.mark.parametrize("difficulty,deals", [("easy", 12), ("medium", 8), ("hard", 4)])
def test_every_winnable_verdict_replays_in_the_gymnasium_env(difficulty, deals):
    verdicts = []
    for seed in range(deals):
        deck = deal_deck(seed)
        result = solve_deck(deck, difficulty, max_nodes=3000)
        verdicts.append(result.verdict)
        if result.verdict == WINNABLE:
            assert replay_wins(deck, difficulty, result.line)
            events = line_events(deck, difficulty, result.line)
            assert events["castles_captured"] + events["royal_assaults"] >= 4
    if difficulty != "hard":
        assert verdicts.count(WINNABLE) >= deals // 2


def test_same_deal_and_budget_give_the_same_answer():
    for difficulty, seed in (("easy", 8), ("medium", 3), ("hard", 1)):
        deck = deal_deck(seed)
        a = solve_deck(deck, difficulty, max_nodes=2000)
        b = solve_deck(deck, difficulty, max_nodes=2000)
        assert (a.verdict, a.line, a.nodes, a.pruned) == (b.verdict, b.line, b.nodes, b.pruned)


def test_budget_runs_out_as_unknown():
    deck = deal_deck(0)
    assert solve_deck(deck, "very_hard", max_nodes=300).verdict == UNKNOWN
    timed = solve_deck(deck, "very_hard", max_nodes=None, max_seconds=0.05)
    assert timed.verdict == UNKNOWN and timed.seconds < 1.0


def test_solver_does_not_change_the_state_it_is_given():
    s = State.new_game(difficulty="easy", deck=deal_deck(4))
    before = s.to_dict()
    Solver(max_nodes=500).solve(s)
    assert s.to_dict() == before


# --- the transposition key ----------------------------------------------------------------
def test_state_key_ignores_history_but_not_the_position():
    s = position(
        hand=C("2S", "3S", "9H", "10H", "KD"),
        castles=C("2C", "3C", "4C", "5C"),
        columns=(C("4H"), C("5H"), (), ()),
        difficulty="easy",
    )
    a, b = s.clone(), s.clone()
    a.apply_action(play_action(slots(a, "9H"), C("4H")[0]))
    a.apply_action(play_action(slots(a, "10H"), C("5H")[0]))
    b.apply_action(play_action(slots(b, "10H"), C("5H")[0]))
    b.apply_action(play_action(slots(b, "9H"), C("4H")[0]))
    assert state_key(a) == state_key(b)  # same position by two move orders
    c = b.clone()
    c.turn += 3
    c.events[:] = 7
    assert state_key(c) == state_key(b)  # counters are no part of the position
    d = s.clone()
    d.apply_action(play_action(slots(d, "KD"), C("4H")[0]))
    assert state_key(d) != state_key(a)
    e = a.clone()
    e.regroup_used = True
    assert state_key(e) != state_key(a)


# --- the command ---------------------------------------------------------------------------
def test_parse_budget():
    assert parse_budget("5000") == (5000, None) == parse_budget("5000n")
    assert parse_budget("2.5s") == (None, 2.5)
    for bad in ("", "0", "-3", "fast", "0s"):
        with pytest.raises(ValueError):
            parse_budget(bad)


def test_solve_command_prints_summary_and_writes_records(tmp_path, capsys):
    out = tmp_path / "easy.jsonl"
    assert (
        cli.main(
            [
                "solve",
                "--difficulty",
                "easy",
                "--deals",
                "3",
                "--seed",
                "10",
                "--budget",
                "2000",
                "--random-games",
                "2",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["deals"] == 3 and summary["seeds"] == [10, 12]
    assert summary["winnable"] + summary["unwinnable"] + summary["unknown"] == 3
    lo, hi = summary["winnable_interval_95"]
    assert 0 <= lo <= summary["winnable_fraction"] <= hi <= 1
    assert summary["random"]["games"] == 6
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in records] == [10, 11, 12]
    for r in records:
        if r["verdict"] == WINNABLE:
            assert replay_wins(deal_deck(r["seed"]), "easy", r["line"])
    # the winning lines' positions, checked against the bounds
    assert cli.main(["solve", "--difficulty", "easy", "--check-lines", str(out)]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert checked["lines"] == summary["winnable"] and checked["pruned_wrongly"] == 0
    # the plot of a summary
    (tmp_path / "s.json").write_text(json.dumps(summary))
    svg = tmp_path / "p.svg"
    assert cli.main(["solve", "--plot", str(svg), "--summaries", str(tmp_path / "s.json")]) == 0
    assert svg.read_text().startswith("<svg") and "easy" in svg.read_text()
    agents = tmp_path / "agents.csv"
    agents.write_text(
        "agent,difficulty,episodes,win_rate,win_low,win_high\nheuristic,easy,10,0.9,0.6,0.98\n"
    )
    assert (
        cli.main(
            [
                "solve",
                "--plot",
                str(svg),
                "--summaries",
                str(tmp_path / "s.json"),
                "--agents-csv",
                str(agents),
            ]
        )
        == 0
    )
    assert "heuristic" in svg.read_text() and svg.read_text().count("<circle") == 4


def test_solve_command_rejects_bad_input(capsys):
    assert cli.main(["solve", "--budget", "soon"]) == 2
    assert cli.main(["solve", "--deals", "0"]) == 2
    assert "error" in capsys.readouterr().err


# --- probes guided by a policy ------------------------------------------------------------
def test_policy_guided_probes_find_replayable_wins_and_reject_illegal_choices():
    from castle_envs.agents.baselines.castle_siege import heuristic_policy

    found = 0
    for seed in range(6):
        deck = deal_deck(seed)
        result = solve_deck(deck, "hard", max_nodes=1500, probe_policy=heuristic_policy)
        if result.verdict == WINNABLE:
            found += 1
            assert replay_wins(deck, "hard", result.line)
    assert found >= 1
    s = State.new_game(difficulty="easy", deck=deal_deck(0))
    with pytest.raises(ValueError, match="illegal"):
        Solver(max_nodes=100, probe_policy=lambda state, rng: END_BATTLE + 1).solve(s)


def test_solve_command_gives_the_same_records_with_two_workers(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    base = [
        "solve",
        "--difficulty",
        "medium",
        "--deals",
        "4",
        "--budget",
        "1500",
        "--random-games",
        "1",
        "--json",
    ]
    assert cli.main(base + ["--out", str(one)]) == 0
    assert cli.main(base + ["--out", str(two), "--workers", "2"]) == 0

    def strip(text):  # the workers write deals as they finish: compared in deal order
        records = [
            {k: v for k, v in json.loads(line).items() if k != "seconds"}
            for line in text.splitlines()
        ]
        return sorted(records, key=lambda r: r["seed"])

    assert strip(one.read_text()) == strip(two.read_text())
