"""``castle-envs bench [GAME]``: steps per second of uniform random masked play.

Two figures per game: the rules core alone (``state.legal_action_mask()`` +
``state.apply_action``), and through the public env API (``gymnasium.make`` with the mask
from ``info``; PettingZoo ``agent_iter`` with the mask from ``observe``). The mask is
computed every step, as an agent needs it.
"""
from __future__ import annotations

import json
import time

import numpy as np

from castle_envs.registry import GAMES, get_game

from .common import game_and_variant


def add_parser(sub):
    p = sub.add_parser("bench", help="measure random-play steps per second")
    p.add_argument("game", nargs="?", help=f"one of {', '.join(GAMES)} (default: all)")
    p.add_argument("--difficulty")
    p.add_argument("--level")
    p.add_argument("--players", type=int)
    p.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=run)


def bench_core(make_state, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = make_state(rng)
        while not state.is_terminal():
            legal = np.flatnonzero(state.legal_action_mask())
            state.apply_action(legal[rng.integers(len(legal))])
            steps += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {"steps": steps, "games": games, "seconds": elapsed, "steps_per_s": steps / elapsed}


def bench_gym(env, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    obs, info = env.reset(seed=seed)
    while True:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(legal[rng.integers(len(legal))])
        steps += 1
        if terminated or truncated:
            games += 1
            if time.perf_counter() >= deadline:
                break
            obs, info = env.reset()
    elapsed = time.perf_counter() - start
    return {"steps": steps, "games": games, "seconds": elapsed, "steps_per_s": steps / elapsed}


def bench_aec(env, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.reset(seed=seed + games)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {"steps": steps, "games": games, "seconds": elapsed, "steps_per_s": steps / elapsed}


def bench_game(spec, variant: dict, seconds: float, seed: int) -> dict:
    import gymnasium

    import castle_envs  # noqa: F401  (registers the Gymnasium ids)

    env = spec.make(**variant)
    result = {"game": spec.slug, **{k: v for k, v in variant.items()}}
    result["core"] = bench_core(lambda rng: env._new_state(rng, {}), seconds, seed)
    if spec.api == "gymnasium":
        result["env"] = bench_gym(gymnasium.make(spec.gym_id, **variant), seconds, seed)
    else:
        result["env"] = bench_aec(env, seconds, seed)
    result["env_over_core"] = result["env"]["steps_per_s"] / result["core"]["steps_per_s"]
    return result


def run(args) -> int:
    if args.game is None:
        if args.difficulty or args.level or args.players:
            raise ValueError("a variant flag needs a game name")
        jobs = [(spec, {spec.variant_arg: spec.variants[0]}) for spec in GAMES.values()]
    else:
        jobs = [game_and_variant(args)]
    results = []
    for spec, variant in jobs:
        try:
            results.append(bench_game(spec, variant, args.seconds, args.seed))
        except ImportError as err:
            if args.game is not None:
                raise ValueError(f"{spec.slug} is not available: {err}") from None
            print(f"(skipping {spec.slug}: {err})")
            continue
        if not args.json:
            r = results[-1]
            label = f"{spec.slug} {list(variant.values())[0]}"
            print(f"{label:<26} core {r['core']['steps_per_s']:>10,.0f} steps/s   "
                  f"env {r['env']['steps_per_s']:>10,.0f} steps/s   "
                  f"({r['core']['games']} games core, {r['env']['games']} env)")
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


__all__ = ["bench_core", "bench_gym", "bench_aec", "bench_game", "get_game"]
