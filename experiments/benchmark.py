"""``castle-envs benchmark``: an agent on a standard deal set, against the shipped agents
and the ceiling, in one command.

    castle-envs benchmark --game castle-siege --difficulty very_hard --agent heuristic --quick
    castle-envs benchmark --game castellion --level academy --agent model:runs/mine
    castle-envs benchmark --game castle-rooms --players 2 --agent model:runs/mine --quick
    castle-envs benchmark --check          # every stored winning line replayed
    castle-envs benchmark --list           # the sets

**The solitaires** (Castle Siege, Castellion) play the agent on a labelled deal set
(``castle_envs.experiments.deals``; ``--split heldout``, the default, is the deals
1,000,000 and up the shipped agents were measured on, ``study`` the deals from 0 the
winnability studies solved): the whole set (the full protocol: 2,000 Castle Siege deals or
1,000 Castellion deals), or with ``--quick`` its first 200 (``--deals N``: its first N). As
``castle-envs evaluate`` does, deal ``D`` is ``reset(seed=D)`` and the agent is reset with
``[agent_seed, D, 0]``. The report:

- the win rate with its 95% Wilson interval;
- the ceiling on the same deals: how many are proven won (a winning line replays) and
  proven lost, the interval on the winnable share, and the agent's wins over the proven
  won (its share of the ceiling);
- against each reference agent (random, heuristic, the linear scorer or the planner, the
  best network, at Castle Siege the n-tuple value, ``best``), from the per-deal results
  stored with the set and not played again: the paired difference on the same deals with Newcombe's interval, and the deals
  each won where the other lost;
- a control-variate estimate of the agent's win rate over all deals: the results of the
  references and the verdicts are known on every deal of the set, so the deals played are
  a random part of a set whose other quantities are known, and the double-sampling
  regression estimator (``stats.regression_estimate``) narrows the interval by as much as
  those quantities predict the agent's result (nothing on the full set, where every deal
  is played).

``--reference NAME`` writes the same report for a reference agent from its stored results
(no game is played): the shipped agents' leaderboard entries.

**The multi-player games** (Castle Rooms, Castell; ``--players``, default 2): the agent
against each reference opponent, one agent in one seat and the opponent in every other,
every deal played once with the agent in each seat (DouZero's WP: its win rate with seats
rotated on common deals, 200 deals with ``--quick``, 1,000 without); then a
``castle-envs tournament`` among the agent and the references (seats rotated) for
Bradley–Terry ratings with 95% bootstrap intervals.

Written to ``--out`` (default ``results/``): ``<name>.json`` (what the leaderboard page
collects), ``<name>.csv`` (the table) and ``<name>.png`` (the agent against the references
and the ceiling; with matplotlib). The solitaires' games go to ``<name>-episodes.jsonl`` as
they finish: ``--resume`` continues a stopped run.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import time
from typing import Any

import numpy as np

from castle_envs.registry import get_game

from .common import check_outputs, positive_int, writable_dir
from .stats import paired_proportion_difference, regression_estimate, wilson_interval

log = logging.getLogger(__name__)

QUICK_DEALS = 200
#: the control-variate estimate uses its controls only with at least this many wins and
#: this many losses among the deals played (below it, fitted slopes add variance: measured)
MIN_OUTCOMES = 10
#: multi-player: deals of the full and quick protocols (each played once per seat)
FULL_GAMES, QUICK_GAMES = 1000, 200
#: the first deal of the multi-player protocol (held-out seeds, as the solitaires')
MULTI_SEED = 1_000_000
#: the reference opponents of the multi-player games, by player count
MULTI_REFERENCES = {
    "castle-rooms": {
        2: ["random", "heuristic", "model:{models}/castle_rooms_2p_move_ppo"],
        3: ["random", "heuristic"],
        4: ["random", "heuristic"],
    },
    "castell": {2: ["random", "heuristic"], 3: ["random", "heuristic"], 4: ["random", "heuristic"]},
}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "benchmark", help="an agent on a standard deal set against the shipped agents"
    )
    p.add_argument("--game", help="castle-siege, castellion, castle-rooms or castell")
    p.add_argument("--difficulty", help="Castle Siege: easy, medium, hard, very_hard")
    p.add_argument("--level", help="Castellion: school, academy, menace")
    p.add_argument("--players", type=int, help="Castle Rooms / Castell: 2, 3 or 4 (default 2)")
    p.add_argument("--agent", help="the agent spec (any --agent of castle-envs evaluate)")
    p.add_argument("--reference", help="a stored reference agent of the set (best, heuristic, ...)")
    p.add_argument(
        "--split",
        choices=("heldout", "study"),
        default=None,
        help="the deal set: heldout (deals from 1,000,000; default) or study (from 0); "
        "--check: every split unless given",
    )
    p.add_argument("--quick", action="store_true", help="the quick protocol: the first 200 deals")
    p.add_argument("--deals", type=positive_int, help="the set's first N deals")
    p.add_argument("--check", action="store_true", help="replay every stored winning line")
    p.add_argument("--sample", type=positive_int, help="--check: N lines a set, spread over it")
    p.add_argument("--list", action="store_true", help="the deal sets and their references")
    p.add_argument("--agent-seed", type=int, default=0)
    p.add_argument("--workers", type=positive_int, default=None)
    p.add_argument("--out", default="results", help="results folder (default results/)")
    p.add_argument("--name", default=None, help="file name stem (default from the run)")
    p.add_argument("--resume", action="store_true", help="continue a stopped run")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.list:
        return run_list()
    if args.check:
        return run_check(args)
    if not args.game:
        raise ValueError("give --game (or --check, --list)")
    spec = get_game(args.game)
    if (args.agent is None) == (args.reference is None):
        raise ValueError("give one of --agent SPEC or --reference NAME")
    if not spec.solitaire:
        if args.reference:
            raise ValueError("--reference is for the solitaires' stored results")
        return run_multiplayer(args, spec)
    return run_solitaire(args, spec)


# --- sets: list and check ---------------------------------------------------------------------
def chosen_sets(args) -> list[dict]:
    from .deals import available

    sets = available()
    if args.game:
        slug = get_game(args.game).slug
        sets = [s for s in sets if s["game"] == slug]
    variant = args.difficulty or args.level
    if variant:
        sets = [s for s in sets if s["variant"] == variant]
    if args.split:
        sets = [s for s in sets if s["split"] == args.split]
    if not sets:
        raise ValueError("no deal set matches --game/--difficulty/--level/--split")
    return sets


def run_list() -> int:
    from .deals import available

    print(f"{'set':<32} {'deals':>17} {'won':>5} {'lost':>5} {'unknown':>7}  references")
    for s in available():
        c = s["counts"]
        refs = ", ".join(f"{r['name']} {r['wins']}/{r['deals']}" for r in s["references"])
        seeds = f"{s['seeds'][0]}-{s['seeds'][1]}"
        print(f"{s['name']:<32} {seeds:>17} {c['won']:>5} {c['lost']:>5} {c['unknown']:>7}  {refs}")
    return 0


def run_check(args) -> int:
    """Every (or ``--sample`` of every) stored line replayed; exit 1 on any failure."""
    from .deals import check_set, load_deals

    failed = 0
    for entry in chosen_sets(args):
        start = time.perf_counter()
        deals = load_deals(entry["game"], entry["variant"], entry["split"])
        problems = check_set(deals, args.sample)
        won = deals.counts()["won"]
        checked = won if args.sample is None else min(won, args.sample)
        status = "ok" if not problems else f"{len(problems)} PROBLEMS"
        print(
            f"{deals.name:<32} {checked:>5} lines replayed to a win: {status} "
            f"({time.perf_counter() - start:.1f} s)"
        )
        for p in problems:
            print(f"  {p}")
        failed += len(problems)
    return 1 if failed else 0


# --- the solitaires ---------------------------------------------------------------------------
def run_solitaire(args, spec) -> int:
    from .deals import load_deals
    from .evaluate import parse_agents

    if args.players is not None:
        raise ValueError(f"--players does not apply to {spec.slug}")
    variant = (args.difficulty if spec.variant_arg == "difficulty" else args.level) or (
        spec.variants[0]
    )
    wrong = args.level if spec.variant_arg == "difficulty" else args.difficulty
    if wrong is not None:
        flag = "--level" if spec.variant_arg == "difficulty" else "--difficulty"
        raise ValueError(f"{flag} does not apply to {spec.slug}")
    deals = load_deals(spec.slug, variant, args.split or "heldout")
    count = protocol_count(deals, args.quick, args.deals)
    protocol = protocol_name(deals, count, args.quick)
    if args.reference:
        agent = deals.reference(args.reference).spec
        wins = deals.results(args.reference, count)
        if wins is None:
            raise ValueError(
                f"{args.reference} was not played on every one of {deals.name}'s first "
                f"{count} deals"
            )
        seconds = None
        name = args.name or default_name({"agent": agent, "set": deals.name, "protocol": protocol})
        check_outputs(args.out, name, OUTPUT_ENDINGS, "--name")
    else:
        writable_dir(args.out, "--out")
        agent = parse_agents([args.agent], "random", spec.slug)[0]
        if "," in args.agent and len(parse_agents([args.agent], "random", spec.slug)) > 1:
            raise ValueError("benchmark takes one agent")
        name = args.name or default_name({"agent": agent, "set": deals.name, "protocol": protocol})
        check_outputs(args.out, name, OUTPUT_ENDINGS, "--name")  # now, not after the games
        start = time.perf_counter()
        wins = play_deals(deals, agent, count, args)
        seconds = time.perf_counter() - start
    report = solitaire_report(deals, agent, wins, reference=args.reference)
    report["protocol"] = protocol
    report["seconds"] = seconds
    from .provenance import provenance

    report["provenance"] = provenance([] if args.reference else [agent], spec.slug)
    print_solitaire(report)
    write_outputs(report, args.out, name, not args.no_plot)
    return 0


def protocol_count(deals, quick: bool, count: int | None) -> int:
    if quick and count is not None:
        raise ValueError("give --quick or --deals, not both")
    n = QUICK_DEALS if quick else (count or len(deals.rows))
    if n > len(deals.rows):
        raise ValueError(f"{deals.name} has {len(deals.rows)} deals, not {n}")
    return n


def protocol_name(deals, count: int, quick: bool) -> str:
    if count == len(deals.rows):
        return "full"
    return "quick" if quick else f"first {count}"


def default_name(report: dict) -> str:
    agent = report["agent"].replace("/", "_").replace(":", "-").replace(",", "_")
    return f"benchmark-{report['set']}-{report['protocol'].replace(' ', '')}-{agent}"[:150]


def play_deals(deals, agent: str, count: int, args) -> np.ndarray:
    """The agent's 0/1 result on the set's first ``count`` deals, played by ``evaluate``
    (its episode log makes the run resumable)."""
    from .evaluate import evaluate
    from .parallel import Terminated

    name = args.name or f"benchmark-{deals.name}-{count}"
    log_path = os.path.join(args.out, f"{name}-episodes.jsonl")
    try:
        result = evaluate(
            deals.game,
            [deals.variant],
            [agent],
            count,
            deals.seeds.start,
            workers=args.workers,
            progress=not args.no_progress,
            agent_seed=args.agent_seed,
            log_path=log_path,
            resume=args.resume,
        )
    except Terminated as stop:
        stop.saved = (
            f"the episodes played are in {log_path} (the same command with --resume goes on)"
        )
        raise
    return np.array([int(d["returns"][agent] > 0) for d in result["deals"]], dtype=np.int8)


def solitaire_report(deals, agent: str, wins, reference: str | None = None) -> dict:
    """The standard report of ``agent``'s 0/1 ``wins`` on the set's first ``len(wins)``
    deals: win rate, ceiling, paired differences with the references, control-variate
    estimate. ``reference``: the set's reference these results are (left out of the
    comparisons and of the controls)."""
    wins = np.asarray(wins, dtype=np.int8)
    n = len(wins)
    rows = deals.rows[:n]
    verdicts = np.array([r.verdict for r in rows])
    won, lost = int((verdicts == "won").sum()), int((verdicts == "lost").sum())
    low, high = wilson_interval(int(wins.sum()), n)
    ceiling_low, _ = wilson_interval(won, n)
    _, ceiling_high = wilson_interval(n - lost, n)
    on_proven = int(wins[verdicts == "won"].sum())
    return {
        "set": deals.name,
        "game": deals.game,
        deals.variant_arg: deals.variant,
        "split": deals.split,
        "agent": agent,
        "reference": reference,
        "deals": [int(rows[0].seed), int(rows[-1].seed)],
        "episodes": n,
        "wins": int(wins.sum()),
        "win_rate": float(wins.mean()),
        "win_low": low,
        "win_high": high,
        "ceiling": {
            "proven_won": won,
            "proven_lost": lost,
            "unknown": n - won - lost,
            "winnable_low": ceiling_low,
            "winnable_high": ceiling_high,
            "wins_on_proven": on_proven,
            "share_of_proven": on_proven / won if won else None,
            "wins_not_proven": int(wins.sum()) - on_proven,
        },
        "paired": paired_with_references(deals, wins, exclude=reference),
        "estimate": control_variate_estimate(deals, wins, exclude=reference),
    }


def paired_with_references(deals, wins, exclude: str | None = None) -> list[dict]:
    """The agent minus each reference played on every one of these deals (Newcombe)."""
    out = []
    for ref in deals.references:
        theirs = deals.results(ref.name, len(wins))
        if theirs is None or ref.name == exclude:
            continue
        diff = paired_proportion_difference(wins, theirs)
        out.append(
            {
                "reference": ref.name,
                "spec": ref.spec,
                "wins": int(theirs.sum()),
                "win_rate": float(theirs.mean()),
                "win_diff": diff,
            }
        )
    return out


def control_columns(deals, exclude: str | None = None) -> tuple[list[str], np.ndarray]:
    """The controls known on every deal of the set, those that vary: ``proven`` (the deal is
    proven won) and each reference played on the whole set. A control must be measured alike
    on every deal, so ``proven`` counts the searches' proofs (run on every deal) and the won
    games of the references played on every deal, not a game of a reference played on some
    deals only. With ``exclude`` (a reference standing for the agent) its column and its own
    proofs are left out, so that no control carries its results."""
    results = {r.name: deals.results(r.name) for r in deals.references if r.name != exclude}
    results = {k: v for k, v in results.items() if v is not None}
    proven = np.array(
        [r.verdict == "won" and not r.found_by.startswith("agent:") for r in deals.rows]
    )
    for column in results.values():
        proven |= column.astype(bool)
    names, columns = [], []
    for name, column in [("proven", proven), *results.items()]:
        if 0 < column.sum() < len(column):
            names.append(name)
            columns.append(column.astype(float))
    x = np.column_stack(columns) if columns else np.zeros((len(deals.rows), 0))
    return names, x


def control_variate_estimate(deals, wins, exclude: str | None = None) -> dict:
    """The double-sampling regression estimate of the win rate over all deals, with the
    controls of ``control_columns`` (``exclude``: the reference these results are)."""
    n = len(wins)
    names, x_full = control_columns(deals, exclude)
    if min(wins.sum(), n - wins.sum()) < MIN_OUTCOMES:
        # too few wins (or losses) to fit the slopes: they would chase noise
        names, x_full = [], x_full[:, :0]
    est = regression_estimate(wins, x_full[:n], x_full.mean(axis=0), len(deals.rows))
    est["controls"] = [names[j] for j in est.pop("kept")]
    if not est["controls"] or wins.sum() in (0, n):
        est["value"], est["variance_ratio"] = float(wins.mean()), 1.0
    est["variance_cut"] = 1 - est["variance_ratio"]
    # the interval: Wilson's, around the estimate, with the sample size the variance is worth
    # (n / variance ratio): the plain Wilson interval when the controls cut nothing
    effective = n / est["variance_ratio"]
    est["effective_deals"] = effective
    share = min(1.0, max(0.0, est["value"]))
    est["low"], est["high"] = wilson_interval(share * effective, effective)
    return est


def print_solitaire(r: dict) -> None:
    c, e = r["ceiling"], r["estimate"]
    print(
        f"{r['set']}, deals {r['deals'][0]}-{r['deals'][1]} ({r['protocol']}, "
        f"{r['episodes']} deals): {r['agent']}"
    )
    print(
        f"  win rate        {r['win_rate']:7.2%} [{r['win_low']:.2%}, {r['win_high']:.2%}]"
        f"  ({r['wins']} of {r['episodes']})"
    )
    share = "-" if c["share_of_proven"] is None else f"{c['share_of_proven']:.3f}"
    print(
        f"  ceiling         {c['proven_won']} proven won, {c['proven_lost']} lost, "
        f"{c['unknown']} unknown: winnable [{c['winnable_low']:.1%}, {c['winnable_high']:.1%}];"
        f" share of the proven won {share}"
    )
    if c["wins_not_proven"]:
        k = c["wins_not_proven"]
        print(f"  ({k} won deal{'s' * (k != 1)} not proven before: new proofs of winnability)")
    print(
        f"  estimate        {e['value']:7.2%} [{e['low']:.2%}, {e['high']:.2%}] over all "
        f"{e['population']} deals, controls {', '.join(e['controls']) or 'none'}: "
        f"variance cut {e['variance_cut']:.0%} against the plain mean's"
    )
    print(f"  {'against':<12} {'its wins':>9} {'difference (paired)':>21} {'95% interval':>18}")
    for p in r["paired"]:
        d = p["win_diff"]
        print(
            f"  {p['reference']:<12} {p['win_rate']:9.2%} {100 * d['mean']:+21.2f} "
            f"[{100 * d['low']:+.2f}, {100 * d['high']:+.2f}]  better on {d['a_better']}, "
            f"worse on {d['b_better']}"
        )


#: the files ``write_outputs`` writes for a run named NAME
OUTPUT_ENDINGS = (".json", ".csv", ".png")


def write_outputs(report: dict, out: str, name: str, plot: bool) -> None:
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, name)
    with open(stem + ".json", "w") as f:
        json.dump(report, f, indent=2)
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        for row in table_rows(report):
            w.writerow(row)
    paths = [stem + ".json", stem + ".csv"]
    if plot:
        png = (plot_solitaire if "ceiling" in report else plot_multiplayer)(report, stem + ".png")
        if png:
            paths.append(png)
    print("wrote " + ", ".join(paths))


def table_rows(report: dict) -> list[list]:
    """The report as a table: one row for the agent, one per reference (or opponent)."""
    if "ceiling" not in report:
        head = ["agent", "opponent", "games", "wins", "win_rate", "win_low", "win_high"]
        rows = [head]
        for m in report["matches"]:
            rows.append(
                [report["agent"], m["opponent"], m["games"], m["wins"]]
                + [m["win_rate"], m["win_low"], m["win_high"]]
            )
        return rows
    head = ["name", "role", "episodes", "wins", "win_rate", "win_low", "win_high"]
    rows = [head + ["agent_minus_this", "agent_minus_this_low", "agent_minus_this_high"]]
    rows.append(
        [report["agent"], "agent", report["episodes"], report["wins"], report["win_rate"]]
        + [report["win_low"], report["win_high"], "", "", ""]
    )
    for p in report["paired"]:
        d = p["win_diff"]
        low, high = wilson_interval(p["wins"], report["episodes"])
        rows.append(
            [p["reference"], "reference", report["episodes"], p["wins"], p["win_rate"], low]
            + [high, d["mean"], d["low"], d["high"]]
        )
    return rows


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("(no plot: matplotlib is not installed; pip install 'castle-envs[notebooks]')")
        return None
    return plt


def plot_solitaire(report: dict, path: str) -> str | None:
    """The agent and the references (win rate, 95% interval) beside the ceiling's band."""
    plt = _pyplot()
    if plt is None:
        return None
    names = [report["agent"]] + [p["reference"] for p in report["paired"]]
    rates = [report["win_rate"]] + [p["win_rate"] for p in report["paired"]]
    n = report["episodes"]
    wins = [report["wins"]] + [p["wins"] for p in report["paired"]]
    bounds = [wilson_interval(w, n) for w in wins]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(names)))
    c = report["ceiling"]
    ax.axvspan(100 * c["winnable_low"], 100 * c["winnable_high"], color="0.85", label="winnable")
    y = np.arange(len(names))[::-1]
    err = np.array(
        [[r - b[0] for r, b in zip(rates, bounds)], [b[1] - r for r, b in zip(rates, bounds)]]
    )
    for i in range(len(names)):
        ax.errorbar(
            100 * rates[i],
            y[i],
            xerr=100 * err[:, i : i + 1],
            fmt="o",
            color="C3" if i == 0 else "C0",
            capsize=3,
        )
    ax.set_yticks(y, [s if len(s) <= 40 else s[:37] + "..." for s in names], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("deals won, % (95% interval); grey: the winnable share")
    ax.set_title(f"{report['set']}, {n} deals ({report['protocol']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# --- the multi-player games -------------------------------------------------------------------
def run_multiplayer(args, spec) -> int:
    from .evaluate import parse_agents
    from .parallel import Terminated
    from .tournament import tournament

    for flag, value in (("--difficulty", args.difficulty), ("--level", args.level)):
        if value is not None:
            raise ValueError(f"{flag} does not apply to {spec.slug}")
    if args.split is not None:
        raise ValueError("--split is for the solitaires' deal sets")
    players = args.players or 2
    if players not in spec.variants:
        raise ValueError(f"{spec.slug} takes {list(spec.variants)} players, not {players}")
    writable_dir(args.out, "--out")
    agents = parse_agents([args.agent], "random", spec.slug)
    if len(agents) != 1:
        raise ValueError("benchmark takes one agent")
    agent = agents[0]
    games = QUICK_GAMES if args.quick else (args.deals or FULL_GAMES)
    if args.quick and args.deals:
        raise ValueError("give --quick or --deals, not both")
    refs = multiplayer_references(spec.slug, players)
    protocol = "quick" if args.quick else ("full" if games == FULL_GAMES else "custom")
    name = (
        args.name
        or (
            f"benchmark-{spec.slug}-{players}p-{protocol}-"
            + agent.replace("/", "_").replace(":", "-").replace(",", "_")
        )[:150]
    )
    check_outputs(args.out, name, OUTPUT_ENDINGS, "--name")  # now, not after the games
    options = {"workers": args.workers, "agent_seed": args.agent_seed}
    start = time.perf_counter()
    others = [agent] + [r for r in refs if r != agent]
    try:
        report = multiplayer_report(spec.slug, players, agent, refs, games, MULTI_SEED, **options)
        report["ratings"] = tournament(
            spec.slug, players, others, games, MULTI_SEED, progress=not args.no_progress, **options
        )["results"]
    except Terminated as stop:
        stop.saved = "nothing was saved (a multi-player benchmark writes its files at the end)"
        raise
    report["protocol"] = protocol
    report["seconds"] = time.perf_counter() - start
    from .provenance import provenance

    report["provenance"] = provenance(others, spec.slug)
    print_multiplayer(report)
    write_outputs(report, args.out, name, not args.no_plot)
    return 0


def multiplayer_references(game: str, players: int) -> list[str]:
    from castle_envs.agents.registry import first_runnable

    return [first_runnable([(r, None)]) for r in MULTI_REFERENCES[game][players]]


def seat_rotated_returns(
    game: str, players: int, agent: str, opponent: str, games: int, seed: int, **options
) -> np.ndarray:
    """The agent's return in every seat of every deal (``games`` x ``players``: deal
    ``seed + i`` with the agent in seat ``s`` and ``opponent`` in every other)."""
    from .episodes import play_chunk
    from .parallel import run_chunks, split

    seatings = tuple(
        tuple(agent if s == k else opponent for s in range(players)) for k in range(players)
    )
    out = np.zeros((games, players))
    variant = (("num_players", players),)
    for shift in range(players):
        # deal i is played with seating (i + shift) mod players: over the shifts, every seat
        plan = seatings[shift:] + seatings[:shift]
        chunks = [
            (game, variant, (), plan, seed, idx, 0, options.get("agent_seed", 0))
            for idx in split(games, options.get("workers") or 8)
        ]
        for chunk in run_chunks(play_chunk, chunks, options.get("workers")):
            for r in chunk:
                seat = (r["index"] + shift) % players
                out[r["index"], seat] = r["returns"][seat]
    return out


def multiplayer_report(
    game: str, players: int, agent: str, refs: list[str], games: int, seed: int, **options
) -> dict:
    """The agent's win rate (return > 0) against each reference opponent, seats rotated on
    common deals."""
    matches = []
    for ref in refs:
        if ref == agent:
            continue
        returns = seat_rotated_returns(game, players, agent, ref, games, seed, **options)
        wins = int((returns > 0).sum())
        low, high = wilson_interval(wins, returns.size)
        matches.append(
            {
                "opponent": ref,
                "games": int(returns.size),
                "wins": wins,
                "win_rate": wins / returns.size,
                "win_low": low,
                "win_high": high,
                "by_seat": [float((returns[:, s] > 0).mean()) for s in range(players)],
                "mean_return": float(returns.mean()),
            }
        )
    return {
        "game": game,
        "players": players,
        "agent": agent,
        "deals": [seed, seed + games - 1],
        "episodes": games,
        "matches": matches,
    }


def print_multiplayer(r: dict) -> None:
    print(
        f"{r['game']}, {r['players']} players, deals {r['deals'][0]}-{r['deals'][1]} "
        f"({r['protocol']}), each played with {r['agent']} in every seat"
    )
    print(f"  {'against':<40} {'games':>6} {'win rate':>9} {'95% interval':>17}  by seat")
    for m in r["matches"]:
        seats = " ".join(f"{x:.0%}" for x in m["by_seat"])
        print(
            f"  {m['opponent']:<40} {m['games']:>6} {m['win_rate']:>9.1%} "
            f"[{m['win_low']:.1%}, {m['win_high']:.1%}]  {seats}"
        )
    print(
        f"  ratings (tournament, seats rotated): {'agent':<36} {'rating':>7} {'95% interval':>15}"
    )
    for x in sorted(r["ratings"], key=lambda x: -x["rating"]):
        print(
            f"  {'':<37} {x['agent']:<36} {x['rating']:>+7.0f} "
            f"[{x['rating_low']:+.0f}, {x['rating_high']:+.0f}]"
        )


def plot_multiplayer(report: dict, path: str) -> str | None:
    """The agent's win rate against each opponent, and the ratings, with their intervals."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 1.5 + 0.4 * len(report["ratings"])))
    m = report["matches"]
    y = np.arange(len(m))[::-1]
    rate = np.array([x["win_rate"] for x in m])
    err = np.array([rate - [x["win_low"] for x in m], [x["win_high"] for x in m] - rate])
    left.errorbar(100 * rate, y, xerr=100 * err, fmt="o", capsize=3)
    left.axvline(100 / report["players"], color="0.7", ls="--")
    left.set_yticks(y, [x["opponent"][-30:] for x in m], fontsize=8)
    left.set_xlim(0, 100)
    left.set_xlabel(f"{report['agent'][-30:]}: games won, % (seats rotated)")
    r = report["ratings"]
    y = np.arange(len(r))[::-1]
    val = np.array([x["rating"] for x in r])
    err = np.array([val - [x["rating_low"] for x in r], [x["rating_high"] for x in r] - val])
    right.errorbar(val, y, xerr=err, fmt="o", capsize=3)
    right.set_yticks(y, [x["agent"][-30:] for x in r], fontsize=8)
    right.set_xlabel("Bradley-Terry rating (Elo scale, 95% bootstrap)")
    fig.suptitle(f"{report['game']}, {report['players']} players", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
