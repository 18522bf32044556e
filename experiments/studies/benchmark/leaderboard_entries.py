"""The shipped agents' entries of the docs' Leaderboard page (``docs/leaderboard/*.json``).
From the repository root:

    python experiments/studies/benchmark/leaderboard_entries.py [solitaire [GAME]|multi]

``solitaire``: for every held-out deal set and every reference agent played on all of its
deals (or, where one was played only on the first 200, the quick protocol; ``GAME``: only
that game's sets),
``castle-envs benchmark --reference NAME``: the report from the stored per-deal results, no
game played. ``multi``: ``castle-envs benchmark`` for each shipped agent of Castle Rooms and
Castell (two players; the full protocol, 1,000 deals a seat).
"""

import subprocess
import sys
from pathlib import Path

from castle_envs.experiments.benchmark import MULTI_REFERENCES
from castle_envs.experiments.deals import available

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "docs/leaderboard"
CLI = [sys.executable, "-m", "castle_envs.experiments.cli", "benchmark"]


def solitaire(game: str | None = None) -> None:
    for entry in available():
        if entry["split"] != "heldout" or game not in (None, entry["game"]):
            continue
        flag = "--difficulty" if entry["variant_arg"] == "difficulty" else "--level"
        size = entry["seeds"][1] - entry["seeds"][0] + 1
        for ref in entry["references"]:
            if ref["deals"] < 200:
                continue
            quick = ["--quick"] if ref["deals"] < size else []
            name = f"{entry['name']}-{ref['name']}"
            command = [*CLI, "--game", entry["game"], flag, entry["variant"]]
            command += ["--reference", ref["name"], *quick, "--out", str(OUT), "--name", name]
            subprocess.run([*command, "--no-plot"], check=True, stdout=subprocess.DEVNULL)
            (OUT / f"{name}.csv").unlink()  # the page reads the JSON
            print(name, flush=True)


def multi() -> None:
    shipped = {"castle-rooms": ["model:models/castle_rooms_2p_move_ppo"], "castell": []}
    for game, agents in shipped.items():
        for agent in ["random", "heuristic", *agents]:
            refs = [r.replace("{models}", "models") for r in MULTI_REFERENCES[game][2]]
            if agent not in refs:
                raise SystemExit(f"{agent} is not a reference of {game}")
            name = f"{game}-2p-{agent.split('/')[-1]}"
            command = [*CLI, "--game", game, "--players", "2", "--agent", agent]
            command += ["--out", str(OUT), "--name", name, "--no-plot", "--no-progress"]
            subprocess.run([*command, "--workers", "1"], check=True, stdout=subprocess.DEVNULL)
            (OUT / f"{name}.csv").unlink()
            print(name, flush=True)


if __name__ == "__main__":
    which = sys.argv[1:] or ["solitaire", "multi"]
    if "solitaire" in which:
        solitaire(which[1] if which[0] == "solitaire" and len(which) == 2 else None)
    if "multi" in which:
        multi()
