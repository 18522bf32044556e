"""More search on the Very Hard deals the nested-search passes left undecided (of 0-999:
seeds 53 and 62, both won by ``l2-heuristic-check``), each attempt bounded in CPU time and
resumable. From the repository root:

    python experiments/studies/castle_siege_winnability/open_deals.py SEED ATTEMPT JOURNAL [CPU]

``ATTEMPT`` names one of ``ATTEMPTS``: the nested search of ``castle-envs solve --nested``
(level 2) with other settings than the study's six passes (the heuristic's weights as the
playout's scorer, more noise), or a level-3 nested search built here on the compiled level 2
(from each position of its line, each of the scorer's ``width`` best moves is finished by a
whole level-2 search, and the line follows the best; Cazenave 2009). Each finished run
appends ``{"seed", "attempt", "run", "score", "cpu"}`` (with ``line`` when it wins, checked
by replaying it in the Gymnasium env) to ``JOURNAL``; a run already there is skipped, and no
run starts once ``CPU`` seconds (default 1,200) of this process are spent (a level-3 run
stops within one level-2 search of it, unrecorded). A line's score is the kernel's: a win
(``WIN_SCORE``), else 1,000 a castle captured less one a defender standing.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy
from castle_envs.agents.registry import shipped_models_dir
from castle_envs.agents.solvers import castle_siege_kernel as S
from castle_envs.agents.solvers import castle_siege_nested_kernel as N
from castle_envs.agents.solvers.castle_siege import deal_deck, replay_wins
from castle_envs.agents.solvers.castle_siege_compiled import shared_memo
from castle_envs.experiments.journal import append
from castle_envs.experiments.studies.records import journal as read_journal

from castle_envs.castle_siege.kernel import OUTCOME, apply
from castle_envs.castle_siege.rules import State
from castle_envs.castle_siege.vector import write_state

#: name -> settings: level, width (level 3: its own candidates; ``inner``: level 2's), the
#: playouts' noise, the scorer (``linear`` or ``heuristic``), the first noise seed, the runs,
#: and ``check``: the depth-first solver's nodes at each position of level 2's line
ATTEMPTS = {
    "l2-heuristic": dict(level=2, width=12, noise=0.2, scorer="heuristic", seed=10_000, runs=400),
    "l2-heuristic-w16": dict(
        level=2, width=16, noise=0.2, scorer="heuristic", seed=60_000, runs=400
    ),
    "l3-heuristic-i12": dict(
        level=3, width=4, inner=12, noise=0.2, scorer="heuristic", seed=70_000, runs=400
    ),
    "l2-heuristic-check": dict(
        level=2, width=12, noise=0.2, scorer="heuristic", seed=80_000, runs=400, check=100_000
    ),
    "l2-noise35": dict(level=2, width=12, noise=0.35, scorer="linear", seed=20_000, runs=400),
    "l3-w4": dict(level=3, width=4, inner=5, noise=0.2, scorer="linear", seed=30_000, runs=400),
    "l3-w8": dict(level=3, width=8, inner=8, noise=0.2, scorer="linear", seed=50_000, runs=400),
    "l3-w6-heuristic": dict(
        level=3, width=6, inner=6, noise=0.2, scorer="heuristic", seed=40_000, runs=400
    ),
}


def weights(scorer: str) -> np.ndarray:
    if scorer == "heuristic":
        return LinearPolicy(HEURISTIC_WEIGHTS).vector()
    path = shipped_models_dir() / "castle_siege_very_hard_linear" / "policy.json"
    return LinearPolicy.load(path).vector()


class OutOfTime(Exception):
    pass


def level3(x, w, memo, b, v, weights_, cfg, seed, deadline) -> tuple[int, list[int]]:
    """Level 3 from ``b``/``v`` (changed in place): (score, line)."""
    line: list[int] = []
    best, best_line = -N.WIN_SCORE, []  # the best continuation from the current position
    cand = np.zeros(N.MAX_WIDTH, np.int64)
    while v[OUTCOME] == 0:
        k = N.candidates(b, v, False, weights_, cfg["width"], cand, x)
        for a in [int(c) for c in cand[:k]]:
            if time.process_time() > deadline:
                raise OutOfTime
            b2, v2 = b.copy(), v.copy()
            apply(b2, v2, a, False)
            if v2[OUTCOME] != 0:
                s, rest = int(N.score(b2, v2)), []
            else:
                s, rest = N.search(
                    x,
                    w,
                    memo,
                    b2,
                    v2,
                    2,
                    False,
                    False,
                    weights_,
                    cfg["inner"],
                    cfg["noise"],
                    0,
                    seed,
                )
            if s > best:
                best, best_line = s, [a, *rest]
            if s == N.WIN_SCORE:
                return s, line + best_line
        if not best_line:
            break
        a = best_line.pop(0)
        apply(b, v, a, False)
        line.append(a)
    return best, line


def run_one(seed: int, cfg: dict, run: int, deadline: float) -> tuple[int, list[int]]:
    state = State.new_game(difficulty="very_hard", deck=deal_deck(seed))
    x = N.new_scratch()
    # the solver's table sized for its nodes, as NestedSearch sizes it
    w = S.new_work(max(10, min(22, (2 * max(cfg.get("check", 0), 1)).bit_length())))
    memo = shared_memo()
    b = np.zeros(x.B.shape[1], np.int8)
    v = np.zeros(x.V.shape[1], np.int32)
    write_state(b, v, state, state.rows, state.rule_options())
    wt = weights(cfg["scorer"])
    noise_seed = cfg["seed"] + run
    if cfg["level"] == 3:
        return level3(x, w, memo, b, v, wt, cfg, noise_seed, deadline)
    check = cfg.get("check", 0)  # the solver's nodes at each position of the top line
    return N.search(
        x, w, memo, b, v, 2, False, False, wt, cfg["width"], cfg["noise"], check, noise_seed
    )


def main(seed: int, attempt: str, journal: str, cpu: float = 1200.0) -> None:
    cfg = ATTEMPTS[attempt]
    path = Path(journal)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    # checked before any work: a file this script did not write is refused, not appended to
    for row in read_journal(path, "JOURNAL", ("seed", "attempt", "run", "score")):
        if row["seed"] == seed and row["attempt"] == attempt:
            done.add(row["run"])
            if "line" in row:
                print(f"deal {seed}: already won ({attempt} run {row['run']})")
                return
    deadline = time.process_time() + cpu
    for run in range(cfg["runs"]):
        if run in done:
            continue
        if time.process_time() > deadline:
            break
        start = time.process_time()
        try:
            score, line = run_one(seed, cfg, run, deadline)
        except OutOfTime:
            break
        row = {"seed": seed, "attempt": attempt, "run": run, "score": int(score)}
        row["cpu"] = round(time.process_time() - start, 2)
        if score == N.WIN_SCORE:
            if not replay_wins(deal_deck(seed), "very_hard", line):
                raise SystemExit(f"deal {seed}: a line scored a win that does not replay")
            row["line"] = [int(a) for a in line]
        with open(path, "a") as f:
            append(f, row)
        print(json.dumps({k: v for k, v in row.items() if k != "line"}), flush=True)
        if "line" in row:
            print(f"deal {seed}: WON by {attempt} run {run}")
            return


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or sys.argv[2] not in ATTEMPTS:
        raise SystemExit(__doc__)
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], *(float(a) for a in sys.argv[4:]))
