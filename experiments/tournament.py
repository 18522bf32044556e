"""``castle-envs tournament``: agents against each other in a multi-player game.

    castle-envs tournament --game castell --players 4 --agents random,heuristic,mcts --games 1000

Game ``g`` deals from seed ``seed + g`` and seats agent ``(s + g) mod k`` in seat ``s`` (k
agents), so every agent plays every seat equally often (up to the remainder) on common
deals. Reported per agent: seats played, win rate (return > 0: the sole winner in Castell,
a winner in Castle Rooms) with its 95% Wilson interval, mean return, and an Elo-scale
Bradley–Terry rating (mean 0) fitted to all pairings of seats held by different agents
(the higher return wins the pairing, ties split), with a 95% bootstrap interval over games.
Written to ``--out`` as JSON, CSV and (with matplotlib) a plot of the ratings; ``--record
N`` adds the first N games as game records in ``<name>-records/`` (``castle-envs replay``).
"""

from __future__ import annotations

import csv
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
from .evaluate import (
    add_run_arguments,
    check_record_count,
    check_setup,
    parse_agents,
    progress_bar,
    run_options,
    write_records,
)
from .parallel import Terminated, run_chunks, split
from .stats import bt_ratings_with_intervals, wilson_interval


def add_parser(sub):
    p = sub.add_parser("tournament", help="agents against each other: win rates and ratings")
    p.add_argument(
        "--game", required=True, help=", ".join(s for s, g in GAMES.items() if not g.solitaire)
    )
    p.add_argument("--players", type=int, default=None, help="seats (default: the game's default)")
    add_run_arguments(p, agent_flag="--agents", default_agents="random,heuristic")
    p.add_argument("--games", type=int, default=200)
    p.add_argument(
        "--bootstrap", type=positive_int, default=200, help="resamples for rating intervals"
    )
    p.set_defaults(run=run)


def seat_plan(agents: list[str], players: int) -> tuple:
    k = len(agents)
    return tuple(tuple(agents[(s + g) % k] for s in range(players)) for g in range(k))


@dataclass(frozen=True)
class TournamentSettings:
    """One ``tournament``: ``games`` games of ``players`` seats among ``agents`` (seats
    rotated), deal ``seed + i``; ``workers``/``backend``/``address``: where the games run;
    ``bootstrap``: resamples of the ratings' intervals; ``record``: game records of the
    first games; ``agent_seed``: the agents' own randomness."""

    game: str
    players: int
    agents: list[str]
    games: int
    seed: int = 0
    workers: int | None = None
    backend: str = "local"
    address: str | None = None
    bootstrap: int = 200
    progress: bool = False
    record: int = 0
    agent_seed: int = 0


def tournament(
    game: str, players: int, agents: list[str], games: int, seed: int = 0, **options
) -> dict:
    """Every agent against the others with seats rotated; the summary dict (win rates,
    Bradley-Terry ratings with bootstrap intervals). The keywords are
    ``TournamentSettings``'s (``workers``, ``bootstrap``, ``record``, ...)."""
    return run_tournament(TournamentSettings(game, players, agents, games, seed, **options))


def run_tournament(run: TournamentSettings) -> dict:
    """``tournament`` for settings already gathered."""
    check_tournament(run)
    plan = seat_plan(run.agents, run.players)
    start = time.perf_counter()
    records = play_games(run, plan)
    seconds = time.perf_counter() - start
    game_records = [r.pop("record") for r in records if "record" in r]
    for g in game_records:
        g["source"] = "castle-envs tournament"
    return {
        "game": run.game,
        "players": run.players,
        "games": run.games,
        "seed": run.seed,
        "agent_seed": run.agent_seed,
        "agents": run.agents,
        "seat_plan": [list(p) for p in plan],
        **agent_rows(run, plan, records),
        "mean_length": float(np.mean([r["length"] for r in records])),
        "truncated": int(sum(r["truncated"] for r in records)),
        "seconds": seconds,
        **({"records": game_records} if game_records else {}),
    }


def check_tournament(run: TournamentSettings) -> None:
    """Fail fast, in this process, on bad settings or agents (before any worker starts)."""
    spec = get_game(run.game)
    if spec.solitaire:
        raise ValueError(f"{run.game} is a solitaire game; use castle-envs evaluate")
    if run.players not in spec.variants:
        raise ValueError(f"{run.game} takes {list(spec.variants)} players, not {run.players}")
    if run.games < 1:
        raise ValueError("--games must be at least 1")
    if len(run.agents) < 2:
        raise ValueError("a tournament needs at least two agents")
    if len(set(run.agents)) != len(run.agents):
        raise ValueError(f"an agent is listed twice: {run.agents}")
    check_record_count(run.record)
    check_setup(spec, {"num_players": run.players}, {}, run.agents)


def play_games(run: TournamentSettings, plan: tuple) -> list[dict]:
    """The games, in chunks on the workers, with a progress bar."""
    variant = {"num_players": run.players}
    chunks = [
        (run.game, tuple(variant.items()), (), plan, run.seed, idx, run.record, run.agent_seed)
        for idx in split(run.games, run.workers or 8)
    ]
    bar, tick = progress_bar(run.games, run.progress, f"{run.game} {run.players}p")
    try:
        return [
            r
            for c in run_chunks(
                play_chunk,
                chunks,
                run.workers,
                run.backend,
                run.address,
                tick,
                [len(c[5]) for c in chunks],
            )
            for r in c
        ]
    finally:
        if bar is not None:
            bar.close()


def agent_rows(run: TournamentSettings, plan: tuple, records: list[dict]) -> dict:
    """``results`` (each agent's win rate over the seats it played, mean return and rating
    with its interval) and ``pairwise_wins``."""
    index = {a: i for i, a in enumerate(run.agents)}
    seats_agents = [[index[a] for a in plan[r["index"] % len(plan)]] for r in records]
    returns = [r["returns"] for r in records]
    ratings = bt_ratings_with_intervals(
        seats_agents, returns, len(run.agents), run.bootstrap, run.seed
    )
    rows = []
    for i, agent in enumerate(run.agents):
        mine = [
            ret[s]
            for seats, ret in zip(seats_agents, returns)
            for s in range(run.players)
            if seats[s] == i
        ]
        wins = sum(1 for x in mine if x > 0)
        low, high = wilson_interval(wins, len(mine))
        rows.append(
            {
                "agent": agent,
                "seats_played": len(mine),
                "wins": wins,
                "win_rate": wins / max(1, len(mine)),
                "win_low": low,
                "win_high": high,
                "mean_return": float(np.mean(mine)) if mine else float("nan"),
                "rating": ratings["rating"][i],
                "rating_low": ratings["low"][i],
                "rating_high": ratings["high"][i],
            }
        )
    return {"results": rows, "pairwise_wins": ratings["wins"]}


def run(args) -> int:
    spec = get_game(args.game)
    writable_dir(args.out, "--out")  # now, not after the games
    players = (
        args.players
        if args.players is not None
        else (spec.variants[0] if not spec.solitaire else 1)
    )
    agents = parse_agents(args.agents, "random,heuristic", spec.slug)
    name = args.name or f"tournament-{args.game}-{players}p-seed{args.seed}-n{args.games}"
    endings = (".json", ".csv", ".png", "-records")
    check_file_names(args.out, [name + end for end in endings], "--name")
    check_outputs(args.out, name, endings, "--name")
    try:
        summary = tournament(
            args.game,
            players,
            agents,
            args.games,
            args.seed,
            bootstrap=args.bootstrap,
            **run_options(args),
        )
    except Terminated as stop:
        stop.saved = "nothing was saved (a tournament writes its files when every game is played)"
        raise
    game_records = summary.pop("records", [])
    print(
        f"{args.game}, {players} players, {args.games} games (seeds {args.seed}.."
        f"{args.seed + args.games - 1}), seats rotated; mean length "
        f"{summary['mean_length']:.1f} steps, {summary['seconds']:.1f} s"
    )
    print(
        f"  {'agent':<28} {'seats':>6} {'win rate':>9} {'95% CI':>17} {'return':>8} "
        f"{'rating':>7} {'95% CI':>15}"
    )
    for r in sorted(summary["results"], key=lambda r: -r["rating"]):
        print(
            f"  {r['agent']:<28} {r['seats_played']:>6} {r['win_rate']:>9.1%} "
            f"[{r['win_low']:.1%}, {r['win_high']:.1%}] {r['mean_return']:>+8.3f} "
            f"{r['rating']:>+7.0f} [{r['rating_low']:+.0f}, {r['rating_high']:+.0f}]"
        )
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, name)
    with open(stem + ".json", "w") as f:
        json.dump(summary, f, indent=2)
    columns = list(summary["results"][0])
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in summary["results"]:
            w.writerow([r[c] for c in columns])
    paths = [stem + ".json", stem + ".csv"]
    if not args.no_plot:
        png = plot_ratings(summary, stem + ".png")
        if png:
            paths.append(png)
    print("wrote " + ", ".join(paths))
    if game_records:
        folder = write_records(game_records, os.path.join(args.out, f"{name}-records"))
        print(
            f"wrote {len(game_records)} game record{'s' * (len(game_records) != 1)} to "
            f"{folder} (castle-envs replay FILE)"
        )
    return 0


def plot_ratings(summary: dict, path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logging.getLogger(__name__).warning(
            "(no plot: matplotlib is not installed; pip install 'castle-envs[notebooks]')"
        )
        return None
    fig = ratings_figure(summary)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def ratings_figure(summary: dict) -> Any:
    """The figure ``plot_ratings`` saves: each agent's rating with its interval, the agents
    named by ``display_name`` (a model by its folder), each name wrapped and slanted so that
    long ones do not run into each other, laid out by matplotlib's layout engine so that the
    y label keeps clear of the tick numbers."""
    import textwrap

    import matplotlib.pyplot as plt

    from .common import display_names

    rows = summary["results"]
    names = [
        "\n".join(textwrap.wrap(n, 22, break_on_hyphens=False) or [n])
        for n in display_names([r["agent"] for r in rows])
    ]
    fig, ax = plt.subplots(figsize=(max(6.4, 2 + 1.1 * len(rows)), 4.4), layout="constrained")
    y = np.array([r["rating"] for r in rows])
    err = np.array(
        [
            [r["rating"] - r["rating_low"] for r in rows],
            [r["rating_high"] - r["rating"] for r in rows],
        ]
    )
    ax.errorbar(np.arange(len(rows)), y, yerr=err, fmt="o", capsize=4)
    ax.set_xticks(np.arange(len(rows)), names, fontsize=8, rotation=30, ha="right")
    ax.set_ylabel("Bradley–Terry rating\n(Elo scale, 95% bootstrap)")
    ax.set_title(f"{summary['game']}, {summary['players']} players, {summary['games']} games")
    return fig
