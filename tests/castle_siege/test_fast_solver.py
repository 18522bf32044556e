"""The compiled solver (``solvers.castle_siege_compiled.CompiledSolver``, the package's solver)
against the Python reference (``tests/reference/castle_siege_solver.py``): the same legal moves
and bounds on every position, the same verdict wherever both decide, in the reference mode the
same verdict, line and node count, sound against plain exhaustive search, winning lines that
replay in the Gymnasium env; and the compiled linear move scorer against ``LinearPolicy``."""

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents.solvers import castle_siege_kernel as S  # noqa: E402
from castle_envs.agents.solvers.castle_siege import (
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,  # noqa: E402
    deal_deck,
    replay_wins,
)
from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver, shared_memo  # noqa: E402

from castle_envs.castle_siege import kernel as K  # noqa: E402
from castle_envs.castle_siege.rules import State  # noqa: E402
from castle_envs.castle_siege.vector import write_state  # noqa: E402

from ..reference.castle_siege_solver import Solver, relaxed_winnable  # noqa: E402
from .helpers import C, position  # noqa: E402
from .test_solver import PLAIN, _endgames, replay_state_wins  # noqa: E402

RULES = (
    {"attack": "any", "defeated": "discard"},
    {"attack": "most_recent", "defeated": "leave_game"},
)


def _rows(state: State):
    b = np.zeros(K.CARD_WORDS, np.int8)
    v = np.zeros(K.INT_WORDS, np.int32)
    write_state(b, v, state, state.rows, {"attack": state.attack, "defeated": state.defeated})
    return b, v


def _positions(n_games: int, difficulty: str, rules: dict, seed: int = 0):
    """Every position of some random games (mostly attacks, so games last)."""
    rng = np.random.default_rng(seed)
    for g in range(n_games):
        s = State.new_game(np.random.default_rng(seed + g), difficulty, **rules)
        while not s.outcome:
            yield s
            legal = np.flatnonzero(s.legal_action_mask())
            plays = legal[legal < 1612]
            pick = plays if len(plays) and rng.random() < 0.85 else legal
            s.apply_action(int(pick[rng.integers(len(pick))]))


@pytest.mark.parametrize("rules", RULES)
def test_move_generation_is_exactly_the_legal_moves(rules):
    w = S.new_work(10)
    out = np.zeros(S.MAX_MOVES, np.int32)
    checked = 0
    for difficulty in ("easy", "very_hard"):
        for s in _positions(15, difficulty, rules):
            b, v = _rows(s)
            n = S.gen_moves(b, v, rules["attack"] == "most_recent", out, w)
            moves = out[:n].tolist()
            assert len(set(moves)) == n
            assert sorted(moves) == np.flatnonzero(s.legal_action_mask()).tolist()
            checked += 1
    assert checked > 500


def test_bounds_agree_with_the_python_solver():
    python, w, memo = Solver(), S.new_work(10), shared_memo()
    fired = 0
    for difficulty in ("easy", "medium", "hard", "very_hard"):
        for s in _positions(20, difficulty, RULES[0], seed=100):
            b, v = _rows(s)
            expected = python._hopeless(s)
            assert S.hopeless(b, v, w, memo) == expected, s.to_json()
            fired += expected
    assert fired > 20


def test_relaxed_game_agrees_with_the_python_one():
    rng = np.random.default_rng(3)
    memo = shared_memo()
    for _ in range(3000):
        n = int(rng.integers(1, 5))
        cols = sorted(rng.integers(0, 16, n).tolist(), reverse=True)
        phi, plays = int(rng.integers(0, 53)), int(rng.integers(0, 7))
        regroup, royal = int(rng.integers(2)), int(rng.integers(2))
        arr = np.zeros(4, np.int64)
        arr[:n] = cols
        assert S.relaxed_winnable(arr, n, phi, plays, regroup, royal, memo) == relaxed_winnable(
            tuple(cols), phi, plays, bool(regroup), bool(royal)
        )


def test_verdicts_agree_on_easy_and_medium_deals():
    compiled = CompiledSolver(max_nodes=20_000)
    decided = 0
    for difficulty, deals in (("easy", 60), ("medium", 40)):
        for seed in range(deals):
            deck = deal_deck(seed)
            state = State.new_game(difficulty=difficulty, deck=deck)
            fast = compiled.solve(state)
            slow = Solver(max_nodes=20_000).solve(state)
            if UNKNOWN in (fast.verdict, slow.verdict):
                continue
            assert fast.verdict == slow.verdict, (difficulty, seed)
            decided += 1
            if fast.verdict == WINNABLE:
                assert replay_wins(deck, difficulty, fast.line)
    assert decided >= 90


def test_verdicts_agree_on_the_solver_test_positions():
    cases = [
        position(
            hand=C("2S", "3S", "4S", "5S", "6S"),
            castles=C("2C", "3C", "4C", "5C"),
            difficulty="easy",
        ),
        position(
            hand=C("9S", "2S", "3S", "4S", "5S"),
            castles=C("2C", "3C", "4C", "5C"),
            columns=(C("2H"), (), (), ()),
            difficulty="easy",
            deck=[],
        ),
        position(
            hand=C("AS", "AH", "3S", "4S", "5S"),
            castles=C("2C", "3C", "4C", "5C"),
            columns=(C("2H"), (), (), ()),
            difficulty="easy",
            deck=[],
        ),
        position(
            hand=C("AS", "AH", "3S", "4S", "KD"),
            castles=C("2C", "3C", "4C", "5C"),
            columns=(C("2H"), (), (), ()),
            difficulty="easy",
            deck=[],
        ),
        position(hand=C("2S", "3S"), castles=C("KC", "KH", "KD", "KS"), deck=[], difficulty="easy"),
        position(hand=C("AS"), castles=C("KC", "KH", "KD", "KS"), deck=C("2S"), difficulty="easy"),
        position(
            hand=C("AS", "AC", "2S", "2C", "3S"),
            castles=C("KC", "KH", "QD", "QS"),
            deck=C("4D"),
            difficulty="easy",
        ),
    ]
    # the Python solver's verdicts on these positions (tests/castle_siege/test_solver.py)
    expected = [WINNABLE, WINNABLE, WINNABLE, UNWINNABLE, UNWINNABLE, UNWINNABLE, UNWINNABLE]
    for s, want in zip(cases, expected):
        for solver in (
            CompiledSolver(max_nodes=100_000),
            CompiledSolver(max_nodes=100_000, **PLAIN),
        ):
            result = solver.solve(s)
            assert result.verdict == want
            if want == WINNABLE:
                assert replay_state_wins(s, result.line)


def test_reductions_agree_with_exhaustive_search_on_endgames():
    decided = {WINNABLE: 0, UNWINNABLE: 0}
    for s in _endgames(n_random=25, n_winning=25, deck_left=2):
        fast = CompiledSolver(max_nodes=20_000).solve(s)
        slow = CompiledSolver(max_nodes=20_000, **PLAIN).solve(s)
        reference = Solver(max_nodes=20_000, **PLAIN).solve(s)
        verdicts = {fast.verdict, slow.verdict, reference.verdict} - {UNKNOWN}
        assert len(verdicts) <= 1, s.to_json()
        if fast.verdict != UNKNOWN and slow.verdict != UNKNOWN:
            decided[fast.verdict] += 1
            if fast.verdict == WINNABLE:
                assert replay_state_wins(s, fast.line)
    assert decided[WINNABLE] >= 5 and decided[UNWINNABLE] >= 5, decided


def _strict(s: State) -> State:
    data = s.to_dict()
    data["rules"]["victory"] = "deck_left"
    return State.from_dict(data)


def test_deck_left_verdicts_agree_with_exhaustive_search_and_any_time():
    """victory="deck_left": both solvers (with their bounds, which are argued for the default
    rule) agree with plain exhaustive search; a strict win is a default win, never the
    reverse; strict winning lines replay under the strict rule and end with a card left."""
    decided = {WINNABLE: 0, UNWINNABLE: 0}
    for s in _endgames(n_random=25, n_winning=25, deck_left=3):
        if s.deck_size == 0:
            continue  # not a position of the strict game (already lost)
        strict = _strict(s)
        results = [
            CompiledSolver(max_nodes=20_000).solve(strict),
            CompiledSolver(max_nodes=20_000, **PLAIN).solve(strict),
            Solver(max_nodes=20_000).solve(strict),
            Solver(max_nodes=20_000, **PLAIN).solve(strict),
        ]
        verdicts = {r.verdict for r in results} - {UNKNOWN}
        assert len(verdicts) <= 1, strict.to_json()
        if not verdicts:
            continue
        verdict = verdicts.pop()
        decided[verdict] += 1
        default = CompiledSolver(max_nodes=20_000).solve(s).verdict
        if verdict == WINNABLE:
            assert default == WINNABLE
            for r in results:
                if r.verdict == WINNABLE:
                    assert replay_state_wins(strict, r.line)
                    end = strict.clone()
                    for action in r.line:
                        end.apply_action(action)
                    assert end.won and end.deck_size > 0
    assert decided[WINNABLE] >= 5 and decided[UNWINNABLE] >= 5, decided
    # a default win the strict rule loses: the only line draws the deck's last cards
    rules = {"attack": "any", "defeated": "discard"}
    for victory, want in (("any_time", WINNABLE), ("deck_left", UNWINNABLE)):
        s = position(
            hand=C("2S"),
            castles=C("KS", "KC", "KH", "KD"),
            captured=(False, True, True, True),
            deck=C("AH", "6S", "7S"),
            rules={**rules, "victory": victory},
        )
        for solver in (
            CompiledSolver(max_nodes=1000),
            CompiledSolver(max_nodes=1000, **PLAIN),
            Solver(max_nodes=1000),
            Solver(max_nodes=1000, **PLAIN),
        ):
            assert solver.solve(s).verdict == want, (victory, solver)


def test_deck_left_verdicts_agree_on_easy_deals():
    compiled = CompiledSolver(max_nodes=20_000)
    decided = 0
    for seed in range(30):
        deck = deal_deck(seed)
        state = State.new_game(difficulty="easy", deck=deck, victory="deck_left")
        fast = compiled.solve(state)
        slow = Solver(max_nodes=20_000).solve(state)
        if UNKNOWN in (fast.verdict, slow.verdict):
            continue
        assert fast.verdict == slow.verdict, seed
        decided += 1
        if fast.verdict == WINNABLE:
            assert replay_wins(deck, "easy", fast.line, victory="deck_left")
            assert replay_wins(deck, "easy", slow.line, victory="deck_left")
    assert decided >= 20


def _reference_cases():
    """Whole deals (probes and search share the budget) and endgames (the search decides)."""
    for difficulty in ("easy", "medium", "hard"):
        for seed in range(12):
            yield State.new_game(difficulty=difficulty, deck=deal_deck(seed)), 3000
    for s in _endgames(n_random=20, n_winning=20, deck_left=3):
        yield s, 2000
    for seed in range(6):  # a different order of the rules options
        yield (
            State.new_game(
                difficulty="hard", deck=deal_deck(seed), attack="most_recent", defeated="leave_game"
            ),
            3000,
        )


def test_the_reference_mode_searches_move_for_move_as_the_python_reference():
    """``reference=True`` (``LinearPolicy``'s endgame): the reference's verdict, winning line
    and node count, probes and search alike (an unknown's count: the reference counts the
    node it stopped at)."""
    kinds = {WINNABLE: 0, UNWINNABLE: 0, UNKNOWN: 0}
    for s, budget in _reference_cases():
        compiled = CompiledSolver(max_nodes=budget, reference=True).solve(s)
        reference = Solver(max_nodes=budget).solve(s)
        assert (compiled.verdict, compiled.line) == (reference.verdict, reference.line), s.to_json()
        assert compiled.nodes == reference.nodes - (reference.verdict == UNKNOWN), s.to_json()
        kinds[compiled.verdict] += 1
    assert min(kinds.values()) >= 3, kinds
    with pytest.raises(ValueError, match="probe_weights"):
        CompiledSolver(reference=True, probe_weights=np.zeros(30))


def test_hopeless_is_the_reference_bounds():
    solver, reference = CompiledSolver(), Solver()
    fired = 0
    for s in _positions(10, "hard", RULES[1], seed=5):
        assert solver.hopeless(s) == reference._hopeless(s)
        fired += reference._hopeless(s)
    assert fired > 5


def test_same_budget_same_verdict_and_line():
    deck = deal_deck(11)
    state = State.new_game(difficulty="hard", deck=deck)
    a = CompiledSolver(max_nodes=30_000).solve(state)
    b = CompiledSolver(max_nodes=30_000).solve(state)
    assert (a.verdict, a.line, a.nodes) == (b.verdict, b.line, b.nodes)


def test_a_time_budget_ends_in_time_and_a_resumed_search_matches_one_run():
    from castle_envs.agents.solvers.castle_siege_compiled import _CHUNK

    state = State.new_game(difficulty="very_hard", deck=deal_deck(3))
    # the clock is read between chunks of nodes: the search may overrun its budget by about
    # one chunk, whose time depends on the machine and its load, so measure one here; a first
    # timed run compiles the kernels, so that their compile time is not in the measured one
    CompiledSolver(max_nodes=None, max_seconds=0.01, probe_share=0).solve(state)
    one_chunk = CompiledSolver(max_nodes=_CHUNK, probe_share=0).solve(state).seconds
    timed = CompiledSolver(max_nodes=None, max_seconds=0.3, probe_share=0).solve(state)
    assert timed.verdict == UNKNOWN and timed.nodes > 10_000
    assert timed.seconds < 0.3 + 2 * one_chunk + 0.5, (timed.seconds, one_chunk)
    # the search runs in chunks under a time budget; chunks resume exactly where they stopped
    whole = CompiledSolver(max_nodes=200_000, probe_share=0).solve(state)
    chunked = CompiledSolver(max_nodes=200_000, max_seconds=60, probe_share=0).solve(state)
    assert (whole.verdict, whole.nodes, whole.pruned) == (
        chunked.verdict,
        chunked.nodes,
        chunked.pruned,
    )


def test_the_compiled_linear_policy_plays_linear_policy_moves():
    from castle_envs.agents.learned.castle_siege_linear import LinearPolicy

    from castle_envs.castle_siege.scoring import policy_action

    policy = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json")
    weights = policy.vector()
    w = S.new_work(10)
    same = total = 0
    for rules in RULES:
        for difficulty in ("hard", "very_hard"):
            for s in _positions(12, difficulty, rules, seed=7):
                b, v = _rows(s)
                action = policy_action(
                    b,
                    v,
                    rules["attack"] == "most_recent",
                    weights,
                    w.sums,
                    w.sizes,
                    w.flush,
                    w.royal,
                    w.keys,
                )
                assert s.legal_action_mask()[action]
                same += action == policy(s)
                total += 1
    # sums taken in another order can break a near-tie the other way, rarely
    assert total > 500 and same / total > 0.995, (same, total)


def test_guided_probes_find_more_wins_than_the_search_order_alone():
    from castle_envs.agents.learned.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy

    weights = LinearPolicy(HEURISTIC_WEIGHTS).vector()
    plain, guided = (
        CompiledSolver(max_nodes=3000),
        CompiledSolver(max_nodes=3000, probe_weights=weights),
    )
    wins = [0, 0]
    for seed in range(40):
        state = State.new_game(difficulty="hard", deck=deal_deck(seed))
        wins[0] += plain.solve(state).verdict == WINNABLE
        result = guided.solve(state)
        if result.verdict == WINNABLE:
            wins[1] += 1
            assert replay_wins(deal_deck(seed), "hard", result.line)
    assert wins[1] > wins[0] + 5, wins


def test_bad_budgets_are_clear_errors():
    with pytest.raises(ValueError, match="budget"):
        CompiledSolver(max_nodes=None, max_seconds=None)
    with pytest.raises(ValueError, match="30 weights"):
        CompiledSolver(probe_weights=[1.0, 2.0])


def test_solve_command_compiled_resume_and_compare(tmp_path, capsys):
    import json

    from castle_envs.experiments.cli import main

    out = tmp_path / "easy.jsonl"
    base = [
        "solve",
        "--difficulty",
        "easy",
        "--budget",
        "2000",
        "--random-games",
        "0",
        "--out",
        str(out),
        "--json",
    ]
    assert main(base + ["--deals", "3"]) == 0
    first = out.read_text().splitlines()
    summary = json.loads(capsys.readouterr().out)
    assert summary["solver"] == "compiled" and summary["deals"] == 3
    assert main(base + ["--deals", "5", "--resume"]) == 0  # keeps 3, solves 2 more
    lines = out.read_text().splitlines()
    assert lines[:3] == first and len(lines) == 5
    assert json.loads(capsys.readouterr().out)["deals"] == 5
    assert (
        main(
            [
                "solve",
                "--compare",
                "--difficulty",
                "medium",
                "--deals",
                "2",
                "--budget",
                "3000",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["nodes"] > 0 and sum(report["verdicts"].values()) == 2
    # the Python solver is the tests' reference now: an old command says where it went
    assert main(base + ["--deals", "1", "--solver", "python"]) == 2
    err = capsys.readouterr().err
    assert (
        "tests/reference/castle_siege_solver.py" in err and "compiled solver is the solver" in err
    )
    assert main(["solve", "--difficulty", "easy", "--deals", "1", "--resume"]) == 2
    assert (
        main(["solve", "--difficulty", "easy", "--deals", "1", "--probe-policy", "nonsense"]) == 2
    )
