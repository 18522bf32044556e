"""``castle-envs solve --game castellion``: how many Castellion deals can be won at all?

Each deal is solved with both piles' order and every face-down Ordeal known
(``castle_envs.agents.solvers.castellion``): winnable (with a winning line, replayed in the Gymnasium
env before it is counted), unwinnable (a proof of loss: a bound at the root, the loss search
with its own budget ``--loss-budget``, or the whole tree searched under sound reductions;
the record's ``proof`` says which ordeal cannot be met), or unknown within the budget. Deal ``i`` is the position ``env.reset(seed=SEED + i)`` deals, so
any agent's win rate can be measured on the same deals (``castle-envs evaluate --game
castellion --level L --seed SEED``).

    castle-envs solve --game castellion --level school --deals 500 --seed 0 --budget 1000000
    castle-envs solve --game castellion --level all --deals 50 --budget 10s --out r.jsonl

``--budget``: nodes (deterministic; one node is one move played) or seconds (``10s``). The
solver's schedule does not depend on the budget, so each record's ``nodes`` tells the verdict
at every smaller budget too (``budget_curve``). The summary gives the winnable share as a
95% Wilson interval from proven wins only to wins + unknowns, which ordeal the beams could
not get past on the deals not proven winnable, and the solver's nodes per second.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from castle_envs.castellion.rules import RULE_CHOICES

from .common import read_evaluate_csv, rules_of
from .stats import wilson_interval

LEVELS = ("school", "academy", "menace")


#: portfolio: every method, cheap first (``castellion_portfolio``); planner: the study's
#: solver with the planner's game first; none: the solver alone
PROBES = ("portfolio", "planner", "none")


def probe_game(seed: int, level: str, rules: dict, probe: str) -> tuple[bool, list]:
    """The probe policy's game on the deal: (won, its moves). The planner plays as a player
    does (it never reads the piles' order or a face-down card), so a won game is a winning
    line found without perfect information: the cheapest proof a deal is winnable."""
    from castle_envs.agents.search.castellion_planner import PlannerPolicy
    from castle_envs.agents.solvers.castellion import deal

    # the study's probe: the planner as the study ran it (before ``info``, ``scout`` and
    # the smaller ``grow`` at the Menace), so that the recorded verdicts reproduce node for node
    policy = {"planner": lambda: PlannerPolicy(info=0.0, grow=8.0, scout=0.0)}[probe]()
    state = deal(seed, level, **rules)
    line = []
    while not state.outcome:
        action = int(policy(state, None))
        line.append(action)
        state.apply_action(action)
    return bool(state.won), line


def solve_deal(
    solver, seed: int, level: str, rules: dict, random_games: int, probe: str = "none"
) -> dict:
    """One deal's record: the portfolio's verdict (``solver`` a ``Portfolio``; the record's
    ``stages`` say what each stage spent), or the solver's after the probe's game. A winning
    line is replayed in the Gymnasium env before it counts."""
    from castle_envs.agents.solvers.castellion import WINNABLE, deal, replay_wins

    state = deal(seed, level, **rules)
    if probe == "portfolio":
        result = solver.solve(state)
        extra: dict = {"stages": [stage.to_dict() for stage in solver.stages]}
    else:
        result, extra = probed_result(solver, state, seed, level, rules, probe)
    record = {"seed": seed, "level": level, **result.to_dict()}
    record["seconds"] = round(result.seconds, 4)
    record.update(extra)
    if result.verdict == WINNABLE and not replay_wins(seed, level, result.line, **rules):
        raise RuntimeError(
            f"{level} deal {seed}: the winning line does not replay to a win in the Gymnasium env"
        )
    rng = np.random.default_rng(seed)
    wins = 0
    for _ in range(random_games):
        s = deal(seed, level, **rules)
        while not s.outcome:
            legal = np.flatnonzero(s.legal_action_mask())
            s.apply_action(int(legal[rng.integers(len(legal))]))
        wins += s.won
    record["random_wins"], record["random_games"] = wins, random_games
    return record


def probed_result(solver, state, seed: int, level: str, rules: dict, probe: str) -> tuple:
    """(the ``Result``, the record's probe fields): with a probe, the probe's game comes
    first: a win is the verdict (``found_by`` "probe:NAME", its moves counted as nodes);
    otherwise the solver runs with what is left of the budget, so a record's ``nodes`` still
    tells the verdict at every smaller budget."""
    from castle_envs.agents.solvers.castellion import WINNABLE, Result

    start = time.perf_counter()
    won, line = probe_game(seed, level, rules, probe) if probe != "none" else (False, [])
    probe_seconds = time.perf_counter() - start
    budget = (solver.max_nodes, solver.max_seconds)
    solver_nodes = solver_seconds = 0
    if won and (budget[0] is None or len(line) <= budget[0]):
        result = Result(
            WINNABLE, line, len(line), probe_seconds, found_by=f"probe:{probe}", reached=3
        )
    else:
        spent = len(line) if budget[0] is None or len(line) < budget[0] else 0
        if budget[0] is not None:
            solver.max_nodes = budget[0] - spent
        if budget[1] is not None:
            solver.max_seconds = max(1e-3, budget[1] - probe_seconds)
        try:
            result = solver.solve(state)
        finally:
            solver.max_nodes, solver.max_seconds = budget
        solver_nodes, solver_seconds = result.nodes, result.seconds
        result.nodes += spent
        result.seconds += probe_seconds
    extra: dict = {}
    if probe != "none":
        extra["probe"] = {
            "policy": probe,
            "won": won,
            "moves": len(line),
            "seconds": round(probe_seconds, 4),
        }
        extra["solver_nodes"], extra["solver_seconds"] = solver_nodes, solver_seconds
    return result, extra


def budget_curve(records: list[dict], budgets) -> list[dict]:
    """The verdicts each smaller node budget would have given (the schedule is the same at
    every budget: a deal is decided within B nodes exactly when its ``nodes`` <= B)."""
    n = len(records)
    out = []
    for b in budgets:
        won = sum(r["verdict"] == "winnable" and r["nodes"] <= b for r in records)
        lost = sum(r["verdict"] == "unwinnable" and r["nodes"] <= b for r in records)
        out.append(
            {
                "budget_nodes": int(b),
                "winnable": won,
                "unwinnable": lost,
                "unknown": n - won - lost,
                "winnable_interval_95": [
                    wilson_interval(won, n)[0],
                    wilson_interval(n - lost, n)[1],
                ],
            }
        )
    return out


def summarize(records: list[dict], level: str, budget: str, nodes_budget) -> dict:
    from .solve import random_play, verdict_counts

    counts = verdict_counts(records, budget)
    n, won, unknown = counts["deals"], counts["winnable"], counts["unknown"]
    nodes = sum(r["nodes"] for r in records)
    seconds = sum(r["seconds"] for r in records)
    # the solver's own speed: the probes' moves and time left out
    solver_nodes = sum(r.get("solver_nodes", r["nodes"]) for r in records)
    solver_seconds = sum(r.get("solver_seconds", r["seconds"]) for r in records)
    stuck = [0, 0, 0]
    for r in records:
        if r["verdict"] != "winnable":
            stuck[min(r["reached"], 2)] += 1
    summary = {
        "game": "castellion",
        "level": level,
        **counts,
        "winnable_interval_95": [wilson_interval(won, n)[0], wilson_interval(won + unknown, n)[1]],
        "not_proven_winnable_stuck_at_ordeal": {"I": stuck[0], "II": stuck[1], "III": stuck[2]},
        "found_by": {
            k: sum(r["found_by"] == k for r in records)
            for k in sorted({r["found_by"] for r in records if r["found_by"]})
        },
        "unwinnable_proofs": {
            r["seed"]: r["proof"]
            for r in records
            if r["verdict"] == "unwinnable" and r.get("proof")
        },
        "loss_nodes_total": sum(r.get("loss_nodes", 0) for r in records),
        "nodes_total": nodes,
        "solver_seconds_total": seconds,
        "seconds_per_deal": seconds / n if n else None,
        "seconds_max": max((r["seconds"] for r in records), default=None),
        "nodes_per_second": solver_nodes / solver_seconds if solver_seconds else None,
        "random": random_play(records),
    }
    if nodes_budget:
        steps = sorted(
            {
                max(1, nodes_budget // 10),
                max(1, nodes_budget // 4),
                max(1, nodes_budget // 2),
                nodes_budget,
            }
        )
        summary["budget_curve"] = budget_curve(records, steps)
    return summary


def check_record(record: dict, where: str) -> None:
    """A Castellion solve record's own fields (``solve_results.check_common`` checks the
    rest): its level, how far the beams got, what found the verdict."""
    from castle_envs.core.files import kind

    if record.get("level") not in LEVELS:
        raise ValueError(
            f"{where}: 'level' must be one of {', '.join(LEVELS)}, got "
            + (kind(record["level"]) if "level" in record else "nothing")
        )
    reached = record.get("reached")
    if isinstance(reached, bool) or not isinstance(reached, int) or not 0 <= reached <= 3:
        raise ValueError(f"{where}: 'reached' must be an ordeal count 0-3, got {kind(reached)}")
    if record.get("found_by") is not None and not isinstance(record["found_by"], str):
        raise ValueError(f"{where}: 'found_by' must be a name or null")
    for key in ("loss_nodes", "solver_nodes", "solver_seconds"):
        value = record.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{where}: {key!r} must be a number >= 0, got {kind(value)}")


def read_done(args, settings: dict, levels: tuple) -> dict:
    """The deals ``--out`` holds for ``--resume``, by (level, seed), every line checked and
    those of this run's levels solved under its settings (``solve_results``); with
    ``--retry-unknown`` the unknown ones are left to solve again."""
    from .solve_results import read_results

    def settings_for(record: dict) -> dict | None:
        level = record["level"]
        return level_settings(settings, level) if level in levels else None

    return read_results(
        args.out,
        settings_for,
        check_record,
        lambda r: (r["level"], r["seed"]),
        args.retry_unknown,
        getattr(args, "assume_settings", False),
    )


def level_settings(settings: dict, level: str) -> dict:
    """What a record of ``level`` carries as its ``settings`` (``solve_results``)."""
    from .solve_results import budget_text

    return {
        "game": "castellion",
        "variant": {"level": level},
        "rules": settings["rules"],
        "budget": budget_text(settings["nodes"], settings["seconds"]),
        "probe_policy": settings["probe"],
        "loss_budget": settings["loss_budget"],
    }


def run(args) -> int:
    if args.plot:
        return run_plot(args)
    settings = study_settings(args)
    summaries = solve_levels(args, settings)
    if args.json:
        print(json.dumps(summaries if len(summaries) > 1 else summaries[0], indent=2))
        return 0
    for s in summaries:
        print_summary(s)
    return 0


def run_plot(args) -> int:
    """``--plot SVG``: draw the ``--summaries`` (and the ``--agents-csv`` win rates)."""
    from .common import check_overwrite, is_svg_chart, read_json

    check_overwrite(args.plot, "--plot", is_svg_chart, "a chart castle-envs solve drew")
    summaries = []
    for path in args.summaries:
        data = read_json(path, "--summaries")
        for s in data if isinstance(data, list) else [data]:
            if (
                not isinstance(s, dict)
                or s.get("game") != "castellion"
                or s.get("level") not in LEVELS
            ):
                raise ValueError(
                    f"--summaries {path!r}: not a summary written by "
                    "castle-envs solve --game castellion --json"
                )
            summaries.append(s)
    if not summaries:
        raise ValueError("--plot needs --summaries FILE ...")
    with open(args.plot, "w") as f:
        f.write(plot_svg(summaries, read_agent_csv(args.agents_csv)))
    return 0


def study_settings(args) -> dict:
    """The study's settings, every one checked before any file is opened or any deal
    solved: the budget, the rules, the loss search's budget and the probe policy."""
    from castle_envs.agents.solvers.castellion import LOSS_NODES
    from castle_envs.agents.solvers.castellion_portfolio import DEFAULT_NODES

    from .common import parse_budget

    if args.deals < 1:
        raise ValueError(f"--deals must be >= 1, got {args.deals}")
    if args.random_games < 0:
        raise ValueError(f"--random-games must be >= 0, got {args.random_games}")
    probe = args.probe_policy or "portfolio"
    if probe not in PROBES:
        raise ValueError(f"--probe-policy {probe!r}: Castellion takes {', '.join(PROBES)}")
    budget = args.budget or (str(DEFAULT_NODES) if probe == "portfolio" else "20000")
    nodes, seconds = parse_budget(budget)
    if args.resume and not args.out:
        raise ValueError("--resume needs --out FILE (the deals solved so far)")
    for flag in ("retry_unknown", "assume_settings"):
        if getattr(args, flag, False) and not args.resume:
            raise ValueError(f"--{flag.replace('_', '-')} needs --resume --out FILE")
    loss_budget = getattr(args, "loss_budget", None)
    if loss_budget is not None and loss_budget < 0:
        raise ValueError(f"--loss-budget must be >= 0, got {loss_budget}")
    if loss_budget is None and probe != "portfolio":
        loss_budget = LOSS_NODES
    if args.out:
        from .solve_results import check_out_file

        check_out_file(args.out, args.resume)
    return {
        "nodes": nodes,
        "seconds": seconds,
        "budget": budget,
        "rules": rules_of(args, RULE_CHOICES),
        "loss_budget": loss_budget,
        "probe": probe,
    }


def solve_levels(args, settings: dict) -> list[dict]:
    """Solve ``--deals`` deals of each level (keeping those of ``--out`` with ``--resume``,
    appending the new ones there): each level's summary."""
    from castle_envs.agents.solvers.castellion import Solver
    from castle_envs.agents.solvers.castellion_portfolio import Portfolio

    nodes, seconds, rules = settings["nodes"], settings["seconds"], settings["rules"]
    loss_budget, probe = settings["loss_budget"], settings["probe"]
    levels = LEVELS if args.level == "all" else (args.level,)
    done = {}
    if args.resume and args.out and os.path.exists(args.out):
        done = read_done(args, settings, levels)
    # the portfolio keeps its own loss budget unless --loss-budget names one
    kind: type[Portfolio] | type[Solver] = Portfolio if probe == "portfolio" else Solver
    solver = kind(max_nodes=nodes, max_seconds=seconds, loss_nodes=loss_budget)
    out = None
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        out = open(args.out, "a" if args.resume else "w")  # noqa: SIM115 (held for the run)
    summaries = []
    start = time.perf_counter()
    try:
        for level in levels:
            keep = level_settings(settings, level)
            records = solve_level_deals(args, solver, level, (rules, probe, keep), done, out, start)
            curve = nodes if seconds is None and probe != "portfolio" else None
            summary = summarize(records, level, settings["budget"], curve)
            summary["rules"] = rules
            summary["loss_budget"] = loss_budget
            summary["probe_policy"] = probe
            summaries.append(summary)
    finally:
        if out:
            out.close()
    return summaries


def solve_level_deals(args, solver, level, how: tuple, done, out, start) -> list[dict]:
    """One level's deals: each from ``done`` or solved now (``how``: the rules, the probe
    policy and the settings each new record carries; appended to ``out``), with a progress
    line every tenth of the deals."""
    from .journal import append

    rules, probe, settings = how
    records = []
    for i in range(args.deals):
        seed = args.seed + i
        record = done.get((level, seed))
        if record is None:
            record = solve_deal(solver, seed, level, rules, args.random_games, probe)
            record["settings"] = settings
            if out:
                append(out, record)
        records.append(record)
        if not args.json and (i + 1) % max(1, args.deals // 10) == 0:
            print(
                f"  {level}: {i + 1}/{args.deals} deals, {time.perf_counter() - start:.0f}s",
                file=sys.stderr,
            )
    return records


def print_summary(s: dict) -> None:
    """One level's summary, as text."""
    lo, hi = s["winnable_interval_95"]
    print(
        f"Castellion {s['level']}, {s['deals']} deals (seeds {s['seeds'][0]}.."
        f"{s['seeds'][1]}), budget {s['budget']}/deal"
    )
    print(f"  winnable {s['winnable']}, unwinnable {s['unwinnable']}, unknown {s['unknown']}")
    print(
        f"  winnable share 95% interval [{lo:.3f}, {hi:.3f}] (lower: proven wins only; "
        "upper: unknowns counted as wins)"
    )
    stuck = s["not_proven_winnable_stuck_at_ordeal"]
    print(
        f"  deals not proven winnable: the beams got no further than ordeal I on "
        f"{stuck['I']}, II on {stuck['II']}, III on {stuck['III']}"
    )
    if s.get("seconds_per_deal") is not None:
        print(f"  {s['seconds_per_deal']:.2f}s a deal (the longest {s['seconds_max']:.1f}s)")
        print(f"  decided by: {', '.join(f'{k} {v}' for k, v in s['found_by'].items())}")
    if s["nodes_per_second"]:
        print(
            f"  {s['nodes_total']:,} nodes in {s['solver_seconds_total']:.1f}s: "
            f"{s['nodes_per_second']:,.0f} nodes/s"
        )
    for row in s.get("budget_curve", []):
        a, b = row["winnable_interval_95"]
        print(
            f"  budget {row['budget_nodes']:>10,} nodes: winnable {row['winnable']}, "
            f"unwinnable {row['unwinnable']}, unknown {row['unknown']} [{a:.3f}, {b:.3f}]"
        )
    if s["random"]["games"]:
        print(f"  random play: {s['random']['wins']}/{s['random']['games']} wins")


LEVEL_COLOURS = {"school": "#3182bd", "academy": "#31a354", "menace": "#d6616b"}
AGENT_COLOURS = {"random": "#e6550d", "heuristic": "#756bb1", "planner": "#000000"}


def read_agent_csv(paths: list[str]) -> dict:
    """``castle-envs evaluate --game castellion`` CSVs -> {level: {agent: (rate, lo, hi, n)}}."""
    return read_evaluate_csv(paths, "level", "castle-envs evaluate --game castellion")


def plot_svg(summaries: list[dict], agents: dict | None = None) -> str:
    """Two panels, dependency-free SVG. Left: per level, the winnable share's 95% interval
    (proven wins only .. wins + unknowns) as a bar, the proven share as a dark line, and the
    agents' win rates with intervals (an agent with no episodes at a level is not drawn).
    Right: the proven winnable share against the node budget (the budget curve), one line per
    level, labelled at its end. Every text lies inside the picture (``viewBox``): the curves
    stop short of the right edge by their labels' width (``common.svg_text_width``)."""
    from .common import svg_legend, svg_legend_width, svg_open, svg_rate_grid, svg_text_width

    agents = agents or {}
    rows = [s for lv in LEVELS for s in summaries if s["level"] == lv]
    title = "Castellion: deals proven winnable and agents' win rates, per level"
    note = "bar: 95% interval from proven wins only to wins + unknowns; dark line: proven share"
    drawn = {lv: {n: v for n, v in sorted(agents.get(lv, {}).items()) if v[3] > 0} for lv in LEVELS}
    names = sorted({n for lv in drawn.values() for n in lv})
    curves = [s for s in rows if s.get("budget_curve")]
    label_w = max([svg_text_width(s["level"]) for s in curves] + [0.0])
    w = max(
        760.0,
        svg_text_width(title, 13) + 20,
        50 + svg_text_width(note) + 20,
        50 + svg_legend_width(names) + 20,
    )
    h, top, plot_h = 346, 66, 200
    y = lambda v: top + plot_h * (1 - v)  # noqa: E731
    out = svg_open(w, h, title, 18)
    left, right = 50, 380
    out += panel_titles(((left, right - 20), (right + 50, w - 20)), 38)
    for x0, x1 in ((left, right - 20), (right + 50, w - 20)):
        out += svg_rate_grid(x0, x1, y)
    out += level_bars(rows, drawn, left, right, top, plot_h, y)
    out += budget_curves(curves, right + 60, w - 14 - label_w - 6, top, plot_h, y)
    out.append(f'<text x="{left}" y="{h - 24}" fill="#555">{note}</text>')
    out += svg_legend(names, AGENT_COLOURS, left, h - 5)
    out.append("</svg>")
    return "\n".join(out) + "\n"


#: what each panel of ``plot_svg`` measures, two lines each: the left one every proof the
#: study found (solver, planner, pimc's games, nested search), the right one the solver's
#: own run alone, which is why its curves end far lower
PANEL_TITLES = (
    ("Proven winnable, every source of proof", "(bars), and agents' win rates (dots)"),
    ("The solver's run alone (with its planner", "probe): proven winnable by node budget"),
)


def panel_titles(spans, y: float) -> list[str]:
    """``PANEL_TITLES`` centred over each panel's ``(x0, x1)`` span, from baseline ``y``."""
    out = []
    for side, (x0, x1), lines in zip(("left", "right"), spans, PANEL_TITLES):
        for k, line in enumerate(lines):
            out.append(
                f'<text x="{(x0 + x1) / 2:.1f}" y="{y + 14 * k}" text-anchor="middle" '
                f'fill="#333" data-panel="{side}">{line}</text>'
            )
    return out


def level_bars(rows, drawn, left, right, top, plot_h, y) -> list[str]:
    """The left panel's marks: per level, the winnable share's interval as a bar, the
    proven share as a dark line, the agents' win rates with intervals, the level's name."""
    out: list[str] = []
    gap = (right - 20 - left) / max(1, len(rows))
    for i, s in enumerate(rows):
        x = left + gap * (i + 0.5)
        lo, hi = s["winnable_interval_95"]
        won = s["winnable_fraction"]
        colour = LEVEL_COLOURS[s["level"]]
        out.append(
            f'<rect x="{x - 16:.1f}" y="{y(hi):.1f}" width="32" '
            f'height="{max(1.0, y(lo) - y(hi)):.1f}" fill="{colour}" fill-opacity="0.3" '
            f'stroke="{colour}"/>'
        )
        out.append(
            f'<line x1="{x - 16:.1f}" x2="{x + 16:.1f}" y1="{y(won):.1f}" '
            f'y2="{y(won):.1f}" stroke="#08306b" stroke-width="2.5"/>'
        )
        out.append(
            f'<text x="{x - 20:.1f}" y="{y(won) + 4:.1f}" text-anchor="end" '
            f'fill="#08306b">{won:.1%}</text>'
        )
        for k, (name, (rate, low, high, _)) in enumerate(drawn.get(s["level"], {}).items()):
            cx, c = x + 24 + 9 * k, AGENT_COLOURS.get(name, "#636363")
            out.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(high):.1f}" '
                f'y2="{y(low):.1f}" stroke="{c}" data-series="{name}"/>'
            )
            out.append(
                f'<circle cx="{cx:.1f}" cy="{y(rate):.1f}" r="3.5" fill="{c}" '
                f'data-series="{name}"/>'
            )
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{s["level"]}</text>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 30}" text-anchor="middle" '
            f'fill="#555">n={s["deals"]}</text>'
        )
    return out


def budget_curves(curves, x0, x1, top, plot_h, y) -> list[str]:
    """The right panel's marks: the proven winnable share against the node budget, one
    line per level from ``x0`` to ``x1``, labelled at its end, the labels moved apart."""
    # the budget curves, ending a label's width (and a gap) short of the right edge
    out: list[str] = []
    budgets = sorted({r["budget_nodes"] for s in curves for r in s["budget_curve"]})
    if budgets:
        import math

        lo_b, hi_b = math.log10(budgets[0]), math.log10(budgets[-1])
        bx = lambda b: x0 + (x1 - x0) * ((math.log10(b) - lo_b) / max(hi_b - lo_b, 1e-9))  # noqa: E731
        for b in budgets:
            out.append(
                f'<text x="{bx(b):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                f"{b / 1000:g}k</text>"
            )
        out.append(
            f'<text x="{(x0 + x1) / 2:.1f}" y="{top + plot_h + 30}" '
            'text-anchor="middle" fill="#555">node budget per deal (proven winnable '
            "share)</text>"
        )
        ends = []
        for s in curves:
            colour = LEVEL_COLOURS[s["level"]]
            pts = [
                (bx(r["budget_nodes"]), y(r["winnable"] / s["deals"])) for r in s["budget_curve"]
            ]
            out.append(
                '<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
                    colour, " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
                )
            )
            for a, b in pts:
                out.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{colour}"/>')
            ends.append([pts[-1][1] + 4, pts[-1][0], s["level"], colour])
        # the end labels, right of each curve's last point, moved apart to be readable
        ends.sort()
        for k in range(1, len(ends)):
            ends[k][0] = max(ends[k][0], ends[k - 1][0] + 12)
        for k in range(len(ends) - 1, -1, -1):
            ends[k][0] = min(ends[k][0], top + plot_h + 4 - 12 * (len(ends) - 1 - k))
        for by, a, level, colour in ends:
            out.append(f'<text x="{a + 6:.1f}" y="{by:.1f}" fill="{colour}">{level}</text>')
    return out
