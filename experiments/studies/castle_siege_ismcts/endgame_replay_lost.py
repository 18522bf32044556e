"""Replay an agent on the deals another agent lost, and pool the result deal by deal.

    python experiments/studies/castle_siege_ismcts/endgame_replay_lost.py play SPEC OUT.json JOURNAL... [--part K/N]
    python experiments/studies/castle_siege_ismcts/endgame_replay_lost.py combine JOURNALS_GLOB OUT.json... [--json PATH]

Why only the lost deals: the agents compared here differ only in their endgame planner (the
nested search where the solver proves no win, ``endnested``), which reads nothing but the
position and its own fixed seed, and in the planner keeping to its line across forced
moves. Up to the first position where the planner proves a win the new agent makes the old
agent's moves (same deal, same agent seed ``[0, deal, 0]`` as ``castle-envs evaluate``, same
search); from there it plays a proven winning line. So every deal the old agent won, the
new one wins, and only the lost deals need playing again. ``play`` checks the premise on
each replay: a deal won with no win proven by the planner (nested search or solver) is
reported (the replay did not follow the recorded game), and so is a proof that did not end
in a win. (The Very Hard files were written before the solver's proofs were counted: deal
1,000,793 was reported there, won by the solver's line, which the old planner dropped at a
forced move.)

``play`` keeps, per deal, the result, the nested searches run and the wins they proved, and
the CPU-seconds of the game (resumed: deals already in OUT are skipped). ``combine`` reads
the ``castle-envs evaluate`` journals (the old agent) and the ``play`` files, and prints the
new agent's wins with their Wilson interval and the paired difference.
"""

import glob
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
from castle_envs.experiments.common import json_starting_with
from castle_envs.experiments.studies.records import out_file, read_records


def deals(journals):
    """{deal seed: won} of ``castle-envs evaluate`` episode journals (agent seed 0)."""
    out = {}
    for path in journals:
        lines = read_records(path, "JOURNAL")
        settings = lines[0]["settings"]
        if settings["agent_seed"] != 0:
            raise ValueError(f"{path}: agent seed {settings['agent_seed']}, expected 0")
        for line in lines[1:]:
            out[settings["seed"] + line["episode"]["index"]] = line["episode"]["returns"][0] > 0
    return out


def play(spec, out, journals, part="1/1"):
    from castle_envs.agents.registry import make_agent
    from castle_envs.agents.solvers.castle_siege import WINNABLE

    from castle_envs.castle_siege.rules import State

    out_file(out, "OUT", json_starting_with("spec"), "results this script wrote")
    k, n = (int(x) for x in part.split("/"))
    recorded = deals(journals)
    difficulty = read_records(journals[0], "JOURNAL")[1]["variant"]
    lost = sorted(d for d, won in recorded.items() if not won)[k - 1 :: n]
    try:
        res = json.load(open(out))
    except (FileNotFoundError, json.JSONDecodeError):  # absent, or empty (out_file allows)
        res = {"spec": spec, "difficulty": difficulty, "wins": {}, "nested": {}, "cpu": {}}
    agent = make_agent(spec, "castle-siege", seed=0)
    planner = agent.policy.endgame.solver
    proved: list[bool] = []  # per nested search: a win proven
    solved: list[bool] = []  # per solver call: a win proven

    def counted(solve, into):
        def run(state, **kw):
            result = solve(state, **kw)
            into.append(result.verdict == WINNABLE)
            return result

        return run

    planner.nested.solve = counted(planner.nested.solve, proved)
    planner.solver.solve = counted(planner.solver.solve, solved)
    for deal in lost:
        if str(deal) in res["wins"]:
            continue
        proved.clear()
        solved.clear()
        state = State.new_game(np.random.default_rng(deal), difficulty=difficulty)
        agent.reset([0, deal, 0])
        t = time.process_time()
        while not state.outcome:
            state.apply_action(agent.act(None, None, state=state.player_view()))
        won = state.outcome == 1
        if won != (any(proved) or any(solved)):
            print(f"deal {deal}: won {won}, proofs {sum(proved)} + {sum(solved)}: not as recorded")
        res["wins"][str(deal)] = int(won)
        res["nested"][str(deal)] = [len(proved), sum(proved)]
        res.setdefault("solver_wins", {})[str(deal)] = sum(solved)
        res["cpu"][str(deal)] = round(time.process_time() - t, 2)
        with open(out, "w") as f:
            json.dump(res, f)
    w = res["wins"]
    print(out, sum(w.values()), "of", len(w), "lost deals won")


def combine(pattern, outs, json_path=None):
    if json_path:
        out_file(json_path, "--json", json_starting_with("deals"), "figures this script wrote")
    from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

    old = deals(sorted(glob.glob(pattern)))
    replayed = {}
    cpu = []
    for path in outs:
        r = json.load(open(path))
        replayed.update({int(d): bool(w) for d, w in r["wins"].items()})
        cpu += list(r["cpu"].values())
    lost = [d for d, won in old.items() if not won]
    missing = [d for d in lost if d not in replayed]
    seeds = sorted(old)
    a = [int(old[d] or replayed.get(d, False)) for d in seeds]
    b = [int(old[d]) for d in seeds]
    n, wins = len(seeds), sum(a)
    lo, hi = wilson_interval(wins, n)
    diff = paired_proportion_difference(a, b)
    # the study's nested-search verdicts of these deals (the last record of a deal counts)
    verdict = {}
    difficulty = json.load(open(outs[0]))["difficulty"]
    study = Path(__file__).resolve().parents[3] / "docs/data/castle_siege_search"
    with gzip.open(study / f"nested_{difficulty}.jsonl.gz", "rt") as f:
        for line in f:
            record = json.loads(line)
            verdict[record["seed"]] = record["verdict"]
    proven = [d for d in seeds if verdict.get(d) == "winnable"]
    figures = {
        "deals": [seeds[0], seeds[-1]],
        "proven_winnable": len(proven),
        "share_of_proven": wins / max(1, len(proven)),
        "wins_outside_proven": sum(1 for d, w in zip(seeds, a) if w and d not in set(proven)),
        "n": n,
        "old_wins": sum(b),
        "new_wins": wins,
        "new_interval_95": [lo, hi],
        "paired": diff,
        "lost_replayed": len(lost) - len(missing),
        "lost_not_replayed": len(missing),
        "replay_cpu_mean": float(np.mean(cpu)) if cpu else None,
        "replay_cpu_max": float(np.max(cpu)) if cpu else None,
    }
    print(
        f"{n} deals {seeds[0]}-{seeds[-1]}: {sum(b)} -> {wins} "
        f"({100 * wins / n:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]); "
        f"{len(missing)} lost deals not replayed yet; paired {diff}; "
        f"{len(proven)} proven winnable, {wins / max(1, len(proven)):.3f} of them won"
    )
    if json_path:
        with open(json_path, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    part = "1/1"
    if "--part" in args:
        i = args.index("--part")
        part = args.pop(i + 1)
        args.pop(i)
    json_path = None
    if "--json" in args:
        i = args.index("--json")
        json_path = args.pop(i + 1)
        args.pop(i)
    if cmd == "play":
        play(args[0], args[1], args[2:], part)
    elif cmd == "combine":
        combine(args[0], args[1:], json_path)
    else:
        raise SystemExit(f"unknown command {cmd!r}: play or combine")
