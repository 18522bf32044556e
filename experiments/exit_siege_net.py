"""Expert iteration for Castle Siege with the move network: the ISMCTS agent teaches it.

``exit_siege`` refits the 18 battle weights of the linear scorer to the search's visit
counts and found that 18 features cannot hold what the visits say. This script teaches the
move-feature network (``agents/move_policy.py``: an MLP over the 882-value observation and
every legal move's 75 features) instead, read top to bottom in three steps:

1. **collect**: the teacher (``--teacher``, by default the shipped ``--agent best``,
   ``models/castle_siege_very_hard_ismcts_standing``) plays training deals (seeds
   ``--seed`` and up, at least 20,000,000) exactly as ``castle-envs evaluate`` would (agent
   seed ``[0, deal, 0]``, the player's view handed to it); a journal line per game keeps the
   deal, the moves played, the outcome and, at every decision the search made, the root's
   children with their visits and mean values. Only the moves and the search's answers are
   kept: the positions are dealt again from the seed when fitting, so a journal of
   thousands of games stays a few megabytes and is committed chunk by chunk; a stopped run
   resumes after the last finished game.
2. **fit**: replay every journal's games; at each searched decision the network's move
   distribution is pulled towards the root's visit distribution (cross-entropy, the
   improved policy of Anthony, Tian and Barber 2017) and its value head towards the
   game's outcome (squared error, ``--vf-coef``), from the weights of ``--init``.
   Positions from ``--holdout`` of the games (the last ones of each journal) are kept out
   of the fit and report the loss and the agreement with the search's move.
3. the result is a model directory of kind ``move_policy`` (``--out``): ``--agent
   model:DIR`` plays it alone, and ``experiments.eval_moves`` measures it batched.

    python -m castle_envs.experiments.exit_siege_net collect --seed 22000000 --games 500 --journal docs/data/castle_siege_exit_net/vh-22000000.jsonl
    python -m castle_envs.experiments.exit_siege_net fit --journals docs/data/castle_siege_exit_net/vh-*.jsonl --out runs/exit_net/round0
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from castle_envs.agents.registry import make_agent
from castle_envs.castle_siege.rules import State

TRAIN_SEEDS = 20_000_000
TEACHER = "model:models/castle_siege_very_hard_ismcts_standing"


def _finished(journal: Path) -> set[int]:
    if not journal.exists():
        return set()
    done = set()
    for line in journal.read_text().splitlines():
        if line.strip():
            done.add(int(json.loads(line)["seed"]))
    return done


def play(agent, seed: int, difficulty: str) -> dict:
    """One teacher game on deal ``seed``: its moves, outcome and searched decisions."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    agent.reset([0, seed, 0])
    search = agent.policy
    actions, searched = [], []
    while not state.outcome:
        action = agent.act(None, None, state=state.player_view())
        if search.searched:
            searched.append([len(actions), [[a, n, round(q, 5)]
                                            for a, n, q, _ in search.root_stats() if n > 0]])
        actions.append(int(action))
        state.apply_action(action)
    return {"seed": seed, "difficulty": difficulty, "outcome": int(state.outcome),
            "actions": actions, "searched": searched}


def collect(args) -> None:
    if args.seed < TRAIN_SEEDS:
        raise SystemExit(f"--seed {args.seed}: training deals start at {TRAIN_SEEDS:,}; "
                         "lower seeds are evaluation deals")
    journal = Path(args.journal)
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = _finished(journal)
    agent = make_agent(args.teacher, "castle-siege", seed=0)
    if not hasattr(agent, "policy") or not hasattr(agent.policy, "root_stats"):
        raise SystemExit(f"--teacher {args.teacher!r} is not an ismcts agent (no root_stats)")
    t0, wins, played = time.process_time(), 0, 0
    with journal.open("a") as f:
        for seed in range(args.seed, args.seed + args.games):
            if seed in done:
                continue
            game = play(agent, seed, args.difficulty)
            f.write(json.dumps(game, separators=(",", ":")) + "\n")
            f.flush()
            played += 1
            wins += game["outcome"] == 1
    print(json.dumps({"journal": str(journal), "played": played, "wins": wins,
                      "cpu_s_per_game": round((time.process_time() - t0) / max(played, 1), 2)}))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="the teacher's games, journalled")
    c.add_argument("--seed", type=int, required=True)
    c.add_argument("--games", type=int, required=True)
    c.add_argument("--journal", required=True)
    c.add_argument("--difficulty", default="very_hard")
    c.add_argument("--teacher", default=TEACHER)
    args = p.parse_args(argv)
    if args.cmd == "collect":
        collect(args)


if __name__ == "__main__":
    main()
