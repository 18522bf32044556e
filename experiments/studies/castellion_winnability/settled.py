"""Where the study stands, every source of proof together: per level, the deals of seeds
0-499 proven winnable (and by what first), proven lost, and still undecided, with the 95%
interval on the winnable share (Wilson: the lower end from the proven wins, the upper from
the deals not proven lost, as the solver's summaries give it). From the repository root:

    python experiments/studies/castellion_winnability/settled.py

prints the table of the study's summary and writes ``settled.json`` and ``undecided_now.csv``
(each deal still undecided: its bounds and loss-search stages from ``undecided.csv``, the
furthest Ordeal any nested search's line passed, and how many nested searches ran on it).
``settled.json`` holds the solver's summaries (``summary_500k_probe.json``) with the counts
and intervals brought up to date, each source's count and the undecided seeds added, which
``castle-envs solve --game castellion --plot`` draws (``--summaries
docs/data/castellion_winnability/settled.json``).

Sources, in the order a deal is credited to them (each a line of moves replayed to a win in
the Gymnasium env, except the planner's games, which were played in it):

1. ``solver``: the study's perfect-information solver and planner probe (``solve_500k_probe.jsonl``);
2. ``win search``: the bounded depth-first search aimed at winning (``win_search_500k.jsonl``);
3. ``planner``: the planner's won games at the Menace, with ``info=30``
   (``agents_0_499_menace_planner_info30.jsonl``) and with ``scout`` (today's,
   ``agents_0_499_menace_planner_scout.jsonl``);
4. ``pimc``: ``pimc``'s won games from the player's seat (``agent_wins.jsonl``);
5. ``nested``: the nested Monte Carlo search over the true deal (``nested_wins.jsonl``;
   "scout" where its playouts were today's planner, with ``scout``);
6. ``nested, seeing``: the same search with its planner playing on a copy whose face-down
   Assaults are turned up (``seeing_wins.jsonl``, the Menace); ``(other playout)`` where its
   planner ran with other options or its lines were ranked by the planner's value
   (``seeing_wins.py --planner``, ``--score value``).

Proofs of loss: the root bounds and the loss search (``loss_proofs_200k.jsonl``).
"""

import csv
import json
from pathlib import Path

from castle_envs.experiments.stats import wilson_interval
from castle_envs.experiments.studies.records import open_record

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_winnability"
LEVELS = ("school", "academy", "menace")
DEALS = range(500)


def rows(name):
    return [json.loads(line) for line in open_record(HERE / name)]


won = {lv: {} for lv in LEVELS}  # level -> seed -> source


def credit(level, seed, source):
    won[level].setdefault(seed, source)


for r in rows("solve_500k_probe.jsonl"):
    if r["verdict"] == "winnable":
        credit(r["level"], r["seed"], "solver")
for r in rows("win_search_500k.jsonl"):
    if r["verdict"] == "WON, replays":
        credit(r["level"], r["seed"], "win search")
for name in ("agents_0_499_menace_planner_info30.jsonl", "agents_0_499_menace_planner_scout.jsonl"):
    for r in rows(name):
        if r["won"]:
            credit(r["level"], r["seed"], "planner")
for r in rows("agent_wins.jsonl"):
    if r["won"] and r["replays"]:
        credit(r["level"], r["seed"], "pimc")
nested_best: dict = {}  # (level, seed) -> (most Ordeals any nested line passed, searches run)
for r in rows("nested_wins.jsonl"):
    key = (r["level"], r["seed"])
    best, runs = nested_best.get(key, (0, 0))
    nested_best[key] = (max(best, r["ordeals_passed"]), runs + 1)
    if r["won"] and r["replays"]:
        level = r["settings"].get("level", 1)
        scouted = r["level"] == "menace" and r["settings"].get("planner", {}).get("scout")
        scout = " (scout)" if scouted else ""  # scout acts at the Menace only
        credit(r["level"], r["seed"], f"nested level {level}{scout}")
# the nested search whose planner plays with the face-down Assaults turned up (seeing_wins.py)
for r in rows("seeing_wins.jsonl"):
    key = (r["level"], r["seed"])
    best, runs = nested_best.get(key, (0, 0))
    nested_best[key] = (max(best, r["ordeals_passed"]), runs + 1)
    if r["won"] and r["replays"]:
        settings = r["settings"]
        other = " (other playout)" if settings.get("planner") or settings.get("score") else ""
        credit(r["level"], r["seed"], f"nested level {r['settings']['level']}, seeing{other}")
lost = {lv: set() for lv in LEVELS}
for r in rows("loss_proofs_200k.jsonl"):
    if r["proof"]:
        lost[r["level"]].add(r["seed"])

summaries = json.load(open(HERE / "summary_500k_probe.json"))
print("| level | proven winnable | by source | proven lost | undecided | 95% interval | width |")
print("|---|---|---|---|---|---|---|")
for s in summaries:
    lv = s["level"]
    wins, losses = won[lv], lost[lv]
    both = set(wins) & losses
    if both:
        raise SystemExit(f"{lv}: deals {sorted(both)} proven both winnable and lost")
    undecided = sorted(set(DEALS) - set(wins) - losses)
    lo, _ = wilson_interval(len(wins), len(DEALS))
    _, hi = wilson_interval(len(DEALS) - len(losses), len(DEALS))
    sources = {}
    for source in wins.values():
        sources[source] = sources.get(source, 0) + 1
    s.update(
        winnable=len(wins),
        unwinnable=len(losses),
        unknown=len(undecided),
        winnable_fraction=len(wins) / len(DEALS),
        winnable_interval_95=[lo, hi],
        proven_by=sources,
        undecided_seeds=undecided,
    )
    by = ", ".join(f"{k} {v}" for k, v in sources.items())
    print(
        f"| {lv} | {len(wins)} | {by} | {len(losses)} | {len(undecided)} | "
        f"[{lo:.1%}, {hi:.1%}] | {100 * (hi - lo):.1f} points |"
    )
with open(HERE / "settled.json", "w") as f:
    json.dump(summaries, f, indent=1)
    f.write("\n")

# the deals still undecided, each with what the bounds and searches say of it: its row of
# undecided.csv (the loss search's stages, the furthest line then known) and the furthest
# any nested search's line got since (Ordeals passed), over how many nested searches
bounds = {(r["level"], int(r["seed"])): r for r in csv.DictReader(open(HERE / "undecided.csv"))}
with open(HERE / "undecided_now.csv", "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(
        [
            "level",
            "seed",
            "ordeals",
            "stage1",
            "stage2",
            "known_passed",
            "nested_passed",
            "nested_runs",
        ]
    )
    for s in summaries:
        for seed in s["undecided_seeds"]:
            b = bounds[(s["level"], seed)]
            best, runs = nested_best.get((s["level"], seed), (0, 0))
            out.writerow(
                [
                    s["level"],
                    seed,
                    b["ordeals"],
                    b["stage1"],
                    b["stage2"],
                    b["known_passed"],
                    best,
                    runs,
                ]
            )
