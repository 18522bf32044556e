"""The nested endgame's node budget (``endbudget``): what it costs in wins, what it saves in time.

    python experiments/studies/castle_siege_ismcts/endgame_budget.py profile SPEC DIFFICULTY OUT.jsonl DEALS
    python experiments/studies/castle_siege_ismcts/endgame_budget.py simulate PROFILE.jsonl BUDGET[,BUDGET...]
    python experiments/studies/castle_siege_ismcts/endgame_budget.py time SPEC DIFFICULTY OUT.json DEALS
    python experiments/studies/castle_siege_ismcts/endgame_budget.py derive HARD_OR_VH BUDGET PROFILE.jsonl TIMED.json OUT.json

Why this can be settled on a few hundred games: a failed nested search changes no move (the
agent goes on searching as if it had not tried), and the nested search's result depends
only on the position and its fixed seeds. So a budget changes a game only where a nested
search that won would be cut before its winning run started; every other game is played
move for move as without the budget. ``profile`` plays deals with an unbounded agent and
keeps, per nested search, each run's nodes and CPU-seconds (DEALS: a comma list, here the
deals the nested endgame won, ``replay_lost.py``'s files); ``simulate`` counts, for each
per-game budget, the wins kept and the deals whose winning run the budget would cut (those
games then go elsewhere and must be played again: ``time`` plays them with the budgeted
agent, and times any other deals); ``derive`` writes the budgeted agent's result on every
lost deal of ``replay_lost.py``'s files (the profiled wins kept, the cut ones as played
again), in ``replay_lost.py play``'s format, for ``replay_lost.py combine``.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.registry import make_agent
from castle_envs.agents.solvers.castle_siege import UNKNOWN, WINNABLE, Result
from castle_envs.agents.solvers.castle_siege_nested import NestedSearch
from castle_envs.experiments.common import json_starting_with
from castle_envs.experiments.studies.records import journal, out_file

from castle_envs.castle_siege.rules import State

HERE = Path(__file__).resolve().parents[3] / "docs/data/castle_siege_ismcts" / "endgame"


def _play(agent, deal: int, difficulty: str) -> tuple[bool, float]:
    state = State.new_game(np.random.default_rng(deal), difficulty=difficulty)
    agent.reset([0, deal, 0])
    t = time.process_time()
    while not state.outcome:
        state.apply_action(agent.act(None, None, state=state.player_view()))
    return state.outcome == 1, round(time.process_time() - t, 2)


def profile(spec: str, difficulty: str, out: str, deals: list[int]) -> None:
    journal(out, "OUT", ("deal", "won", "cpu", "searches"))  # before the agent loads
    agent = make_agent(spec, "castle-siege", seed=0)
    nested = agent.policy.endgame.solver.nested
    searches: list = []

    # the agent's nested search, one run a call (run r: seed + r), unbounded
    one = NestedSearch(
        level=nested.level,
        width=nested.width,
        runs=1,
        noise=nested.noise,
        check=nested.check,
        weights=nested.weights,
    )

    def solve(state, budget=None):
        runs: list = []
        searches.append(runs)
        for run in range(nested.runs):
            one.seed = nested.seed + run
            t = time.process_time()
            result = one.solve(state)
            runs.append([result.nodes, round(time.process_time() - t, 3)])
            if result.verdict == WINNABLE:
                return result
        return Result(UNKNOWN)

    nested.solve = solve
    done = {r["deal"] for r in journal(out, "OUT", ("deal", "won", "cpu", "searches"))}
    for deal in deals:
        if deal in done:
            continue
        searches.clear()
        won, cpu = _play(agent, deal, difficulty)
        with open(out, "a") as f:
            f.write(json.dumps({"deal": deal, "won": int(won), "cpu": cpu, "searches": searches}))
            f.write("\n")


def fate(game: dict, budget: int) -> str:
    """``kept`` (won the same way within the budget), ``cut`` (the budget stops its winning
    search before the winning run, or leaves nothing for it), ``lost``, or ``other`` (won
    without a nested win)."""
    left, searches = budget, game["searches"]
    for i, runs in enumerate(searches):
        winning = game["won"] and i == len(searches) - 1
        if left <= 0:  # no try once the game's budget is spent
            return "cut" if game["won"] else "lost"
        spent = 0
        for k, (nodes, _) in enumerate(runs):
            if spent >= left:
                break
            spent += nodes
            if winning and k == len(runs) - 1:
                return "kept"
        left -= spent
    if game["won"]:
        return "cut" if searches else "other"
    return "lost"


def simulate(path: str, budgets: list[int]) -> None:
    games = [json.loads(line) for line in open(path)]
    for budget in budgets:
        fates = [fate(g, budget) for g in games]
        cut = [g["deal"] for g, f in zip(games, fates) if f == "cut"]
        print(
            f"{path}: budget {budget:,}: kept {fates.count('kept')}, other wins "
            f"{fates.count('other')}, cut {len(cut)} {cut}"
        )


def timed(spec: str, difficulty: str, out: str, deals: list[int]) -> None:
    out_file(out, "OUT", json_starting_with("spec"), "timings this script wrote")
    agent = make_agent(spec, "castle-siege", seed=0)
    solver = agent.policy.endgame.solver
    old = Path(out).exists() and Path(out).stat().st_size
    res = json.load(open(out)) if old else {"spec": spec, "deals": {}}
    _play(agent, deals[0], difficulty)  # compiles the kernels outside the timings
    for deal in deals:
        if str(deal) in res["deals"]:
            continue
        won, cpu = _play(agent, deal, difficulty)
        tries, spent = solver.tries - solver.tries_left, solver.nodes_spent
        res["deals"][str(deal)] = {"won": int(won), "cpu": cpu, "tries": tries, "spent": spent}
        json.dump(res, open(out, "w"), indent=0)


def derive(name: str, budget: int, profile_path: str, timed_path: str, out: str) -> None:
    out_file(out, "OUT", json_starting_with("budget"), "figures this script wrote")
    games = {json.loads(line)["deal"]: json.loads(line) for line in open(profile_path)}
    played = json.load(open(timed_path))["deals"]
    # no CPU-seconds: only some deals were timed (``time``'s file has them)
    res: dict = {"budget": budget, "wins": {}, "cpu": {}}
    for part in (1, 2):
        old = json.load(open(HERE / f"{name}_lost_{part}.json"))
        res["difficulty"] = old["difficulty"]
        for deal, won in old["wins"].items():
            if won and fate(games[int(deal)], budget) == "cut":
                won = played[deal]["won"]  # played again with the budget
            res["wins"][deal] = won
    json.dump(res, open(out, "w"))
    print(out, sum(res["wins"].values()), "of", len(res["wins"]), "lost deals won")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "profile":
        profile(args[0], args[1], args[2], [int(d) for d in args[3].split(",")])
    elif cmd == "simulate":
        simulate(args[0], [int(b) for b in args[1].split(",")])
    elif cmd == "time":
        timed(args[0], args[1], args[2], [int(d) for d in args[3].split(",")])
    elif cmd == "derive":
        derive(args[0], int(args[1]), args[2], args[3], args[4])
    else:
        raise SystemExit(f"unknown command {cmd!r}: profile, simulate, time or derive")
