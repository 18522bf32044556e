"""Plays one agent on a range of deals, one game a deal exactly as ``castle-envs evaluate``
plays it (deal ``D``: ``reset(seed=D)``, the agent reset with ``[0, D, 0]``), and appends
each deal's result, with the moves of a won game, to a JSON Lines journal. A killed run
resumes where it stopped (the deals already in the journal are skipped).

    python experiments/studies/benchmark/play_refs.py GAME VARIANT SPEC FIRST COUNT JOURNAL

for example ``castellion academy pimc 1000000 1000 runs/deals/castellion-academy-heldout-pimc.jsonl``.
Each line: ``{"seed": D, "won": 0 or 1, "line": [...], "cpu": seconds}`` (``line`` only for
a won game: the game is the proof that the deal can be won).
"""

import json
import sys
import time
from pathlib import Path

from castle_envs.experiments.episodes import play_episode
from castle_envs.experiments.journal import append
from castle_envs.experiments.studies.records import journal

from castle_envs.registry import get_game


def main(game: str, variant: str, spec: str, first: int, count: int, path: str) -> None:
    key = get_game(game).variant_arg
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    done = {r["seed"] for r in journal(path, "JOURNAL", ("seed", "won", "cpu"))}
    with open(path, "a") as f:
        for deal in range(first, first + count):
            if deal in done:
                continue
            start = time.process_time()
            r = play_episode(game, ((key, variant),), (), (spec,), deal, 0, record=True)
            won = int(r["returns"][0] > 0)
            row = {"seed": deal, "won": won, "cpu": round(time.process_time() - start, 3)}
            if won:
                row["line"] = r["record"]["actions"]
            append(f, row)
    print(json.dumps({"journal": path, "deals": count}))


if __name__ == "__main__":
    game, variant, spec, first, count, path = sys.argv[1:7]
    main(game, variant, spec, int(first), int(count), path)
