"""Expert iteration for Castle Siege: the ISMCTS agent teaches its own move scorer.

Read top to bottom; each round is

1. **play**: ``--games`` training deals (seeds ``--seed`` + round * games + i, all at
   least 20,000,000, never the evaluation deals) with the ``ismcts`` agent whose priors and
   playouts come from this round's scorer; at every battle-phase decision it searched, keep
   the features of every legal move (``battle_features``, the scorer's own 18) and the root's
   visit counts (the search's improved policy, Anthony, Tian and Barber 2017);
2. **fit**: the scorer's battle weights by cross-entropy between the visit distribution
   and ``softmax(features @ w / temp)`` (the prior the search uses), over every round's
   decisions so far, from the round's weights, with an L2 pull towards them;
3. **check**: the new scorer inside the search and the old one play the same
   ``--eval-games`` held-back training deals (seeds 21,000,000 and up); the round's winner
   is the next round's scorer.

A run folder holds ``round_K/{data.npz, policy.json, summary.json}``: a round with a summary
is done, so a killed run resumes at the first round without one (its half-played games are
replayed: a round's games depend only on their seeds). Recycle and Royal Assault weights are
kept as they are.

    python -m castle_envs.experiments.exit_siege --out runs/exit_siege --rounds 3 --games 100
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from castle_envs.agents.castle_siege_ismcts import ISMCTSPolicy
from castle_envs.agents.castle_siege_linear import BATTLE_FEATURES, LinearPolicy, battle_features
from castle_envs.agents.registry import shipped_models_dir
from castle_envs.castle_siege.rules import BATTLE, State
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

TRAIN_SEEDS = 20_000_000
CHECK_SEEDS = 21_000_000


def play(policy: ISMCTSPolicy, seed: int, difficulty: str, record: list | None) -> bool:
    """One game on deal ``seed``; with ``record``, append (features, visits) per searched
    battle decision."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    rng = np.random.default_rng([seed, 0])
    while not state.outcome:
        view = state.player_view()
        action = policy(view, rng)
        if record is not None and policy.searched and view.phase == BATTLE:
            actions, feats = battle_features(view)
            visits = np.zeros(len(actions))
            where = {int(a): i for i, a in enumerate(actions)}
            for a, n, _, _ in policy.root_stats():
                if a in where:
                    visits[where[a]] += n
            if visits.sum() > 0:
                record.append((feats.astype(np.float32), visits.astype(np.float32)))
        state.apply_action(action)
    return state.outcome == 1


def fit(data: list, w0: np.ndarray, temp: float, l2: float = 1e-3, steps: int = 300,
        lr: float = 0.05) -> tuple[np.ndarray, float, float]:
    """Battle weights minimising mean cross-entropy(visits, softmax(F w / temp)) + l2 |w-w0|^2
    (Adam, full batch). Returns (w, loss at w0, loss at w)."""
    feats = [f for f, _ in data]
    targets = [v / v.sum() for _, v in data]
    sizes = np.array([len(f) for f in feats])
    F = np.concatenate(feats).astype(np.float64)
    P = np.concatenate(targets).astype(np.float64)
    seg = np.repeat(np.arange(len(feats)), sizes)
    scale = F.std(axis=0) + 1e-6      # steps in standardized units

    def loss_grad(w):
        z = F @ w / temp
        zmax = np.full(len(feats), -np.inf)
        np.maximum.at(zmax, seg, z)
        e = np.exp(z - zmax[seg])
        tot = np.bincount(seg, e, minlength=len(feats))
        q = e / tot[seg]
        logq = z - zmax[seg] - np.log(tot[seg])
        loss = -(P * logq).sum() / len(feats) + l2 * ((w - w0) ** 2).sum()
        grad = F.T @ (q - P) / temp / len(feats) + 2 * l2 * (w - w0)
        return loss, grad

    w = w0.copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    start, _ = loss_grad(w0)
    for t in range(1, steps + 1):
        _, g = loss_grad(w)
        g = g * scale
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8) * scale
    end, _ = loss_grad(w)
    return w, float(start), float(end)


def with_battle(scorer: LinearPolicy, w: np.ndarray) -> LinearPolicy:
    weights = {k: dict(v) for k, v in scorer.weights.items()}
    weights["battle"] = {name: float(x) for name, x in zip(BATTLE_FEATURES, w)}
    return LinearPolicy(weights)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="runs/exit_siege")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--games", type=int, default=100, help="training games a round")
    p.add_argument("--eval-games", type=int, default=100, help="check games a round")
    p.add_argument("--difficulty", default="very_hard")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--temp", type=float, default=4.0)
    p.add_argument("--seed", type=int, default=TRAIN_SEEDS)
    p.add_argument("--init", default=str(shipped_models_dir() / "castle_siege_very_hard_linear"
                                         / "policy.json"))
    args = p.parse_args(argv)
    if args.seed < TRAIN_SEEDS:
        p.error(f"--seed must be at least {TRAIN_SEEDS:,}: lower seeds are evaluation deals")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(vars(args), indent=1) + "\n")
    scorer = LinearPolicy.load(args.init)
    data: list = []
    for k in range(args.rounds):
        folder = out / f"round_{k}"
        folder.mkdir(exist_ok=True)
        if (folder / "summary.json").exists():     # done: reload its data and choice
            saved = np.load(folder / "data.npz")
            data += _unpack(saved)
            scorer = LinearPolicy.load(folder / "policy.json")
            print(f"round {k}: done (resumed)", flush=True)
            continue
        start, cpu = time.time(), time.process_time()
        search = ISMCTSPolicy(scorer, iterations=args.iterations, temp=args.temp)
        record: list = []
        wins = sum(play(search, args.seed + k * args.games + i, args.difficulty, record)
                   for i in range(args.games))
        np.savez_compressed(folder / "data.npz", **_pack(record))
        data += record
        w, before, after = fit(data, scorer.battle.copy(), args.temp)
        candidate = with_battle(scorer, w)
        old = ISMCTSPolicy(scorer, iterations=args.iterations, temp=args.temp)
        new = ISMCTSPolicy(candidate, iterations=args.iterations, temp=args.temp)
        seeds = [CHECK_SEEDS + k * args.eval_games + i for i in range(args.eval_games)]
        old_w = np.array([play(old, s, args.difficulty, None) for s in seeds], float)
        new_w = np.array([play(new, s, args.difficulty, None) for s in seeds], float)
        diff = paired_proportion_difference(new_w, old_w)
        keep = diff["mean"] > 0
        if keep:
            scorer = candidate
        scorer.save(folder / "policy.json")
        summary = {"round": k, "train_games": args.games, "train_wins": int(wins),
                   "decisions": len(record), "all_decisions": len(data),
                   "loss_before": before, "loss_after": after,
                   "check_seeds": [seeds[0], seeds[-1]],
                   "check_old": _rate(old_w), "check_new": _rate(new_w), "paired": diff,
                   "kept_new": bool(keep), "wall_s": time.time() - start,
                   "cpu_s": time.process_time() - cpu,
                   "battle_weights": dict(zip(BATTLE_FEATURES, map(float, scorer.battle)))}
        (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        print(f"round {k}: train {wins}/{args.games}, loss {before:.4f} -> {after:.4f}, "
              f"check old {int(old_w.sum())} new {int(new_w.sum())} of {len(seeds)}, "
              f"{'kept' if keep else 'dropped'} ({summary['cpu_s']:.0f} CPU-s)", flush=True)


def _rate(wins: np.ndarray) -> dict:
    low, high = wilson_interval(int(wins.sum()), len(wins))
    return {"wins": int(wins.sum()), "games": len(wins), "low": low, "high": high}


def _pack(record: list) -> dict:
    sizes = np.array([len(f) for f, _ in record], np.int64)
    if not record:
        return {"sizes": sizes, "feats": np.zeros((0, len(BATTLE_FEATURES)), np.float32),
                "visits": np.zeros(0, np.float32)}
    return {"sizes": sizes, "feats": np.concatenate([f for f, _ in record]),
            "visits": np.concatenate([v for _, v in record])}


def _unpack(saved) -> list:
    ends = np.cumsum(saved["sizes"])
    starts = ends - saved["sizes"]
    return [(saved["feats"][a:b], saved["visits"][a:b]) for a, b in zip(starts, ends)]


if __name__ == "__main__":
    main()
