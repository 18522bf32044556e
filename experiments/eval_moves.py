"""Held-out evaluation of a move-policy model on many deals at once, paired with the CEM
linear policy alone on the same deals.

    python -m castle_envs.experiments.eval_moves --model models/castle_siege_hard_move_ppo \\
        --difficulty hard,very_hard --episodes 10000 --seed 0 --out docs/data/move_ppo

``castle-envs evaluate --agent model:DIR`` plays the model one position at a time through the
Python env (tens of milliseconds a game on this machine); this plays it greedily on the
batched move view, a thousand deals per batch (env i's first game is exactly
``env.reset(seed=seed + i)``'s, the deal ``castle-envs evaluate`` plays), and the linear
policy on the rules core (``State.new_game(default_rng(seed))``, the same deal). ``--check N``
first replays the first N deals with the ``MovePolicyAgent`` the ``model:`` spec loads on the
Python env and stops if any outcome differs. Paired intervals are the ones
``castle-envs evaluate`` reports (Newcombe's for paired proportions).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.learned.saved import load_agent

from castle_envs.castle_siege.rules import State

from .stats import paired_proportion_difference, wilson_interval


def model_wins(agent, difficulty: str, seeds: range, batch: int = 1000) -> np.ndarray:
    import torch

    from castle_envs.moves import make_move_vec

    net, capacity = agent.net, agent.moves.capacity
    won = np.zeros(len(seeds), bool)
    for start in range(0, len(seeds), batch):
        n = min(batch, len(seeds) - start)
        envs = make_move_vec("castle-siege", n, capacity=capacity, difficulty=difficulty)
        obs, _ = envs.reset(seed=seeds[start])
        done = np.zeros(n, bool)
        with torch.no_grad():
            while not done.all():
                live = np.flatnonzero(~done)
                h = net.embed(torch.as_tensor(obs["observation"][live]))
                mask = torch.as_tensor(obs["move_mask"][live]).bool()
                logits = torch.full(mask.shape, float("-inf"))
                owner = torch.nonzero(mask, as_tuple=True)[0]
                logits[mask] = net.move_logits(
                    h, owner, torch.as_tensor(obs["move_features"][live])[mask]
                )
                actions = np.full(n, -1, np.int64)
                # finished envs have autoreset: any legal move of their new deal will do
                actions[:] = obs["move_ids"][:, 0]
                actions[live] = obs["move_ids"][live, logits.argmax(1).numpy()]
                obs, _, term, trunc, info = envs.step(actions)
                ended = (term | trunc) & ~done
                won[start + np.flatnonzero(ended)] = info["won"][ended] if ended.any() else []
                done |= ended
        envs.close()
    return won


def linear_wins(policy, difficulty: str, seeds: range) -> np.ndarray:
    won = np.zeros(len(seeds), bool)
    for i, seed in enumerate(seeds):
        state = State.new_game(np.random.default_rng(seed), difficulty)
        while not state.is_terminal():
            state.apply_action(policy(state))
        won[i] = state.outcome == 1
    return won


def check_against_agent(agent, difficulty: str, seeds: range, won: np.ndarray) -> None:
    from castle_envs.registry import get_game

    env = get_game("castle-siege").make(difficulty=difficulty)
    for i, seed in enumerate(seeds):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action = agent.act(obs, info["action_mask"], env.unwrapped.state.player_view())
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
        if bool(info["won"]) != bool(won[i]):
            raise SystemExit(f"deal {seed}: the batched evaluation and the agent disagree")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--baseline", default="models/castle_siege_very_hard_linear/policy.json")
    p.add_argument("--difficulty", default="hard,very_hard")
    p.add_argument("--episodes", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", type=int, default=0, help="deals replayed with the agent first")
    p.add_argument("--out", help="folder for the per-deal CSV and the summary JSON")
    args = p.parse_args(argv)
    if args.out:
        try:
            check_outputs(args)
        except ValueError as err:
            p.error(str(err))
    agent = load_agent(args.model, "castle-siege")
    baseline = LinearPolicy.load(args.baseline)
    summary = {
        "model": args.model,
        "baseline": f"linear:{args.baseline}",
        "episodes": args.episodes,
        "seed": args.seed,
        "results": [],
    }
    for difficulty in args.difficulty.split(","):
        seeds = range(args.seed, args.seed + args.episodes)
        t0 = time.perf_counter()
        mine = model_wins(agent, difficulty, seeds)
        t1 = time.perf_counter()
        if args.check:
            check_against_agent(agent, difficulty, seeds[: args.check], mine)
        t2 = time.perf_counter()
        base = linear_wins(baseline, difficulty, seeds)
        t3 = time.perf_counter()
        row = {
            "difficulty": difficulty,
            "deals": f"seeds {seeds[0]}-{seeds[-1]}",
            "checked_with_agent": args.check,
        }
        for name, w, secs in (("model", mine, t1 - t0), ("linear", base, t3 - t2)):
            lo, hi = wilson_interval(int(w.sum()), len(w))
            row[name] = {
                "wins": int(w.sum()),
                "win_rate": float(w.mean()),
                "low": lo,
                "high": hi,
                "seconds": round(secs, 1),
            }
        row["paired_model_minus_linear"] = paired_proportion_difference(mine, base)
        summary["results"].append(row)
        d = row["paired_model_minus_linear"]
        print(
            f"{difficulty:<10} model {100 * mine.mean():6.2f}% [{100 * row['model']['low']:.2f}, "
            f"{100 * row['model']['high']:.2f}]   linear {100 * base.mean():6.2f}% "
            f"[{100 * row['linear']['low']:.2f}, {100 * row['linear']['high']:.2f}]   "
            f"model - linear {100 * d['mean']:+.2f} [{100 * d['low']:+.2f}, "
            f"{100 * d['high']:+.2f}] (better on {d['a_better']} deals, worse on "
            f"{d['b_better']}); {row['model']['seconds']} s / {row['linear']['seconds']} s",
            flush=True,
        )
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            np.savetxt(
                out / per_deal_name(difficulty, args),
                np.stack([np.array(seeds), mine, base], 1).astype(int),
                fmt="%d",
                delimiter=",",
                header="seed,model_won,linear_won",
                comments="",
            )
    if args.out:
        (Path(args.out) / summary_name(args)).write_text(json.dumps(summary, indent=1))
    return 0


def per_deal_name(difficulty: str, args) -> str:
    return f"per_deal_{difficulty}_seed{args.seed}_n{args.episodes}.csv"


def summary_name(args) -> str:
    return f"eval_seed{args.seed}_n{args.episodes}.json"


def check_outputs(args) -> None:
    """Before any game: ``--out``'s files of this run write over nothing but this script's."""
    from .common import check_overwrite, json_starting_with

    out = Path(args.out)
    for difficulty in args.difficulty.split(","):
        check_overwrite(
            out / per_deal_name(difficulty, args),
            "--out",
            lambda head: head.startswith(b"seed,model_won,linear_won"),
            "a per-deal table of this script",
        )
    check_overwrite(out / summary_name(args), "--out", json_starting_with("model"), "its summary")


if __name__ == "__main__":
    raise SystemExit(main())
