"""``castle-envs evaluate``: agents' win rates on common deals, with intervals.

    castle-envs evaluate --game castle-siege --difficulty very_hard --agent heuristic \\
        --episodes 10000 --seed 0

Several agents (``--agent random,heuristic`` or ``--agent`` repeated) and several variants
(``--difficulty easy,medium`` or ``all``) in one run. Episode ``i`` deals from seed
``seed + i`` for every agent (paired evaluation on common deals); on deal ``D`` the agent in
seat ``s`` is reset with ``[agent_seed, D, s]`` (``--agent-seed``, default 0), so a deal plays
the same alone, anywhere in a longer run, and with any number of workers. Multi-player games seat
the agent in seat ``i mod players`` with ``--opponent`` (default random) in the others.

Reported per agent and variant: win rate with its 95% Wilson interval, mean return, mean
length, mean per-episode rule-event counts (Castle Siege's ``info["events_<name>"]``, Castellion's
ordeals passed); and for every pair of agents the paired difference on the common deals
(win rate, return and each event count: mean with its 95% interval). Written to ``--out`` (default ``results/``) as
``<name>.json`` and ``<name>.csv`` (+ ``<name>-paired.csv``), ``<name>-deals.csv`` (every
deal's seed and each agent's return on it: which deals an agent won, for pooling runs or
setting them beside the solver's verdicts), and ``<name>.png`` when matplotlib is installed
(the ``notebooks`` extra). ``--record N`` also writes each agent's
and variant's first N games as game records in ``<name>-records/`` (``castle-envs replay``).

Every finished episode is also appended to ``<name>-episodes.jsonl`` as it comes in (the
first line holds the run's settings): a run killed at any moment continues with the same
command plus ``--resume``, playing only the episodes missing there, and ends with the files
an unbroken run writes (a last line cut by the kill is dropped with a warning and replayed).

The JSON also says what was run (``"provenance"``, ``provenance.py``): the castle-envs
version, the git revision of the checkout (``null`` outside one) and whether it had
uncommitted changes, Python and NumPy versions, the command line and its arguments, the
workers and backend, and for each agent the resolved spec and the files it reads with their
sha256; beside ``seed``, ``agent_seed``, ``episodes``, ``variants`` and ``env_options``.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from castle_envs.registry import GAMES, get_game

from .common import check_file_names, check_outputs, positive_int, writable_dir
from .episodes import play_chunk
from .parallel import BACKENDS, Terminated, run_chunks, split
from .stats import (
    iqm,
    mean_interval,
    paired_difference,
    paired_proportion_difference,
    stratified_bootstrap,
    wilson_interval,
)

log = logging.getLogger(__name__)


def add_parser(sub):
    p = sub.add_parser("evaluate", help="win rates of agents on common deals, with intervals")
    p.add_argument("--game", required=True, help=f"one of {', '.join(GAMES)}")
    p.add_argument("--difficulty", help="Castle Siege: easy,medium,hard,very_hard or all")
    p.add_argument("--level", help="Castellion: school,academy,menace or all")
    p.add_argument("--players", help="Castle Rooms / Castell: 2,3,4 or all")
    add_run_arguments(p, agent_flag="--agent", default_agents="random")
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument(
        "--opponent",
        default="random",
        help="multi-player games: the agent in the other seats (default random)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env keyword, e.g. --option attack=most_recent (repeatable)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue a killed run: play only the episodes missing from "
        "<out>/<name>-episodes.jsonl (same settings and --name)",
    )
    p.set_defaults(run=run)


def add_run_arguments(p, agent_flag: str, default_agents: str) -> None:
    # tournament's --agents also answers to --agent (which argparse would otherwise find
    # ambiguous beside --agent-seed)
    flags = [agent_flag] + (["--agent"] if agent_flag == "--agents" else [])
    p.add_argument(
        *flags,
        dest="agents",
        action="append",
        help="agent specs, comma-separated or repeated: best, random, greedy, heuristic, "
        "trained (Castle Siege), mcts:sims=200,rollout=heuristic, model:DIR, ppo:DIR, "
        f"linear:PATH (default {default_agents})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the first deal: episode i plays deal SEED + i (default 0)",
    )
    p.add_argument(
        "--agent-seed",
        type=int,
        default=0,
        help="the agents' own randomness: on deal D the agent in seat s is reset "
        "with [AGENT_SEED, D, s], so a deal plays the same in any run (default 0)",
    )
    p.add_argument(
        "--workers", type=positive_int, default=None, help="local processes (default: all cores)"
    )
    p.add_argument("--backend", choices=BACKENDS, default="local")
    p.add_argument("--address", default=None, help="Ray cluster address (--backend ray)")
    p.add_argument("--out", default="results", help="results folder (default results/)")
    p.add_argument("--name", default=None, help="file name stem (default from the run)")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--record",
        type=int,
        default=0,
        metavar="N",
        help="also write the first N games as game records (JSON, one file per game "
        "in <out>/<name>-records/; watch one with castle-envs replay FILE)",
    )


def run_options(args) -> dict:
    """The keywords of ``evaluate`` and ``tournament`` that ``add_run_arguments`` parsed:
    the workers and the agents' seed, progress and game records."""
    return {
        "workers": args.workers,
        "backend": args.backend,
        "address": args.address,
        "progress": not args.no_progress,
        "record": args.record,
        "agent_seed": args.agent_seed,
    }


def parse_agents(values, default: str, game: str | None = None) -> list[str]:
    """Agent specs from ``--agent`` values; ``best`` becomes the game's strongest shipped
    agent, and the command says which."""
    from castle_envs.agents.registry import split_agent_list

    specs = []
    for value in values or [default]:
        specs += split_agent_list(value)
    return [resolve_best(s, game) for s in specs] if game else specs


def resolve_best(spec: str, game: str) -> str:
    from castle_envs.agents.registry import BEST_AGENTS, resolve_spec

    resolved = resolve_spec(spec, game)
    if resolved != spec:
        strongest, needs = BEST_AGENTS[game][0]
        note = (
            ""
            if resolved.endswith(strongest.split("}")[-1])
            else (
                f" (the strongest, {strongest.split('/')[-1]}, needs {needs}: "
                "pip install numba, a dependency of castle-envs that did not install here)"
            )
        )
        log.info("agent %r for %s is %s%s", spec, game, resolved, note)
    return resolved


def parse_variants(spec, args) -> list:
    flags = {"difficulty": args.difficulty, "level": args.level, "num_players": args.players}
    for key, value in flags.items():
        if value is not None and key != spec.variant_arg:
            flag = "--players" if key == "num_players" else f"--{key}"
            raise ValueError(f"{flag} does not apply to {spec.slug}")
    text = flags[spec.variant_arg]
    if text is None:
        return [spec.variants[0]]
    names = (
        list(spec.ordered_variants) if text == "all" else [t.strip() for t in str(text).split(",")]
    )
    out = []
    for name in names:
        value = int(name) if spec.variant_arg == "num_players" and str(name).isdigit() else name
        if value not in spec.variants:
            raise ValueError(
                f"unknown {spec.variant_arg} {name!r} for {spec.slug}; "
                f"choose from {list(spec.variants)} or all"
            )
        out.append(value)
    return out


def parse_env_options(items) -> dict:
    options = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"malformed --option {item!r}: write KEY=VALUE")
        value = value.strip()
        for cast in (int, float):
            try:
                value = cast(value)
                break
            except ValueError:
                continue
        options[key.strip()] = value
    return options


def check_setup(spec, variant: dict, env_options: dict, agents: list[str]) -> None:
    """Fail fast, in this process, on a bad option or agent (before any worker starts)."""
    from castle_envs.agents.registry import make_agent

    try:
        spec.make(**variant, **env_options)
    except TypeError as err:
        raise ValueError(f"bad env option for {spec.slug}: {err}") from None
    except ImportError as err:
        raise ValueError(f"{spec.slug} is not available: {err}") from None
    for a in agents:
        make_agent(a, spec.slug)


def progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return None, lambda k: None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, lambda k: None
    # disable=None: a bar only on a terminal (no carriage-return noise in logs and CI)
    bar = tqdm(total=total, desc=desc, unit="ep", leave=False, disable=None)
    return bar, bar.update


@dataclass(frozen=True)
class EvalSettings:
    """One ``evaluate`` run: ``agents`` on ``episodes`` common deals (deal ``seed + i``) of
    each of the game's ``variants``. ``env_options``: env keywords; ``opponent``: the agent
    in the other seats of a multi-player game; ``workers``/``backend``/``address``: where
    the episodes run; ``record``: game records of each agent's and variant's first games;
    ``agent_seed``: the agents' own randomness; ``log_path``: the episode log (JSON Lines)
    every finished episode is appended to; ``resume``: play only the episodes it lacks."""

    game: str
    variants: list
    agents: list[str]
    episodes: int
    seed: int = 0
    env_options: dict | None = None
    opponent: str = "random"
    workers: int | None = None
    backend: str = "local"
    address: str | None = None
    progress: bool = False
    record: int = 0
    agent_seed: int = 0
    log_path: str | None = None
    resume: bool = False


def evaluate(
    game: str, variants: list, agents: list[str], episodes: int, seed: int = 0, **options
) -> dict:
    """Play every agent on ``episodes`` common deals per variant; the summary dict. The
    keywords are ``EvalSettings``'s (``seed``, ``workers``, ``record``, ...). With
    ``record`` > 0, ``summary["records"]`` holds the game records of each agent's and
    variant's first ``record`` games. With ``log_path`` every finished episode is appended
    there as it comes in (JSON Lines); ``resume`` plays only the episodes it lacks."""
    return run_evaluation(EvalSettings(game, variants, agents, episodes, seed, **options))


def run_evaluation(run: EvalSettings) -> dict:
    """``evaluate`` for settings already gathered: each variant in turn, then the
    aggregates over the variants."""
    spec = get_game(run.game)
    if run.episodes < 1:
        raise ValueError("--episodes must be at least 1")
    if len(set(run.agents)) != len(run.agents):
        raise ValueError(f"an agent is listed twice: {run.agents}")
    check_record_count(run.record)
    run = dataclasses.replace(run, env_options=dict(run.env_options or {}))
    results = summary_header(run, spec)
    per_variant_returns: dict = {}
    with contextlib.ExitStack() as stack:
        done, log_file = {}, None
        if run.log_path:
            done, log_file = open_episode_log(run.log_path, run.resume, log_settings(run, spec))
            stack.enter_context(log_file)
        for value in run.variants:
            per_agent = evaluate_variant(run, spec, value, done, log_file, results)
            for agent in run.agents:
                per_variant_returns.setdefault(agent, {})[value] = per_agent[agent]
    if len(run.variants) > 1:
        results["aggregate"] = aggregate_over_variants(per_variant_returns, run.seed)
    return results


def seated_agents(run: EvalSettings, spec) -> list[str]:
    """The agents that play: the evaluated ones, and the opponent of a multi-player game."""
    return run.agents + ([run.opponent] if not spec.solitaire else [])


def summary_header(run: EvalSettings, spec) -> dict[str, Any]:
    """The summary before any episode: what is run, empty result lists, the provenance."""
    from .provenance import provenance

    results: dict[str, Any] = {
        "game": run.game,
        "variant_arg": spec.variant_arg,
        "episodes": run.episodes,
        "seed": run.seed,
        "agent_seed": run.agent_seed,
        "variants": list(run.variants),
        "env_options": run.env_options,
        "agents": run.agents,
        "opponent": run.opponent if not spec.solitaire else None,
        "results": [],
        "paired": [],
        "aggregate": [],
        "provenance": provenance(seated_agents(run, spec), run.game),
    }
    results["provenance"]["workers"] = run.workers
    results["provenance"]["backend"] = run.backend
    return results


def log_settings(run: EvalSettings, spec) -> dict:
    """The first line of the episode log: the settings a ``--resume`` must match."""
    return {
        "game": run.game,
        "variant_arg": spec.variant_arg,
        "episodes": run.episodes,
        "seed": run.seed,
        "agent_seed": run.agent_seed,
        "env_options": run.env_options,
        "opponent": run.opponent if not spec.solitaire else None,
        "record": run.record,
    }


def evaluate_variant(run: EvalSettings, spec, value, done: dict, log_file, results: dict) -> dict:
    """Every agent on one variant: its result rows, deals and pairs added to ``results``;
    each agent's returns by deal."""
    variant = {spec.variant_arg: value}
    check_setup(spec, variant, run.env_options or {}, seated_agents(run, spec))
    per_agent, per_agent_events = {}, {}
    for agent in run.agents:
        start = time.perf_counter()
        records = play_agent(run, spec, value, agent, done.get((value, agent), {}), log_file)
        seconds = time.perf_counter() - start
        n_seats = int(value) if spec.variant_arg == "num_players" else 1
        ret = np.array([r["returns"][i % n_seats] for i, r in enumerate(records)])
        per_agent[agent], per_agent_events[agent] = ret, records
        games = [r.pop("record") for r in records if "record" in r]
        for g in games:
            g["source"] = "castle-envs evaluate"
        results.setdefault("records", []).extend(games)
        results["results"].append(result_row(spec, value, agent, ret, records, seconds))
    results.setdefault("deals", []).extend(
        {
            spec.variant_arg: value,
            "seed": run.seed + i,
            "returns": {a: float(per_agent[a][i]) for a in run.agents},
        }
        for i in range(run.episodes)
    )
    results["paired"] += paired_rows(run.agents, spec, value, per_agent, per_agent_events)
    return per_agent


def seat_plan(agent: str, opponent: str, n_seats: int) -> tuple:
    """The seatings an agent's deals cycle through: alone, or rotating through the seats
    with the opponent in the others."""
    if n_seats == 1:
        return ((agent,),)
    return tuple(
        tuple(agent if s == k else opponent for s in range(n_seats)) for k in range(n_seats)
    )


def play_agent(run: EvalSettings, spec, value, agent: str, have: dict, log_file) -> list[dict]:
    """One agent's episodes on one variant, by deal index: those in ``have`` (from the
    episode log) and the missing ones, played in chunks on the workers and logged."""
    from . import journal

    variant = {spec.variant_arg: value}
    n_seats = int(value) if spec.variant_arg == "num_players" else 1
    plan = seat_plan(agent, run.opponent, n_seats)
    missing = [i for i in range(run.episodes) if i not in have]
    chunks = [
        (
            run.game,
            tuple(variant.items()),
            tuple(sorted((run.env_options or {}).items())),
            plan,
            run.seed,
            tuple(missing[k] for k in idx),
            run.record,
            run.agent_seed,
        )
        for idx in (split(len(missing), run.workers or 8) if missing else [])
    ]
    bar, tick = progress_bar(run.episodes, run.progress, f"{agent} {value}")
    if bar is not None and have:
        bar.update(len(have))

    def save(i, chunk):
        if log_file is not None:
            journal.append(
                log_file, *({"variant": value, "agent": agent, "episode": r} for r in chunk)
            )

    try:
        new = (
            [
                r
                for chunk in run_chunks(
                    play_chunk,
                    chunks,
                    run.workers,
                    run.backend,
                    run.address,
                    tick,
                    [len(c[5]) for c in chunks],
                    on_result=save,
                )
                for r in chunk
            ]
            if chunks
            else []
        )
    finally:
        if bar is not None:
            bar.close()
    by_index = {**have, **{r["index"]: r for r in new}}
    return [by_index[i] for i in range(run.episodes)]


def result_row(spec, value, agent: str, ret, records: list[dict], seconds: float) -> dict:
    """One agent's row on one variant: win rate, return and length with intervals, the
    truncated games and the mean rule-event counts."""
    episodes = len(records)
    wins = int((ret > 0).sum())
    low, high = wilson_interval(wins, episodes)
    _, r_low, r_high = mean_interval(ret)
    event_names = sorted({k for r in records for k in r["events"]})
    events = {k: float(np.mean([r["events"].get(k, 0.0) for r in records])) for k in event_names}
    return {
        "agent": agent,
        spec.variant_arg: value,
        "episodes": episodes,
        "wins": wins,
        "win_rate": wins / episodes,
        "win_low": low,
        "win_high": high,
        "mean_return": float(ret.mean()),
        "return_low": r_low,
        "return_high": r_high,
        "mean_length": float(np.mean([r["length"] for r in records])),
        "truncated": int(sum(r["truncated"] for r in records)),
        "events_mean": events,
        "seconds": seconds,
    }


def paired_rows(agents: list[str], spec, value, per_agent: dict, events: dict) -> list[dict]:
    """Every pair of agents on one variant, the later agent against the earlier: paired
    differences of win rate, return and each event count."""
    rows = []
    for i, base in enumerate(agents):
        for agent in agents[i + 1 :]:
            a, b = per_agent[agent], per_agent[base]
            rows.append(
                {
                    "agent": agent,
                    "baseline": base,
                    spec.variant_arg: value,
                    "win_diff": paired_proportion_difference(a > 0, b > 0),
                    "return_diff": paired_difference(a, b),
                    "events_diff": _event_differences(events[agent], events[base]),
                }
            )
    return rows


def open_episode_log(path: str, resume: bool, settings: dict):
    """The episodes a killed run finished (``resume``: read back from ``path``, keyed by
    (variant, agent) then episode index) and the log opened to append the rest to."""
    from . import journal

    done: dict = {}
    if resume and os.path.exists(path):
        lines = journal.read(path)
        if not lines or lines[0].get("settings") is None:
            raise ValueError(f"{path} is not an evaluate episode log (rerun without --resume)")
        if lines[0]["settings"] != json.loads(json.dumps(settings)):
            theirs = lines[0]["settings"]
            differ = [k for k in settings if theirs.get(k) != json.loads(json.dumps(settings[k]))]
            raise ValueError(
                f"--resume: {path} was written with other settings "
                f"({', '.join(differ)}); rerun without --resume, or give --name"
            )
        for line in lines[1:]:
            ep = line["episode"]
            done.setdefault((line["variant"], line["agent"]), {})[ep["index"]] = ep
        f = open(path, "a")  # noqa: SIM115 (the journal stays open for the run; the caller closes it)
    else:
        from .common import check_overwrite

        check_overwrite(path, "the episode log", is_episode_log, "an evaluate episode log")
        f = open(path, "w")  # noqa: SIM115 (as above)
        journal.append(f, {"settings": settings})
    return done, f


def is_episode_log(head: bytes) -> bool:
    """Do a file's first bytes begin as an episode log (its settings line)?"""
    return head.startswith(b'{"settings": ')


def aggregate_over_variants(returns: dict, seed: int = 0) -> list[dict]:
    """rliable-style aggregates over the variants (tasks) of each agent, with 95% stratified
    bootstrap intervals (episodes resampled within each variant): the mean win rate over
    the variants, and the interquartile mean of the returns."""
    out = []
    for agent, by_variant in returns.items():
        wins = {v: (r > 0).astype(float) for v, r in by_variant.items()}
        win = stratified_bootstrap(wins, np.mean, seed=seed)
        ret = stratified_bootstrap(by_variant, iqm, seed=seed)
        out.append(
            {
                "agent": agent,
                "variants": list(by_variant),
                "mean_win_rate": win["value"],
                "mean_win_low": win["low"],
                "mean_win_high": win["high"],
                "return_iqm": ret["value"],
                "return_iqm_low": ret["low"],
                "return_iqm_high": ret["high"],
                "resamples": win["resamples"],
            }
        )
    return out


def _event_differences(records_a, records_b) -> dict:
    names = sorted({k for r in records_a + records_b for k in r["events"]})
    return {
        k: paired_difference(
            [r["events"].get(k, 0.0) for r in records_a],
            [r["events"].get(k, 0.0) for r in records_b],
        )
        for k in names
    }


def run(args) -> int:
    spec = get_game(args.game)
    writable_dir(args.out, "--out")  # now, not after the evaluation
    agents = parse_agents(args.agents, "random", spec.slug)
    variants = parse_variants(spec, args)
    name = args.name or (
        f"evaluate-{args.game}-"
        + "-".join(map(str, variants))
        + f"-seed{args.seed}-n{args.episodes}"
    )
    check_file_names(args.out, [name + end for end in OUTPUT_ENDINGS], "--name")
    check_outputs(args.out, name, RESULT_ENDINGS, "--name")
    log_path = os.path.join(args.out, f"{name}-episodes.jsonl")
    try:
        summary = run_evaluation(
            EvalSettings(
                args.game,
                variants,
                agents,
                args.episodes,
                args.seed,
                parse_env_options(args.option),
                resolve_best(args.opponent, spec.slug),
                log_path=log_path,
                resume=getattr(args, "resume", False),
                **run_options(args),
            )
        )
    except Terminated as stop:
        stop.saved = (
            f"the episodes played are in {log_path} (the same command with --resume goes on)"
        )
        raise
    summary["provenance"]["arguments"] = {
        k: v
        for k, v in vars(args).items()
        if isinstance(v, (str, int, float, bool, list, type(None)))
    }
    print_summary(summary)
    games = summary.pop("records", [])
    paths = write_results(summary, args.out, name, plot=not args.no_plot)
    paths.append(os.path.join(args.out, f"{name}-episodes.jsonl"))
    print("wrote " + ", ".join(paths))
    if games:
        folder = write_records(games, os.path.join(args.out, f"{name}-records"))
        print(
            f"wrote {len(games)} game record{'s' * (len(games) != 1)} to {folder} "
            "(castle-envs replay FILE)"
        )
    return 0


#: the result files (and the game records' folder) of a run named NAME, written at its end
RESULT_ENDINGS = (".json", ".csv", "-paired.csv", "-deals.csv", ".png", "-records")
#: what each file of a run named NAME adds to it (``write_results``, the episode log, the
#: game records' folder): all checked to fit the file system before the run starts
OUTPUT_ENDINGS = (
    ".json",
    ".json.tmp" + "0" * 7,  # journal.write_atomic's file beside it, a process id added
    ".csv",
    "-paired.csv",
    "-deals.csv",
    ".png",
    "-episodes.jsonl",
    "-records",
)


def check_record_count(record: int) -> None:
    if isinstance(record, bool) or not isinstance(record, int) or record < 0:
        raise ValueError(f"--record must be a number of games >= 0, got {record!r}")


def write_records(games: list[dict], folder: str) -> str:
    """One JSON file per game: <variant>-<agents>-<deal seed>.json; none written over a
    file that is not a game record (all checked before any is written)."""
    from .records import check_save_path, file_stem, save

    paths = []
    for g in games:
        variant = "-".join(str(v) for v in g["variant"].values())
        agents = "-vs-".join(dict.fromkeys(g["agents"]))
        path = os.path.join(folder, file_stem(f"{variant}-{agents}-seed{g['seed']}") + ".json")
        paths.append(check_save_path(path, "the game records' folder"))
    for g, path in zip(games, paths):
        save(g, path)
    return folder


def print_summary(summary: dict) -> None:
    key = summary["variant_arg"]
    print(
        f"{summary['game']}: {summary['episodes']} episodes per agent and {key}, "
        f"seeds {summary['seed']}..{summary['seed'] + summary['episodes'] - 1} (common deals)"
    )
    for r in summary["results"]:
        events = ", ".join(f"{k} {v:.2f}" for k, v in r["events_mean"].items())
        print(
            f"  {str(r[key]):<10} {r['agent']:<28} win {r['win_rate']:7.2%} "
            f"[{r['win_low']:.2%}, {r['win_high']:.2%}]  return {r['mean_return']:+.3f}  "
            f"length {r['mean_length']:.1f}  ({r['seconds']:.1f} s)"
        )
        if events:
            print(f"  {'':<10} events per game: {events}")
    for p in summary["paired"]:
        d = p["win_diff"]
        print(
            f"  {str(p[key]):<10} {p['agent']} - {p['baseline']}: win rate "
            f"{d['mean']:+.2%} [{d['low']:+.2%}, {d['high']:+.2%}] "
            f"(better on {d['a_better']} deals, worse on {d['b_better']})"
        )
        if not d["a_better"] and not d["b_better"]:  # no wins either way: show the events
            for name, e in p["events_diff"].items():
                if name != "turns" and (e["a_better"] or e["b_better"]):
                    print(
                        f"  {'':<10}   {name}: {e['mean']:+.3f} [{e['low']:+.3f}, {e['high']:+.3f}]"
                    )
    for a in summary.get("aggregate", []):
        print(
            f"  {'all':<10} {a['agent']:<28} mean win rate {a['mean_win_rate']:7.2%} "
            f"[{a['mean_win_low']:.2%}, {a['mean_win_high']:.2%}]  return IQM "
            f"{a['return_iqm']:+.3f} [{a['return_iqm_low']:+.3f}, {a['return_iqm_high']:+.3f}]"
            f"  (stratified bootstrap over {count_of(len(a['variants']), key)})"
        )


#: a variant keyword's plural, where adding an "s" is wrong
PLURALS = {"difficulty": "difficulties", "num_players": "player counts"}


def count_of(n: int, key: str) -> str:
    """``n`` variants named by their keyword: "1 difficulty", "4 difficulties", "3 levels"."""
    word = key if n == 1 else PLURALS.get(key, key + "s")
    if n == 1 and key == "num_players":
        word = "player count"
    return f"{n} {word}"


def write_results(summary: dict, out: str, name: str, plot: bool = True) -> list[str]:
    os.makedirs(out, exist_ok=True)
    key = summary["variant_arg"]
    stem = os.path.join(out, name)
    from .journal import write_atomic  # the per-deal returns go to the -deals.csv

    write_atomic(
        stem + ".json", json.dumps({k: v for k, v in summary.items() if k != "deals"}, indent=2)
    )
    event_names = sorted({k for r in summary["results"] for k in r["events_mean"]})
    columns = [
        "agent",
        key,
        "episodes",
        "wins",
        "win_rate",
        "win_low",
        "win_high",
        "mean_return",
        "return_low",
        "return_high",
        "mean_length",
        "truncated",
        "seconds",
    ]
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns + [f"events_{e}" for e in event_names])
        for r in summary["results"]:
            w.writerow([r[c] for c in columns] + [r["events_mean"].get(e, "") for e in event_names])
    paths = [stem + ".json", stem + ".csv"]
    if summary["paired"]:
        with open(stem + "-paired.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                [
                    "agent",
                    "baseline",
                    key,
                    "win_diff",
                    "win_diff_low",
                    "win_diff_high",
                    "return_diff",
                    "return_diff_low",
                    "return_diff_high",
                    "n",
                ]
            )
            for p in summary["paired"]:
                d, e = p["win_diff"], p["return_diff"]
                w.writerow(
                    [
                        p["agent"],
                        p["baseline"],
                        p[key],
                        d["mean"],
                        d["low"],
                        d["high"],
                        e["mean"],
                        e["low"],
                        e["high"],
                        d["n"],
                    ]
                )
        paths.append(stem + "-paired.csv")
    if summary.get("deals"):
        agents = summary["agents"]
        with open(stem + "-deals.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([key, "seed"] + agents)
            for d in summary["deals"]:
                w.writerow([d[key], d["seed"]] + [d["returns"][a] for a in agents])
        paths.append(stem + "-deals.csv")
    if plot:
        png = plot_win_rates(summary, stem + ".png")
        if png:
            paths.append(png)
    return paths


def win_axis_top(highs) -> float:
    """The win-rate axis' top: fits the intervals with room for the value labels (win rates
    of a few percent stay visible), at least 5%, at most 100%."""
    return min(1.0, max(0.05, 1.2 * max(highs, default=0.0)))


#: the smallest figure a plot is drawn in (inches at 100 dpi): room for the title, the axis
#: labels and the legend however few variants and agents there are
MIN_FIGURE = (6.4, 4.0)


def plot_win_rates(summary: dict, path: str) -> str | None:
    """Win rate with its interval per agent × variant; None (and a message) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("(no plot: matplotlib is not installed; pip install 'castle-envs[notebooks]')")
        return None
    fig = win_rate_figure(summary)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def in_game_order(game: str, variants) -> list:
    """``variants`` in the game's own order (easiest first), whatever order they came in."""
    order = list(get_game(game).ordered_variants)
    return sorted(dict.fromkeys(variants), key=lambda v: order.index(v) if v in order else 99)


def win_rate_figure(summary: dict) -> Any:
    """The figure ``plot_win_rates`` saves: at least ``MIN_FIGURE``, wider when the variants,
    the title or the legend need it, laid out by matplotlib's layout engine
    (``layout="constrained"``, tight_layout's successor, which also places legends outside
    the axes) so that the title, the tick labels and the legend (below the axes, as many
    columns as fit) lie inside it. The variants run in the game's order; each bar's value
    stands upright above its interval, inside the axes; where the share of deals proven
    winnable is known (``ceilings.py``) a dashed line marks it over the variant's bars."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from .ceilings import ceiling
    from .common import display_names

    key = summary["variant_arg"]
    variants = in_game_order(summary["game"], (r[key] for r in summary["results"]))
    agents = summary["agents"]
    fig, ax = plt.subplots(
        figsize=(max(MIN_FIGURE[0], 1.5 + 1.6 * len(variants)), MIN_FIGURE[1]),
        dpi=100,
        layout="constrained",
    )
    width = 0.8 / len(agents)
    handles: list = []
    labels = []
    digits = 0 if summary["episodes"] <= 100 else 1  # 1% steps or finer
    for k, agent in enumerate(agents):
        rows = [
            next(r for r in summary["results"] if r["agent"] == agent and r[key] == v)
            for v in variants
        ]
        x = np.arange(len(variants)) + (k - (len(agents) - 1) / 2) * width
        y = np.array([r["win_rate"] for r in rows])
        err = np.array(
            [
                [r["win_rate"] - r["win_low"] for r in rows],
                [r["win_high"] - r["win_rate"] for r in rows],
            ]
        )
        handles.append(ax.bar(x, y, width, yerr=err, capsize=3))
        for xi, r in zip(x, rows):
            labels.append(
                ax.annotate(
                    f"{r['win_rate']:.{digits}%}",
                    (xi, r["win_high"]),
                    xytext=(0, 2),
                    textcoords="offset points",
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=7,
                )
            )
    names = display_names(agents)
    tops = [r["win_high"] for r in summary["results"]]
    known = [(i, c) for i, v in enumerate(variants) if (c := ceiling(summary["game"], v))]
    for i, c in known:
        line = ax.hlines(c.share, i - 0.45, i + 0.45, colors="black", linestyles="--", lw=1.2)
        tops.append(c.share)
    if known:
        handles.append(line)
        seeds = {c.seeds for _, c in known}
        names.append(
            "proven winnable share (every card known"
            + (f", seeds {min(seeds)[0]:,}–{max(seeds)[1]:,})" if len(seeds) == 1 else ")")
        )
    ax.set_xticks(np.arange(len(variants)), [str(v) for v in variants])
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    top = win_axis_top(tops)
    ax.set_ylim(0, top)
    title = ax.set_title(f"{summary['game']}, {summary['episodes']} episodes each")
    # handles and labels given: matplotlib would drop a label starting with "_"
    _fit_figure(fig, title, handles, names)
    _fit_value_labels(fig, ax, labels, top)
    return fig


def _fit_value_labels(fig, ax, labels, top: float) -> None:
    """Raise the axis' top until every value label lies inside the axes (a 100% bar's label
    would stand over the title), the ticks still at most 100%."""
    renderer = fig.canvas.get_renderer()
    for _ in range(4):
        fig.canvas.draw()
        height = ax.bbox.height
        if max(t.get_window_extent(renderer).y1 for t in labels) <= ax.bbox.y1 - 3:
            break
        drawn = top
        for t in labels:
            # the label's height above the point it stands on, drawn at high / top
            above = t.get_window_extent(renderer).y1 - ax.bbox.y0 - height * t.xy[1] / drawn
            top = max(top, t.xy[1] * height / max(height - 4 - above, 1.0))
        ax.set_ylim(0, top)
    ticks = [t for t in ax.get_yticks() if -1e-9 <= t <= 1 + 1e-9]
    ax.set_yticks(ticks)
    ax.set_ylim(0, top)


def _fit_figure(fig, title, handles, labels) -> None:
    """The legend below the axes in rows of as many entries as the figure's width holds; the
    figure widened until the title and the legend's widest entry fit."""
    renderer = fig.canvas.get_renderer()
    legend = None
    for _ in range(4):
        if legend is not None:
            legend.remove()
        probe = fig.legend(handles, labels, fontsize=8, ncols=1, loc="outside lower center")
        entry_w = probe.get_window_extent(renderer).width
        probe.remove()
        ncols = max(1, min(len(labels), int((fig.bbox.width - 20) // max(entry_w, 1.0))))
        legend = fig.legend(
            handles, labels, fontsize=8, ncols=ncols, loc="outside lower center", frameon=False
        )
        fig.canvas.draw()
        need = (
            max(title.get_window_extent(renderer).width, legend.get_window_extent(renderer).width)
            + 20
        )
        if need <= fig.bbox.width:
            return
        fig.set_figwidth(need / fig.dpi)
