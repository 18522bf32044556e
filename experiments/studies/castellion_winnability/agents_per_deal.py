"""Every agent's result on each study deal, for the per-deal comparison with the solver.

    python experiments/studies/castellion_winnability/agents_per_deal.py --agents random,heuristic,planner \
        --deals 500 --seed 0 --out docs/data/castellion_winnability/agents_0_499.jsonl

Deal ``seed + i`` is the one ``castle-envs evaluate --seed`` and ``castle-envs solve`` play
(``env.reset(seed=seed + i)``). One JSON line per (level, agent, seed): won, ordeals passed.

    python experiments/studies/castellion_winnability/agents_per_deal.py --csv FILE.jsonl > FILE.csv

turns such a file into the per-agent table (the columns of ``castle-envs evaluate``'s CSV
that ``castle-envs solve --game castellion --plot --agents-csv`` reads).
"""

import argparse
import json
import time

import gymnasium as gym
from castle_envs.agents.registry import make_agent
from castle_envs.experiments.studies.records import jsonl_with, out_file, read_records

import castle_envs  # noqa: F401  (registers the envs)


def to_csv(path: str) -> None:
    from collections import defaultdict

    from castle_envs.experiments.stats import wilson_interval

    counts = defaultdict(lambda: [0, 0, 0])
    for r in read_records(path, "--csv", ("level", "agent", "won", "ordeals_passed")):
        c = counts[(r["level"], r["agent"])]
        c[0] += 1
        c[1] += r["won"]
        c[2] += r["ordeals_passed"]
    print("agent,level,episodes,wins,win_rate,win_low,win_high,ordeals_passed")
    for (level, agent), (n, won, passed) in counts.items():
        low, high = wilson_interval(won, n)
        print(f"{agent},{level},{n},{won},{won / n},{low},{high},{passed / n}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", metavar="JSONL", help="print the per-agent CSV of such a file")
    p.add_argument("--agents", default="random,heuristic,planner")
    p.add_argument("--levels", default="school,academy,menace")
    p.add_argument("--deals", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    a = p.parse_args()
    if a.csv:
        return to_csv(a.csv)
    if not a.out:
        p.error("--out is required")
    out_file(a.out, "--out", jsonl_with("level", "agent", "seed"), "per-deal results")
    with open(a.out, "w") as f:
        for level in a.levels.split(","):
            env = gym.make("castle_envs/Castellion-v0", level=level)
            for spec in a.agents.split(","):
                agent = make_agent(spec, "castellion", seed=a.seed)
                start = time.perf_counter()
                for i in range(a.deals):
                    obs, info = env.reset(seed=a.seed + i)
                    done = False
                    while not done:
                        action = agent.act(obs, info["action_mask"], env.unwrapped.state)
                        obs, _, term, trunc, info = env.step(action)
                        done = term or trunc
                    f.write(
                        json.dumps(
                            {
                                "level": level,
                                "agent": spec,
                                "seed": a.seed + i,
                                "won": bool(info["won"]),
                                "ordeals_passed": int(info["ordeals_passed"]),
                            }
                        )
                        + "\n"
                    )
                f.flush()
                print(level, spec, f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
