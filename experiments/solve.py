"""``castle-envs solve``: how many Castle Siege (or, with ``--game castellion``, Castellion:
``solve_castellion``) deals can be won at all?

Each deal is solved with the whole deck order known (the compiled solver,
``castle_envs.agents.solvers.castle_siege_compiled.CompiledSolver``; ``castle_envs.agents.solvers.castle_siege``
describes it):
winnable (with a winning line, replayed in the Gymnasium env before it is counted),
unwinnable, or unknown within the budget. Deal ``i`` is the deck that
``env.reset(seed=SEED + i)`` deals (``solver.deal_deck``), so any agent's win rate can be
measured on the same deals. Random play (uniform over the legal moves) is played on each
deal too.

    castle-envs solve --difficulty very_hard --deals 1000 --seed 0 --budget 10s --workers 2
    castle-envs solve --difficulty easy --deals 300 --budget 20000 --out results/easy.jsonl

``--budget`` is a node count (``20000`` or ``20000n``: deterministic, the same verdicts on
any machine) or seconds (``10s``). The summary gives the winnable fraction as a 95% Wilson
interval whose lower end counts only proven wins and whose upper end counts the unknowns as
wins too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import statistics
import sys
import time

import numpy as np

from .common import parse_budget, read_evaluate_csv, rules_of
from .stats import wilson_interval

DIFFICULTIES = ("easy", "medium", "hard", "very_hard")
#: each game's ``castle-envs solve`` command (perfect-information solver), ``"module:run"``
SOLVERS = {
    "castle-siege": "castle_envs.experiments.solve:run_castle_siege",
    "castellion": "castle_envs.experiments.solve_castellion:run",
}
#: the games with a solve command
SOLVED_GAMES = tuple(SOLVERS)
EVENT_KEYS = (
    "royal_assaults",
    "precision_strikes",
    "flush_sieges",
    "regroups",
    "castles_captured",
    "turns",
    "actions",
)


#: what a rules flag's help adds to "<game> rules option" (the rules documents say more)
RULE_HELP = {
    "victory": ": any_time (default: the fourth capture wins even with an empty deck) or "
    "deck_left (it must come while the deck holds a card; an empty deck with a castle "
    "standing loses)",
}


def add_rule_flags(p) -> None:
    """A ``--name`` flag per rules option of each solved game, from the game's options table
    (``RULE_CHOICES`` in its rules module): a new option needs no line here."""
    from castle_envs.castellion.rules import RULE_CHOICES as CASTELLION_RULES
    from castle_envs.castle_siege.rules import RULE_CHOICES as SIEGE_RULES

    for title, table in (("Castle Siege", SIEGE_RULES), ("Castellion", CASTELLION_RULES)):
        for name, values in table.items():
            p.add_argument(
                "--" + name.replace("_", "-"),
                default=values[0],
                choices=values,
                help=f"{title} rules option{RULE_HELP.get(name, '')}",
            )


def add_parser(sub):
    p = sub.add_parser(
        "solve", help="solve deals with everything hidden known (Castle Siege, Castellion)"
    )
    p.add_argument(
        "--game",
        default="castle-siege",
        choices=SOLVED_GAMES,
        help="castle-siege (default) or castellion (--level; Castellion takes "
        "--deals, --seed, --budget, --random-games, --out, --resume, "
        "--retry-unknown, --assume-settings, --json, --probe-policy, --loss-budget and "
        "its rules options)",
    )
    add_castellion_arguments(p)
    add_deal_arguments(p)
    add_rule_flags(p)
    add_search_arguments(p)
    add_output_arguments(p)
    add_check_arguments(p)
    p.set_defaults(run=run)


def add_castellion_arguments(p) -> None:
    """Castellion's level and loss search (its rules options: ``add_rule_flags``)."""
    p.add_argument(
        "--level",
        default="school",
        choices=("school", "academy", "menace", "all"),
        help="Castellion level",
    )
    p.add_argument(
        "--loss-budget",
        type=int,
        default=None,
        metavar="NODES",
        help="Castellion: node budget of the loss search (default: its share of "
        "--budget with the portfolio, else 100000 apart from --budget; 0: only the "
        "bounds at the root), which proves deals lost "
        "(castle_envs.agents.solvers.castellion_loss)",
    )


def add_deal_arguments(p) -> None:
    """Which deals, the budget per deal and where they run."""
    p.add_argument("--difficulty", default="very_hard", choices=DIFFICULTIES)
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--seed", type=int, default=0, help="deal i is env.reset(seed=SEED + i)")
    p.add_argument(
        "--budget",
        default=None,
        help="per deal: nodes (20000 or 20000n) or seconds (10s); default: Castle Siege "
        "20000, Castellion 20000000 (its portfolio of methods; 20000 with --probe-policy "
        "planner or none)",
    )
    p.add_argument("--workers", type=int, default=1, help="local processes")
    p.add_argument("--backend", default="local", choices=("local", "ray"))
    p.add_argument("--address", help="Ray cluster address (--backend ray)")
    p.add_argument(
        "--random-games", type=int, default=10, help="uniform random games per deal (0: skip)"
    )


def add_search_arguments(p) -> None:
    """The solver, its probes' policy and the nested search before it."""
    p.add_argument(
        "--solver",
        choices=("compiled", "python"),
        default="compiled",
        help="compiled, the only solver (python, the former reference, moved to "
        "tests/reference/castle_siege_solver.py and is refused here)",
    )
    p.add_argument(
        "--probe-policy",
        default=None,
        help="Castle Siege: policy the solver's probes follow on every other "
        "playout: linear (the shipped trained move scorer, default), "
        "linear:PATH, heuristic (castle_envs.agents.baselines.castle_siege), none (the "
        "search's own order). Castellion: portfolio (default: every method, "
        "cheap first: the bounds, the planner's game, nested search, the solver, the loss "
        "search; castle_envs.agents.solvers.castellion_portfolio), planner (the solver "
        "after the planner agent's game; a won game is the verdict) or none (the solver)",
    )
    p.add_argument(
        "--nested",
        type=int,
        default=0,
        metavar="LEVEL",
        help="Castle Siege: before the solver, nested Monte Carlo search of this "
        "level (1 or 2; 0: off) looks for a winning line "
        "(castle_envs.agents.solvers.castle_siege_nested; needs numba); a deal it fails gets "
        "the solver's whole budget",
    )
    p.add_argument(
        "--nested-width",
        type=int,
        default=5,
        help="moves the nested search tries at each step (default 5)",
    )
    p.add_argument(
        "--nested-runs",
        type=int,
        default=4,
        help="nested searches per deal, each with its own noise seed (default 4)",
    )
    p.add_argument(
        "--nested-seed",
        type=int,
        default=0,
        help="run r of the nested search uses noise seed NESTED_SEED + r (default 0)",
    )


def add_output_arguments(p) -> None:
    """Timing instead of a study, resuming and what is written."""
    p.add_argument(
        "--compare",
        action="store_true",
        help="instead of a study: time the compiled solver on the deals (depth-first "
        "search only): nodes per second and its verdicts (the comparison with "
        "the Python reference is in tests/castle_siege/test_fast_solver.py)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --out: keep the deals already in that file, solve the rest (a "
        "last line cut by a crash is dropped with a warning and redone); each line "
        "carries the settings it was solved under: a file of another game, variant or "
        "rules is refused, and so is one whose deals were last solved under another "
        "budget or search",
    )
    p.add_argument(
        "--retry-unknown",
        action="store_true",
        help="with --resume: solve again the deals recorded as unknown (with this "
        "run's settings, e.g. a larger budget or --nested-width: only the game, "
        "variant and rules must be the file's), appending their new records; the "
        "last record of a deal counts",
    )
    p.add_argument(
        "--assume-settings",
        action="store_true",
        help="with --resume: take the records of a file written before solve records "
        "carried their settings as solved under this command's settings (nothing in "
        "those lines can show it; without this flag they are refused)",
    )
    p.add_argument(
        "--out",
        help="write one JSON line per deal here, as each is solved (in the order they "
        "finish), with the settings it was solved under; without --resume the file is "
        "started over, which is refused when it exists and is not a solve results file",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def add_check_arguments(p) -> None:
    """The modes that check the solver or draw its results instead of solving."""
    p.add_argument(
        "--soundness-check",
        type=int,
        metavar="GAMES",
        default=0,
        help="instead of solving deals: compare the solver with plain exhaustive "
        "search on endgames of GAMES random and GAMES solved games",
    )
    p.add_argument(
        "--check-lines",
        nargs="*",
        metavar="JSONL",
        default=[],
        help="instead of solving: replay the winning lines in these --out files "
        "and check that no pruning bound fires on any of their positions",
    )
    p.add_argument(
        "--plot",
        metavar="SVG",
        help="instead of solving: draw the summaries given with --summaries",
    )
    p.add_argument("--summaries", nargs="*", default=[], help="summary JSON files (--json)")
    p.add_argument(
        "--agents-csv",
        nargs="*",
        default=[],
        help="castle-envs evaluate CSVs whose win rates join the plot",
    )


def probe_policy(spec: str):
    """The probes' policy: (a python ``policy(state, rng)`` or None, its 30 linear weights
    for the compiled solver or None)."""
    from castle_envs.agents.learned.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy

    if spec == "none":
        return None, None
    if spec == "heuristic":
        from castle_envs.agents.baselines.castle_siege import heuristic_policy

        # the heuristic's weights in the linear scorer's features play its moves (99.9%)
        return heuristic_policy, LinearPolicy(HEURISTIC_WEIGHTS).vector()
    if spec == "linear" or spec.startswith("linear:"):
        from castle_envs.agents.registry import shipped_models_dir

        path = spec[7:] or shipped_models_dir() / "castle_siege_very_hard_linear" / "policy.json"
        policy = LinearPolicy.load(path)
        return policy, policy.vector()
    raise ValueError(f"unknown --probe-policy {spec!r}: linear, linear:PATH, heuristic or none")


_SOLVERS: dict = {}  # per process: a compiled solver's tables are large, so it is reused
_NESTED: dict = {}


PYTHON_SOLVER_GONE = (
    "--solver python: the Python solver moved to "
    "tests/reference/castle_siege_solver.py (the reference the tests compare "
    "the compiled one with); the compiled solver is the solver: drop --solver"
)


def make_solver(nodes, seconds, probe: str, **settings):
    weights = probe_policy(probe)[1]
    key = (nodes, seconds, probe, tuple(sorted(settings.items())))
    if key not in _SOLVERS:
        from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

        _SOLVERS.clear()
        _SOLVERS[key] = CompiledSolver(
            max_nodes=nodes, max_seconds=seconds, probe_weights=weights, **settings
        )
    return _SOLVERS[key]


def make_nested(settings: dict, probe: str):
    """The nested search of ``settings`` (level, width, runs), guided by the probes' scorer
    (the shipped one when the probes follow none or the heuristic's weights)."""
    key = (tuple(sorted(settings.items())), probe)
    if key not in _NESTED:
        from castle_envs.agents.solvers.castle_siege_nested import NestedSearch

        # the probes' scorer, else the shipped one
        weights = probe_policy(probe if probe.startswith("linear") else "linear")[1]
        _NESTED.clear()
        _NESTED[key] = NestedSearch(weights=weights, **settings)
    return _NESTED[key]


def solve_one(job: dict) -> dict:
    """Solve one deal and play random games on it; a plain dict (crosses processes)."""
    from castle_envs.agents.solvers.castle_siege import (
        WINNABLE,
        deal_deck,
        line_events,
        replay_wins,
    )

    from castle_envs.castle_siege.rules import State

    seed, difficulty, rules = job["seed"], job["difficulty"], job["rules"]
    deck = deal_deck(seed)
    state = State.new_game(difficulty=difficulty, deck=deck, **rules)
    probe = job.get("probe_policy", "none")
    solver = make_solver(job["nodes"], job["seconds"], probe)
    nested = None
    if job.get("nested"):
        nested = make_nested(job["nested"], probe).solve(state)
    result = nested if nested and nested.verdict == WINNABLE else solver.solve(state)
    seconds = result.seconds + (nested.seconds if nested and result is not nested else 0.0)
    record = {
        "seed": seed,
        "verdict": result.verdict,
        "nodes": result.nodes,
        "seconds": round(seconds, 4),
        "pruned": result.pruned,
        "line": result.line,
    }
    if nested:
        record["found_by"] = (
            "nested" if result is nested else "solver" if result.verdict == WINNABLE else None
        )
        record["nested"] = {
            **job["nested"],
            "nodes": nested.nodes,
            "seconds": round(nested.seconds, 4),
        }
    if result.verdict == WINNABLE:
        if not replay_wins(deck, difficulty, result.line, **rules):
            raise RuntimeError(f"deal {seed}: the winning line does not replay to a win")
        record["events"] = line_events(deck, difficulty, result.line, **rules)
    rng = np.random.default_rng(seed)
    wins = 0
    for _ in range(job["random_games"]):
        s = State.new_game(difficulty=difficulty, deck=deck, **rules)
        while not s.outcome:
            legal = np.flatnonzero(s.legal_action_mask())
            s.apply_action(int(legal[rng.integers(len(legal))]))
        wins += s.won
    record["random_wins"] = wins
    record["random_games"] = job["random_games"]
    return record


def solve_many(jobs: list[dict]) -> list[dict]:
    return [solve_one(job) for job in jobs]


def _run_jobs(jobs: list[dict], workers: int, backend: str, keep, address: str | None = None):
    """``keep(record)`` for each deal's record as soon as it is solved (in the order they
    finish). One local worker solves in this process; more are local processes handed one
    deal at a time (``parallel.stream``: on SIGTERM or an error none is left running); Ray
    takes chunks of deals (``parallel.run_chunks``), each kept as it comes in."""
    if backend == "local" and workers <= 1:
        for job in jobs:
            keep(solve_one(job))
        return
    if backend == "local":
        from .parallel import stream

        records = stream(solve_one, jobs, workers)
        with contextlib.closing(records):
            for record in records:
                keep(record)
        return
    from .parallel import run_chunks, split

    chunks = [([jobs[i] for i in idx],) for idx in split(len(jobs), workers, max_chunk=20)]
    run_chunks(
        solve_many,
        chunks,
        workers=workers,
        backend=backend,
        address=address,
        on_result=lambda i, records: [keep(r) for r in records],
    )


def verdict_counts(records: list[dict], budget: str) -> dict:
    """What both solvers' summaries (this one's and ``solve_castellion``'s) hold first: the
    budget, the deals and their seeds, and the verdicts counted."""
    n = len(records)
    won = sum(r["verdict"] == "winnable" for r in records)
    lost = sum(r["verdict"] == "unwinnable" for r in records)
    return {
        "budget": budget,
        "deals": n,
        "seeds": [records[0]["seed"], records[-1]["seed"]] if records else [],
        "winnable": won,
        "unwinnable": lost,
        "unknown": n - won - lost,
        "winnable_fraction": won / n if n else None,
    }


def random_play(records: list[dict]) -> dict:
    """The random-play games the solvers' records count, summed (``summary["random"]``)."""
    games = sum(r["random_games"] for r in records)
    wins = sum(r["random_wins"] for r in records)
    return {
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else None,
        "interval_95": list(wilson_interval(wins, games)),
    }


def summarize(records: list[dict], difficulty: str, budget: str) -> dict:
    counts = verdict_counts(records, budget)
    n, won, unknown = counts["deals"], counts["winnable"], counts["unknown"]
    lower = wilson_interval(won, n)[0]
    upper = wilson_interval(won + unknown, n)[1]
    seconds = [r["seconds"] for r in records]
    nodes = [r["nodes"] for r in records]
    wins = [r for r in records if r["verdict"] == "winnable"]
    usage = {}
    for key in EVENT_KEYS:
        vals = [r["events"][key] for r in wins]
        usage[key] = {
            "mean": statistics.fmean(vals) if vals else None,
            "share_of_lines": (sum(v > 0 for v in vals) / len(vals)) if vals else None,
        }
    return {
        "difficulty": difficulty,
        **counts,
        "unknown_fraction": unknown / n if n else None,
        "winnable_interval_95": [lower, upper],
        "nodes": {
            "mean": statistics.fmean(nodes),
            "median": statistics.median(nodes),
            "max": max(nodes),
        }
        if n
        else {},
        "seconds": {
            "mean": statistics.fmean(seconds),
            "median": statistics.median(seconds),
            "max": max(seconds),
            "total": sum(seconds),
        }
        if n
        else {},
        "winning_line_usage": usage,
        "random": random_play(records),
    }


def compare_solvers(
    difficulty: str, seed: int, deals: int, nodes: int, rules: dict, out=None
) -> dict:
    """The compiled solver on the deals, depth-first search only (no probes), after one
    warm-up deal: nodes per second (CPU time) and its verdicts. (Before the solver was written
    once this compared it with the Python solver, now ``tests/reference/castle_siege_solver.py``;
    the tests make that comparison.)"""
    from castle_envs.agents.solvers.castle_siege import deal_deck
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    from castle_envs.castle_siege.rules import State

    solver = CompiledSolver(max_nodes=nodes, probe_share=0)
    solver.solve(State.new_game(difficulty=difficulty, deck=deal_deck(seed + deals), **rules))
    total_nodes, seconds = 0, 0.0
    verdicts: dict[str, int] = {}
    for i in range(deals):
        state = State.new_game(difficulty=difficulty, deck=deal_deck(seed + i), **rules)
        start = time.process_time()
        result = solver.solve(state)
        seconds += time.process_time() - start
        total_nodes += result.nodes
        verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
    rate = total_nodes / max(seconds, 1e-9)
    report = {
        "difficulty": difficulty,
        "deals": deals,
        "seeds": [seed, seed + deals - 1],
        "budget_nodes": nodes,
        "cpu_seconds": seconds,
        "nodes": total_nodes,
        "nodes_per_second": rate,
        "verdicts": verdicts,
    }
    if out is not None:
        print(
            f"Castle Siege {difficulty}, deals {seed}..{seed + deals - 1}, {nodes} nodes/deal, "
            "compiled solver, depth-first search only (CPU time, after a warm-up deal)",
            file=out,
        )
        print(
            f"  {rate:>12,.0f} nodes/s  ({total_nodes:,} nodes, {seconds:.2f} s); verdicts "
            + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
            file=out,
        )
    return report


def soundness_check(
    games: int, difficulty: str, seed: int, budget: int = 20_000, rules: dict | None = None
) -> dict:
    """Endgames (deck of 0-3 cards, battle phase) reached by random attacking play and by
    the solver's own winning lines, each solved with all reductions and by plain exhaustive
    search (no table, no bounds, no ordering, no probes); any disagreement is a bug."""
    from castle_envs.agents.solvers.castle_siege import UNKNOWN, WINNABLE, deal_deck
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    from castle_envs.castle_siege.rules import BATTLE, State

    rules = rules or {}
    rng = np.random.default_rng(seed)
    positions = []
    reduced = CompiledSolver(max_nodes=budget)
    for g in range(games):
        left = int(rng.integers(0, 4))
        s = State.new_game(np.random.default_rng(seed + g), difficulty, **rules)
        while not s.outcome and not (s.deck_size <= left and s.phase == BATTLE):
            legal = np.flatnonzero(s.legal_action_mask())
            plays = legal[legal < 1612]
            pick = plays if len(plays) and rng.random() < 0.8 else legal
            s.apply_action(int(pick[rng.integers(len(pick))]))
        if not s.outcome:
            positions.append(s)
        deck = deal_deck(seed + g)
        result = reduced.solve(State.new_game(difficulty=difficulty, deck=deck, **rules))
        if result.verdict == WINNABLE:
            s = State.new_game(difficulty=difficulty, deck=deck, **rules)
            for action in result.line:
                if s.deck_size <= left and s.phase == BATTLE:
                    positions.append(s.clone())
                    break
                s.apply_action(action)
    counts = {
        "positions": len(positions),
        "agree_winnable": 0,
        "agree_unwinnable": 0,
        "undecided": 0,
        "disagree": 0,
    }
    reduced = CompiledSolver(max_nodes=budget)
    plain = CompiledSolver(max_nodes=budget, prune=False, table=False, order=False)
    for s in positions:
        fast, slow = reduced.solve(s), plain.solve(s)
        if UNKNOWN in (fast.verdict, slow.verdict):
            counts["undecided"] += 1
        elif fast.verdict != slow.verdict:
            counts["disagree"] += 1
            logging.getLogger(__name__).warning(
                "DISAGREE %s %s %s", fast.verdict, slow.verdict, s.to_json()
            )
        else:
            counts["agree_" + fast.verdict] += 1
    return counts


AGENT_COLOURS = {
    "random": "#e6550d",
    "greedy": "#756bb1",
    "heuristic": "#31a354",
    "mcts": "#d6616b",
}


def read_agent_csv(paths: list[str]) -> dict:
    """``castle-envs evaluate`` CSVs -> {difficulty: {agent: (rate, low, high, n)}}."""
    return read_evaluate_csv(paths, "difficulty", "castle-envs evaluate")


#: what ``--plot`` reads of each ``--summaries`` file (``solve --json`` writes them)
SUMMARY_KEYS = (
    "difficulty",
    "deals",
    "budget",
    "winnable_fraction",
    "winnable_interval_95",
    "random",
)


def read_summary(path: str) -> dict:
    from .common import read_json

    summary = read_json(path, "--summaries")
    ok = isinstance(summary, dict) and all(k in summary for k in SUMMARY_KEYS)
    try:
        ok = (
            ok
            and summary["difficulty"] in DIFFICULTIES
            and int(summary["deals"]) >= 1
            and all(
                0 <= float(v) <= 1
                for v in [
                    summary["winnable_fraction"],
                    *summary["winnable_interval_95"],
                    *summary["random"]["interval_95"],
                ]
            )
            and len(summary["winnable_interval_95"]) == 2
            and float(summary["random"]["win_rate"] or 0.0) >= 0
        )
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(
            f"--summaries {path!r}: not a summary written by castle-envs solve "
            f"--json (needs {', '.join(SUMMARY_KEYS)})"
        )
    return summary


def plot_svg(summaries: list[dict], agents: dict | None = None) -> str:
    """A dependency-free SVG: per difficulty, the solver's winnable interval (proven wins to
    wins + unknowns, 95%) as a bar, random play's win rate as a dot, and the win rates of
    the agents in ``agents`` ({difficulty: {name: (rate, low, high, n)}}) with intervals.
    A series with no games (a summary whose random play was skipped, an agent with no
    episodes) is not drawn, nor named in the legend; every text lies inside the picture
    (``viewBox``), its width reserved with ``common.svg_text_width``."""
    from .common import svg_legend, svg_legend_width, svg_open, svg_rate_grid, svg_text_width

    agents = agents or {}
    order = {d: i for i, d in enumerate(DIFFICULTIES)}
    rows = sorted(summaries, key=lambda s: (order[s["difficulty"]], -s["deals"]))
    seen, picked = set(), []
    for s in rows:  # one (the largest) summary per difficulty
        if s["difficulty"] not in seen:
            seen.add(s["difficulty"])
            picked.append(s)
    title = "Castle Siege: share of deals winnable (solver) vs random play and agents"
    note = (
        "bar: solver, 95% interval from proven wins only to wins + unknowns; "
        "dark line: proven share"
    )
    series = []  # per difficulty: {name: (rate, low, high)}
    for s in picked:
        marks = {}
        random_play = s["random"]
        if int(random_play.get("games", 0) or 0) > 0 and random_play["win_rate"] is not None:
            marks["random"] = (random_play["win_rate"], *random_play["interval_95"])
        for name, (rate, low, high, n) in agents.get(s["difficulty"], {}).items():
            if n > 0 and name not in marks:  # the summary's own random play comes first
                marks[name] = (rate, low, high)
        series.append(marks)
    drawn = {n for marks in series for n in marks}
    names = [n for n in ["random"] + sorted(drawn - {"random"}) if n in drawn]
    left, top, plot_h = 60, 30, 200
    most = max([len(m) for m in series] + [0])
    slot = max(80.0, 36 + 2 * (8 + 9 * most))  # each difficulty's width: bar and marks
    w = max(
        600.0,
        left + 20 + slot * len(picked),
        left + svg_text_width(note) + 20,
        svg_text_width(title, 13) + 20,
        left + svg_legend_width(names) + 20,
    )
    h = top + plot_h + 80
    gap = (w - left - 20) / max(1, len(picked))
    y = lambda v: top + plot_h * (1 - v)  # noqa: E731
    out = svg_open(w, h, title, 16) + svg_rate_grid(left, w - 20, y)
    for i, (s, marks) in enumerate(zip(picked, series)):
        x = left + gap * (i + 0.5)
        lo, hi = s["winnable_interval_95"]
        won = s["winnable_fraction"]
        out.append(
            f'<rect x="{x - 18:.1f}" y="{y(hi):.1f}" width="36" '
            f'height="{max(1.0, y(lo) - y(hi)):.1f}" fill="#9ecae1" stroke="#3182bd"/>'
        )
        out.append(
            f'<line x1="{x - 18:.1f}" x2="{x + 18:.1f}" y1="{y(won):.1f}" '
            f'y2="{y(won):.1f}" stroke="#08306b" stroke-width="2"/>'
        )
        for k, (name, (rate, low, high)) in enumerate(marks.items()):
            cx, colour = x + 26 + 9 * k, AGENT_COLOURS.get(name, "#636363")
            out.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(high):.1f}" '
                f'y2="{y(low):.1f}" stroke="{colour}" data-series="{name}"/>'
            )
            out.append(
                f'<circle cx="{cx:.1f}" cy="{y(rate):.1f}" r="3.5" fill="{colour}" '
                f'data-series="{name}"/>'
            )
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{s['difficulty']}</text>"
        )
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 30}" text-anchor="middle" '
            f'fill="#555">n={s["deals"]}, {s["budget"]}</text>'
        )
    out.append(f'<text x="{left}" y="{h - 26}" fill="#555">{note}</text>')
    out += svg_legend(names, AGENT_COLOURS, left, h - 8)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def check_lines(paths: list[str], difficulty: str, rules: dict | None = None) -> dict:
    """Every position on a winning line is winnable, so a sound bound must never call one
    hopeless: count the positions checked and any that a bound would have pruned."""
    from castle_envs.agents.solvers.castle_siege import deal_deck
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    from castle_envs.castle_siege.rules import State

    from .common import read_json_lines

    solver = CompiledSolver()
    counts = {"lines": 0, "positions": 0, "pruned_wrongly": 0}
    for path in paths:
        for record in read_json_lines(path, "--check-lines", ("seed", "verdict", "line")):
            if record["verdict"] != "winnable":
                continue
            if (
                isinstance(record["seed"], bool)
                or not isinstance(record["seed"], int)
                or not isinstance(record["line"], list)
            ):
                raise ValueError(
                    f"--check-lines {path!r}: seed {record['seed']!r}: "
                    f"expected an integer seed and a list of actions"
                )
            s = State.new_game(
                difficulty=difficulty, deck=deal_deck(record["seed"]), **(rules or {})
            )
            counts["lines"] += 1
            for action in record["line"]:
                counts["positions"] += 1
                if solver.hopeless(s):
                    counts["pruned_wrongly"] += 1
                    logging.getLogger(__name__).warning(
                        "PRUNED A WINNING POSITION %s %s", record["seed"], s.to_json()
                    )
                s.apply_action(action)
            if not s.won:
                raise ValueError(
                    f"--check-lines {path!r}: deal {record['seed']}: the line does not win"
                )
    return counts


def castle_siege_rules(args) -> dict:
    from castle_envs.castle_siege.rules import RULE_CHOICES

    return rules_of(args, RULE_CHOICES)


def run(args) -> int:
    """``castle-envs solve``: the game's solve command (``SOLVERS``)."""
    from castle_envs.registry import get_game, load

    solver = SOLVERS.get(get_game(args.game).slug)
    if solver is None:
        raise ValueError(f"no solver for {args.game}; games with one: {', '.join(SOLVED_GAMES)}")
    return load(solver)(args)


def run_castle_siege(args) -> int:
    if args.solver == "python":
        raise ValueError(PYTHON_SOLVER_GONE)
    args.probe_policy = args.probe_policy or "linear"
    args.budget = args.budget or "20000"
    if args.check_lines:
        print(json.dumps(check_lines(args.check_lines, args.difficulty, castle_siege_rules(args))))
        return 0
    if args.plot:
        return run_plot(args)
    if args.soundness_check:
        rules = castle_siege_rules(args)
        report = soundness_check(args.soundness_check, args.difficulty, args.seed, rules=rules)
        print(json.dumps(report))
        return 0
    nodes, seconds, nested = check_study_arguments(args)
    if args.compare:
        report = compare_solvers(
            args.difficulty,
            args.seed,
            args.deals,
            nodes or 20_000,
            castle_siege_rules(args),
            sys.stdout if not args.json else None,
        )
        if args.json:
            print(json.dumps(report, indent=2))
        return 0
    return run_study(args, nodes, seconds, nested)


def run_plot(args) -> int:
    """``--plot SVG``: draw the ``--summaries`` (and the ``--agents-csv`` win rates)."""
    from .common import check_overwrite, is_svg_chart

    check_overwrite(args.plot, "--plot", is_svg_chart, "a chart castle-envs solve drew")
    summaries = [read_summary(path) for path in args.summaries]
    if not summaries:
        raise ValueError("--plot needs --summaries FILE ...")
    with open(args.plot, "w") as f:
        f.write(plot_svg(summaries, read_agent_csv(args.agents_csv)))
    return 0


def check_study_arguments(args) -> tuple:
    """The study's settings checked before any worker starts: the budget (nodes, seconds)
    and the nested search's settings (None when off)."""
    if args.deals < 1:
        raise ValueError(f"--deals must be >= 1, got {args.deals}")
    if args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.random_games < 0:
        raise ValueError(f"--random-games must be >= 0, got {args.random_games}")
    nodes, seconds = parse_budget(args.budget)
    if args.out:
        from .solve_results import check_out_file

        check_out_file(args.out, args.resume)  # now, not after the solving
    probe_policy(args.probe_policy)  # a bad spec fails here, before any worker starts
    nested = None
    if args.nested:
        nested = {
            "level": args.nested,
            "width": args.nested_width,
            "runs": args.nested_runs,
            "seed": args.nested_seed,
        }
        make_nested(nested, args.probe_policy)  # likewise a bad setting or no numba
    return nodes, seconds, nested


def run_study(args, nodes, seconds, nested) -> int:
    """Solve ``--deals`` deals (keeping those of ``--out`` with ``--resume``), then print
    the summary."""
    settings = study_settings(args, nodes, seconds, nested)
    jobs = [
        {
            "seed": args.seed + i,
            "difficulty": args.difficulty,
            "rules": castle_siege_rules(args),
            "nodes": nodes,
            "seconds": seconds,
            "random_games": args.random_games,
            "probe_policy": args.probe_policy,
            "nested": nested,
        }
        for i in range(args.deals)
    ]
    records, jobs, out = resume_study(args, jobs, settings)
    start = time.perf_counter()
    solve_jobs(args, jobs, records, out, start, settings)
    records.sort(key=lambda r: r["seed"])
    summary = study_summary(args, records, nested)
    summary["wall_seconds"] = time.perf_counter() - start
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_study(args, summary, nested)
    return 0


def study_settings(args, nodes, seconds, nested) -> dict:
    """What each record of this study carries as its ``settings`` (``solve_results``)."""
    from .solve_results import budget_text

    return {
        "game": "castle-siege",
        "variant": {"difficulty": args.difficulty},
        "rules": castle_siege_rules(args),
        "budget": budget_text(nodes, seconds),
        "probe_policy": args.probe_policy,
        "nested": nested,
    }


def check_record(record: dict, where: str) -> None:
    """A Castle Siege solve record's own fields (``solve_results.check_common`` checks the
    rest): a winning line's event counts."""
    if record["verdict"] != "winnable":
        return
    events = record.get("events")
    if not isinstance(events, dict) or any(
        isinstance(events.get(k), bool) or not isinstance(events.get(k), int) or events[k] < 0
        for k in EVENT_KEYS
    ):
        raise ValueError(f"{where}: a winnable deal's 'events' must count {', '.join(EVENT_KEYS)}")


def resume_study(args, jobs: list[dict], settings: dict) -> tuple:
    """(the records ``--out`` already holds with ``--resume``, each checked and solved
    under ``settings``; the jobs left; the ``--out`` file opened to append to, or None)."""
    if args.resume and not args.out:
        raise ValueError("--resume needs --out FILE (the deals solved so far)")
    if args.retry_unknown and not args.resume:
        raise ValueError("--retry-unknown needs --resume --out FILE")
    if getattr(args, "assume_settings", False) and not args.resume:
        raise ValueError("--assume-settings needs --resume --out FILE")
    if not args.out:
        return [], jobs, None
    records = []
    if args.resume and os.path.exists(args.out):
        from .solve_results import read_results

        done = read_results(
            args.out,
            lambda r: settings,
            check_record,
            lambda r: r["seed"],
            args.retry_unknown,
            getattr(args, "assume_settings", False),
        )
        records = [done[j["seed"]] for j in jobs if j["seed"] in done]
        jobs = [j for j in jobs if j["seed"] not in done]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    out = open(args.out, "a" if args.resume else "w")  # noqa: SIM115 (held for the run)
    return records, jobs, out


def solve_jobs(args, jobs: list[dict], records: list, out, start: float, settings: dict) -> None:
    """Solve ``jobs`` on the workers, each record (with ``settings``) appended to
    ``records`` and to ``out`` (then closed) as it comes, with a progress line every
    twentieth of the deals."""
    from . import journal

    def keep(record: dict) -> None:
        record["settings"] = settings
        records.append(record)
        if out:
            journal.append(out, record)
        if not args.json and len(records) % max(1, args.deals // 20) == 0:
            print(
                f"  {len(records)}/{args.deals} deals, {time.perf_counter() - start:.0f}s",
                file=sys.stderr,
            )

    from .parallel import Terminated

    try:
        _run_jobs(jobs, args.workers, args.backend, keep, args.address)
    except Terminated as stop:
        stop.saved = (
            f"the deals solved are in {args.out} (--resume goes on)"
            if out
            else "nothing was saved (no --out)"
        )
        raise
    finally:
        if out:
            out.close()


def study_summary(args, records: list[dict], nested) -> dict:
    """``summarize``'s figures with the study's settings."""
    summary = summarize(records, args.difficulty, args.budget)
    summary["rules"] = castle_siege_rules(args)
    # winning lines whose fourth capture comes with an empty deck (only victory="any_time"
    # allows them; records written before deck_at_end existed are not counted)
    summary["wins_with_empty_deck"] = sum(
        r.get("events", {}).get("deck_at_end") == 0 for r in records if r["verdict"] == "winnable"
    )
    summary["probe_policy"] = args.probe_policy
    summary["solver"] = "compiled"
    if nested:
        summary["nested"] = {**nested, "found": sum(r.get("found_by") == "nested" for r in records)}
    return summary


def print_study(args, summary: dict, nested) -> None:
    lo, hi = summary["winnable_interval_95"]
    rnd = summary["random"]
    print(
        f"Castle Siege {args.difficulty}, {args.deals} deals (seeds {args.seed}.."
        f"{args.seed + args.deals - 1}), budget {args.budget}/deal"
    )
    print(
        f"  winnable {summary['winnable']}, unwinnable {summary['unwinnable']}, "
        f"unknown {summary['unknown']}"
    )
    if nested:
        print(
            f"  nested search (level {nested['level']}, width {nested['width']}, "
            f"{nested['runs']} runs) found {summary['nested']['found']} of the winning lines"
        )
    print(
        f"  winnable fraction 95% interval [{lo:.3f}, {hi:.3f}] "
        "(lower: proven wins only; upper: unknowns counted as wins)"
    )
    print(
        f"  nodes/deal mean {summary['nodes']['mean']:.0f}, time/deal mean "
        f"{summary['seconds']['mean']:.3f}s (median {summary['seconds']['median']:.3f}s)"
    )
    if rnd["games"]:
        print(f"  random play: {rnd['wins']}/{rnd['games']} wins")
    use = summary["winning_line_usage"]
    if summary["winnable"]:
        print(
            "  winning lines use: "
            + ", ".join(
                f"{k} in {use[k]['share_of_lines']:.0%}"
                for k in ("royal_assaults", "precision_strikes", "flush_sieges", "regroups")
            )
        )
