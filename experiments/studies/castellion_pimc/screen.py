"""Screen Castellion agents on training deals, paired on the same deals, resumably.

    python experiments/studies/castellion_pimc/screen.py play --level academy --spec pimc:worlds=8 \
        --start 20000000 --n 150
    python experiments/studies/castellion_pimc/screen.py report

``play`` plays deal ``seed`` (``solve_castellion.deal(seed, level)``, the position
``reset(seed=seed)`` deals) for each seed in ``start .. start + n - 1`` with the agent reset
to ``[0, seed, 0]`` (as ``castle-envs evaluate`` resets it), and after every deal writes the
result (won, Ordeals passed, CPU seconds by ``time.process_time``, decisions searched) to
``docs/data/castellion_pimc/screen_<level>.json``, keyed by spec and seed; deals already there are
skipped, so an interrupted run resumes. Training deals only: seeds 20,000,000 and up.
``report`` prints each spec's wins paired against ``planner`` on the deals both played
(``experiments.stats.paired_proportion_difference``, Newcombe's interval).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_pimc"
LEVELS = ("school", "academy", "menace")


def _path(level: str) -> Path:
    return HERE / f"screen_{level}.json"


def _load(level: str) -> dict:
    p = _path(level)
    return json.loads(p.read_text()) if p.exists() else {}


def _save(level: str, data: dict) -> None:
    p = _path(level)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    os.replace(tmp, p)


def play(level: str, spec: str, start: int, n: int) -> None:
    from castle_envs.agents.registry import make_agent
    from castle_envs.agents.solvers.castellion import deal

    if start < 20_000_000:
        raise SystemExit("screens use training deals only: seeds 20,000,000 and up")
    data = _load(level)
    runs = data.setdefault(spec, {})
    agent = make_agent(spec, "castellion", seed=0)
    policy = agent.policy
    for seed in range(start, start + n):
        if str(seed) in runs:
            continue
        agent.reset([0, seed, 0])
        searched = getattr(policy, "searched", 0)
        s = deal(seed, level)
        t = time.process_time()
        while not s.is_terminal():
            s.apply_action(agent.act(None, s.legal_action_mask(), s))
        cpu = time.process_time() - t
        runs[str(seed)] = {
            "won": int(s.outcome == 1),
            "passed": int(s.current),
            "cpu": round(cpu, 3),
            "searched": getattr(policy, "searched", 0) - searched,
        }
        _save(level, data)
        done = len(runs)
        wins = sum(r["won"] for r in runs.values())
        print(
            f"{level} {spec} seed {seed}: won {s.outcome == 1}, passed {s.current}, "
            f"{cpu:.1f} s ({wins}/{done})",
            flush=True,
        )


def _mean_cpu(runs: dict, seeds: list) -> str:
    """CPU-s a game over ``seeds``; "-" where a run kept only its average (``cpu`` absent)."""
    cpu = [runs[s]["cpu"] for s in seeds if "cpu" in runs[s]]
    return f"{sum(cpu) / len(cpu):.2f}" if len(cpu) == len(seeds) else "-"


def report() -> None:
    from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

    print(
        "| spec | level | deals | wins | planner wins | paired diff [95% CI] | better / worse "
        "| Ordeals passed a game (planner) | 2nd Ordeal passed (planner) | CPU-s/game (planner) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for level in LEVELS:
        data = _load(level)
        base = data.get("planner", {})
        for spec, runs in data.items():
            if spec == "planner":
                continue
            seeds = sorted(s for s in runs if s in base)
            if not seeds:
                continue
            a = [runs[s]["won"] for s in seeds]
            b = [base[s]["won"] for s in seeds]
            d = paired_proportion_difference(a, b)
            lo, hi = wilson_interval(sum(a), len(a))
            cpu, cpu0 = _mean_cpu(runs, seeds), _mean_cpu(base, seeds)
            passed = sum(runs[s]["passed"] for s in seeds) / len(seeds)
            passed0 = sum(base[s]["passed"] for s in seeds) / len(seeds)
            second = sum(runs[s]["passed"] >= 2 for s in seeds)
            second0 = sum(base[s]["passed"] >= 2 for s in seeds)
            print(
                f"| {spec} | {level} | {len(seeds)} | {sum(a)} ({100 * sum(a) / len(a):.1f}% "
                f"[{100 * lo:.1f}, {100 * hi:.1f}]) | {sum(b)} | {100 * d['mean']:+.1f} "
                f"[{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] | {d['a_better']} / "
                f"{d['b_better']} | {passed:.2f} ({passed0:.2f}) | {second} ({second0}) | {cpu} ({cpu0}) |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("--level", choices=LEVELS, required=True)
    p.add_argument("--spec", required=True)
    p.add_argument("--start", type=int, default=20_000_000)
    p.add_argument("--n", type=int, default=100)
    sub.add_parser("report")
    args = parser.parse_args()
    if args.cmd == "play":
        play(args.level, args.spec, args.start, args.n)
    else:
        report()


if __name__ == "__main__":
    main()
