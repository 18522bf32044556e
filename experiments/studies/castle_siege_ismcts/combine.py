"""Pool chunked ``castle-envs evaluate`` runs into one paired result, deal by deal.

    python experiments/studies/castle_siege_ismcts/combine.py docs/data/castle_siege_ismcts/vh-*-deals.csv

Each ``*-deals.csv`` holds one row per deal (difficulty, seed, then each agent's return: 1 a
win); a run's ``*-episodes.jsonl`` journal may stand in for it (a run stopped before its end). Rows are pooled by (difficulty, seed), a deal counted once; each agent's win rate gets
its Wilson interval, and every agent after the first is compared with the first on the deals
both played (Newcombe's paired interval, ``castle-envs evaluate``'s own); ``--common`` keeps
only the deals every agent played (runs recorded at different times on overlapping ranges).
``--json PATH`` also writes the figures.
"""

import argparse
import csv
import json
from collections import defaultdict

import numpy as np
from castle_envs.experiments.common import json_starting_with
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval
from castle_envs.experiments.studies.records import out_file


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--json")
    p.add_argument(
        "--common", action="store_true", help="every agent on the deals all of them played only"
    )
    args = p.parse_args(argv)
    if args.json:
        out_file(args.json, "--json", json_starting_with("files"), "figures this script wrote")
    results = defaultdict(dict)  # agent -> {(difficulty, seed): return}
    order: list[str] = []
    for path in args.files:
        if path.endswith(".jsonl"):  # an evaluate journal (a run that did not finish)
            with open(path) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            seed = lines[0]["settings"]["seed"]
            # a run under other rules options is another agent (victory=deck_left, ...)
            options = lines[0]["settings"].get("env_options") or {}
            tag = (
                " [" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + "]"
                if options
                else ""
            )
            for line in lines[1:]:
                agent, episode = line["agent"] + tag, line["episode"]
                if agent not in order:
                    order.append(agent)
                deal = (line["variant"], seed + episode["index"])
                results[agent][deal] = float(episode["returns"][0])
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                deal = (row["difficulty"], int(row["seed"]))
                for agent, value in row.items():
                    if agent in ("difficulty", "seed"):
                        continue
                    if agent not in order:
                        order.append(agent)
                    results[agent][deal] = float(value)
    if args.common:
        shared = set.intersection(*(set(results[a]) for a in order))
        for agent in order:
            results[agent] = {d: r for d, r in results[agent].items() if d in shared}
    out = {"files": args.files, "agents": {}, "paired": []}
    base = order[0]
    for agent in order:
        wins = np.array(list(results[agent].values())) > 0
        low, high = wilson_interval(int(wins.sum()), len(wins))
        seeds = sorted(s for _, s in results[agent])
        out["agents"][agent] = {
            "deals": len(wins),
            "wins": int(wins.sum()),
            "win_rate": float(wins.mean()),
            "low": low,
            "high": high,
            "seeds": [seeds[0], seeds[-1]],
        }
        print(
            f"{agent}: {int(wins.sum())} / {len(wins)} = {wins.mean():.2%} "
            f"[{low:.2%}, {high:.2%}] (seeds {seeds[0]}-{seeds[-1]})"
        )
    for agent in order[1:]:
        deals = sorted(set(results[base]) & set(results[agent]))
        a = np.array([results[base][d] > 0 for d in deals], float)
        b = np.array([results[agent][d] > 0 for d in deals], float)
        d = paired_proportion_difference(a, b)
        out["paired"].append({"agent": base, "baseline": agent, "deals": len(deals), **d})
        print(
            f"{base} - {agent}: {d['mean']:+.2%} [{d['low']:+.2%}, {d['high']:+.2%}] on "
            f"{len(deals)} deals (better on {d['a_better']}, worse on {d['b_better']})"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
