"""More proofs of wins with every card known: nested Monte Carlo search (Cazenave 2009) over
the true deal, with the planner as its playout policy, on the study deals nothing has
proven winnable or lost yet (``undecided.csv``, less those ``agent_wins.jsonl`` has won).

At each decision with a choice, every candidate move (``pimc``'s candidates: the planner's
move and its next best, at most ``--top``, within ``--gap``) is played in the *true* deal and
the planner plays on to the end of the game (at ``--nested-level 2``, a level-1 search
plays on instead); the best line found so far is remembered
(Cazenave's memorised sequence), and its next move is played, so the search never does worse
than the best playout it has seen. A playout that wins ends the search: its line is replayed
in the Gymnasium env before it counts. Lines are scored by the Ordeals passed, then by the
moves survived. This reads the piles' order and the face-down Ordeals (the candidates and
the playouts choose on the player's view, but the comparison between candidates is made in
the one true world), so it is a perfect-information search like the solver, not an agent.
From the repository root:

    python experiments/studies/castellion_winnability/nested_wins.py --level menace

One JSON line per deal in ``nested_wins.jsonl`` (level, seed, settings, won, Ordeals the
best line passed, the line of a win, whether it replays, playouts, CPU seconds); deals already
in the journal with the same settings, or won, are skipped, so a killed sweep resumes. The
settings hold the planner's options (``--planner``); lines without them were played by the
planner before its ``scout`` option (``scout=0,grow=8``).
"""

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.options import parse_options
from castle_envs.agents.search.castellion_pimc import LEVEL_PLANNER, PimcPolicy
from castle_envs.agents.search.castellion_planner import (
    DEFAULTS as PLANNER_DEFAULTS,
)
from castle_envs.agents.search.castellion_planner import (
    OPTION_TYPES as PLANNER_TYPES,
)
from castle_envs.agents.search.castellion_planner import (
    PlannerPolicy,
)
from castle_envs.agents.solvers.castellion import deal, replay_wins
from castle_envs.experiments.studies.records import journal, open_record

from castle_envs.castellion.data import LEVELS

HERE = Path(__file__).resolve().parents[3] / "docs/data/castellion_winnability"
RULES = {"foundation_exemption": "placed", "early_encounter": "any_time"}
MAX_STEPS = 2000  # a game takes fewer than 400 moves

p = argparse.ArgumentParser()
p.add_argument("--level", required=True)
p.add_argument("--top", type=int, default=4, help="candidates a decision")
p.add_argument("--gap", type=float, default=4.0, help="planner units behind the best")
p.add_argument(
    "--nested-level",
    type=int,
    default=1,
    help="1: a planner playout after each candidate; 2: a level-1 search after each",
)
p.add_argument(
    "--planner",
    default="",
    help="the planner's options, as in its spec (w1=0.3,scout=0,...); default: the level's",
)
p.add_argument("--journal", default=str(HERE / "nested_wins.jsonl"))
p.add_argument("--seeds", help="comma-separated seeds instead of the undecided ones")
args = p.parse_args()

if args.seeds:
    seeds = [int(x) for x in args.seeds.split(",")]
else:
    won_by_agent = {
        r["seed"]
        for r in map(json.loads, open_record(HERE / "agent_wins.jsonl"))
        if r["level"] == args.level and r["won"] and r["replays"]
    }
    seeds = [
        int(r["seed"])
        for r in csv.DictReader(open(HERE / "undecided.csv"))
        if r["level"] == args.level and r["known_passed"] != "3"
    ]
    seeds = [s for s in seeds if s not in won_by_agent]
level_id = LEVELS.index(args.level)
chosen = {
    **LEVEL_PLANNER.get(level_id, {}),
    **parse_options(args.planner, PLANNER_TYPES, "planner"),
}
planner = PlannerPolicy(**chosen)
settings = {"top": args.top, "gap": args.gap}
if args.nested_level != 1:
    settings["level"] = args.nested_level
# the planner's every option (a journal line without this key was played by the planner
# before its scout option: scout 0, grow 8, the rest its defaults of today)
settings["planner"] = {**PLANNER_DEFAULTS, **chosen}
journal_path = Path(args.journal)
done = {
    r["seed"]  # searched with these settings, or won by any
    for r in journal(journal_path, "--journal", ("level", "seed", "settings", "won"))
    if r["level"] == args.level and (r["settings"] == settings or r["won"])
}

ranker = PimcPolicy(planner=planner, top=args.top, gap=args.gap)


def playout(world):
    """The planner plays ``world`` on (changed in place): (its moves, the line's score)."""
    moves = []
    for _ in range(MAX_STEPS):
        if world.outcome:
            break
        a = planner(world, None)
        moves.append(a)
        world.apply_legal(a)
    return moves, score(world, len(moves))


def score(world, moves):
    """A line's score: (Ordeals passed, 4 for a win; then the moves it survived)."""
    return (4, 0) if world.outcome > 0 else (world.current, moves)


def nested(s, level):
    """Nested search of ``level`` from ``s`` (changed in place): (best line, its score,
    playouts). Level 0 is the planner's playout; level n plays each candidate and searches
    on at level n - 1, and follows the best line found so far."""
    if level == 0:
        return (*playout(s), 1)
    played, best, best_score, playouts = [], [], (-1, 0), 0
    while not s.outcome:
        legal = np.flatnonzero(s.legal_action_mask()).tolist()
        cands = ranker.candidates(s, legal) if len(legal) > 1 else legal
        if len(cands) > 1 or not best:
            for a in cands:
                w = s.clone()
                w.apply_legal(a)
                moves, (passed, survived), n = nested(w, level - 1)
                playouts += n
                line_score = (passed, survived + len(played) + 1)
                if line_score > best_score:
                    best, best_score = played + [a] + moves, line_score
                if best_score[0] == 4:
                    return best, best_score, playouts
        a = best[len(played)]
        s.apply_legal(a)
        played.append(a)
    return best, best_score, playouts


wins = 0
for seed in seeds:
    if seed in done:
        continue
    t = time.process_time()
    line, (passed, _), playouts = nested(deal(seed, args.level, **RULES), args.nested_level)
    win = passed == 4
    replays = win and replay_wins(seed, args.level, line, **RULES)
    if win and not replays:
        raise SystemExit(f"{args.level} deal {seed}: a won line that does not replay")
    wins += win
    record = {
        "level": args.level,
        "seed": seed,
        "settings": settings,
        "won": bool(win),
        "ordeals_passed": min(passed, 3),
        "replays": bool(replays),
        "line": line if win else [],
        "playouts": playouts,
        "cpu_s": round(time.process_time() - t, 2),
    }
    with open(journal_path, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(seed, "WON" if win else passed, playouts, record["cpu_s"], flush=True)
print(f"{args.level}: {wins} won this run")
