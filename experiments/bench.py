"""``castle-envs bench [GAME]``: steps per second of uniform random masked play.

Two figures per game: the rules core alone (``state.legal_action_mask()`` +
``state.apply_action``), and through the public env API (``gymnasium.make`` with the mask
from ``info``; PettingZoo ``agent_iter`` with the mask from ``observe``). The mask is
computed every step, as an agent needs it.

Games with a batched env (``castle_envs.make_vec``) also get the compiled single env's figure
(``castle_envs.registry.make_single``, the same kernels one game at a time) and batched figures at several
batch sizes (``--batch-sizes``): env steps per second counted across the batch, each step
returning observations, masks, rewards and autoreset, with actions drawn uniformly from the
masks by the compiled sampler (Castle Siege: ``sample_counted``, which finds the drawn
action from the per-row legal counts the step kernel leaves, instead of counting the whole
mask); memory per env; the first call's time (compilation, or loading numba's cache) and
whether the cache was hit. ``--parallel on`` steps (and samples) each batch split into
contiguous row ranges on ``--threads`` Python threads (default: one per available core, as
long as each gets 256 envs; the kernels release the GIL, no numba threading layer);
``--parallel both`` gives each batch size on one thread and threaded, labelled ("one
thread", "2 threads"). PettingZoo's ``connect_four_v3`` is measured the same way as the
AEC games for a side-by-side ratio when it can be imported. Castle Siege also gets its
solver timed on the same deals (``--solver-deals``, ``castle-envs solve --compare``):
depth-first search only, nodes per second and its verdicts.
Every figure is also given per CPU-second of this process (``steps_per_cpu_s``, all its
threads together), which stays meaningful on a machine shared with other jobs; for a threaded
run it is the work per core-second, not the speed. The load average (``os.getloadavg``) at the
start of each batched measurement is reported beside it.
"""

from __future__ import annotations

import json
import time

import numpy as np

from castle_envs.registry import GAMES, get_game

from .common import game_and_variant, positive_float, positive_int, positive_int_list


def add_parser(sub):
    p = sub.add_parser("bench", help="measure random-play steps per second")
    p.add_argument("game", nargs="?", help=f"one of {', '.join(GAMES)} (default: all)")
    p.add_argument("--difficulty")
    p.add_argument("--level")
    p.add_argument("--players", type=int)
    p.add_argument("--seconds", type=positive_float, default=3.0, help="time per measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--batch-sizes",
        type=positive_int_list,
        default="1,64,1024,4096",
        help="batched env sizes, comma-separated ('' to skip the batched figures)",
    )
    p.add_argument(
        "--parallel",
        nargs="?",
        const="on",
        default="off",
        choices=["off", "on", "both"],
        help="batched env split over --threads Python threads: off (default, one "
        "thread), on (--parallel alone), or both, each figure labelled",
    )
    p.add_argument(
        "--threads",
        type=positive_int,
        help="threads for --parallel on/both (default: one per available core, "
        "as long as each gets 256 envs; fewer envs run on one thread)",
    )
    p.add_argument("--no-peer", action="store_true", help="skip PettingZoo's connect_four")
    p.add_argument(
        "--solver-deals",
        type=int,
        default=10,
        help="Castle Siege: deals on which the solver is timed (0: skip)",
    )
    p.add_argument(
        "--solver-nodes",
        type=positive_int,
        default=20_000,
        help="Castle Siege: node budget per deal for the solver timing",
    )
    p.add_argument(
        "--learners",
        action="store_true",
        help="training steps per second of the move-feature PPO (algo: move_ppo) "
        "beside MaskablePPO's (algo: maskable_ppo), same machine, same run: "
        "Castle Siege, Castellion or Castle Rooms (needs the train extra)",
    )
    p.add_argument(
        "--learner-steps",
        type=positive_int,
        default=16_384,
        help="env steps each learner trains for in --learners",
    )
    p.set_defaults(run=run)


class _Clock:
    """Wall and CPU time of one measurement, with its deadline."""

    def __init__(self, seconds: float):
        self.start, self.cpu_start = time.perf_counter(), time.process_time()
        self.deadline = self.start + seconds

    def expired(self) -> bool:
        return time.perf_counter() >= self.deadline

    def result(self, steps: int, games: int) -> dict:
        elapsed = time.perf_counter() - self.start
        cpu = time.process_time() - self.cpu_start
        return {
            "steps": steps,
            "games": games,
            "seconds": elapsed,
            "steps_per_s": steps / elapsed,
            "steps_per_cpu_s": steps / max(cpu, 1e-9),
        }


def bench_core(make_state, seconds: float, seed: int) -> dict:
    """Random games on the rules core; a first game, untimed, loads (or compiles) the
    compiled rules of the games whose State is a view over a kernel."""
    rng = np.random.default_rng(seed)
    _random_game(make_state(np.random.default_rng(seed)), np.random.default_rng(seed))
    steps = games = 0
    clock = _Clock(seconds)
    while True:
        steps += _random_game(make_state(rng), rng)
        games += 1
        if clock.expired():
            break
    return clock.result(steps, games)


def _random_game(state, rng) -> int:
    """Play ``state`` to its end with uniform random legal moves; the number of moves."""
    steps = 0
    while not state.is_terminal():
        legal = np.flatnonzero(state.legal_action_mask())
        state.apply_action(legal[rng.integers(len(legal))])
        steps += 1
    return steps


def bench_gym(env, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = games = 0
    clock = _Clock(seconds)
    obs, info = env.reset(seed=seed)
    while True:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(legal[rng.integers(len(legal))])
        steps += 1
        if terminated or truncated:
            games += 1
            if clock.expired():
                break
            obs, info = env.reset()
    return clock.result(steps, games)


def bench_aec(env, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = games = 0
    clock = _Clock(seconds)
    while True:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
        if clock.expired():
            break
    return clock.result(steps, games)


def bench_batched(
    slug: str,
    variant: dict,
    num_envs: int,
    seconds: float,
    seed: int,
    parallel: bool = False,
    threads: int | None = None,
) -> dict:
    """Random masked play on the batched env; steps are counted across the batch.
    ``parallel``/``threads``: the env's keywords (the batch split into row ranges stepped on
    that many threads); the actions are drawn on the same threads, each its own rows."""
    import os

    import castle_envs
    from castle_envs.castle_siege import kernel as siege_kernel

    start = time.perf_counter()
    envs = castle_envs.make_vec(
        slug,
        num_envs,
        copy=False,
        parallel=parallel,
        threads=threads if parallel else None,
        **variant,
    )
    envs.reset(seed=seed)
    actions = np.zeros(num_envs, np.int64)
    kernels = getattr(envs, "kernel", siege_kernel)  # the env's kernel module

    def sample():
        # the env's own draw: on its threads, each range its own rows
        envs.sample_actions(actions)

    sample()
    envs.step(actions)
    first_call = time.perf_counter() - start
    stats = getattr(kernels.step_rows, "stats", None)
    steps = games = 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    clock = _Clock(seconds)
    while True:
        sample()
        _, _, terminated, truncated, _ = envs.step(actions)
        steps += num_envs
        games += int(np.count_nonzero(terminated | truncated))
        if clock.expired():
            break
    result = clock.result(steps, games)
    buffers = [v for v in vars(envs).values() if isinstance(v, np.ndarray)]
    memory = sum(b.nbytes for b in buffers if b.base is None)
    envs.close()
    return {
        "num_envs": num_envs,
        **result,
        "bytes_per_env": memory / num_envs,
        "first_call_s": first_call,
        "parallel": envs.threads > 1,
        "threads": envs.threads,
        "load_average": load,
        "numba_cache_hits": sum(stats.cache_hits.values()) if stats else None,
    }


def bench_peer(seconds: float, seed: int) -> dict:
    """PettingZoo's connect_four_v3 through the same AEC loop; ``{"error": ...}`` if it
    cannot import."""
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError as err:
        return {"error": f"{type(err).__name__}: {err}"}
    return bench_aec(connect_four_v3.env(), seconds, seed)


def bench_game(spec, variant: dict, seconds: float, seed: int) -> dict:
    import gymnasium

    import castle_envs  # noqa: F401  (registers the Gymnasium ids)

    env = spec.make(**variant)
    result = {"game": spec.slug, **{k: v for k, v in variant.items()}}
    result["core"] = bench_core(lambda rng: env.new_state(rng, {}), seconds, seed)
    if spec.solitaire:
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
        bench_game_extras(args, spec, variant, results[-1])
    if args.learners:
        results.append(bench_learner_row(args, jobs))
    if not args.no_peer and results:
        peer = bench_peer(args.seconds, args.seed)
        results.append({"game": "pettingzoo connect_four_v3", "env": peer})
        if not args.json:
            print_peer(peer, results[:-1])
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def bench_game_extras(args, spec, variant: dict, r: dict) -> None:
    """After one game's core and env rates (``r``, printed here): its compiled and batched
    envs and its solvers, where it has them and the flags ask for them."""
    label = f"{spec.slug} {list(variant.values())[0]}"
    if not args.json:
        print(
            f"{label:<26} core {r['core']['steps_per_s']:>10,.0f} steps/s   "
            f"env {r['env']['steps_per_s']:>10,.0f} steps/s   "
            f"({r['core']['games']} games core, {r['env']['games']} env; per CPU-second: "
            f"core {r['core']['steps_per_cpu_s']:,.0f}, env {r['env']['steps_per_cpu_s']:,.0f})"
        )
    if spec.slug in _vector_games() and args.batch_sizes:
        bench_compiled_single(args, spec, variant, r)
        bench_batched_sizes(args, spec, variant, r)
    if spec.slug in SOLVER_BENCHES and args.solver_deals > 0:
        r["solvers"] = SOLVER_BENCHES[spec.slug](
            variant[spec.variant_arg],
            args.seed,
            args.solver_deals,
            args.solver_nodes,
            quiet=args.json,
        )


def bench_compiled_single(args, spec, variant: dict, r: dict) -> None:
    """The compiled single env (``make_single``) into ``r["env_compiled"]``."""
    from castle_envs.registry import make_single

    compiled = make_single(spec.slug, **variant)
    _, info = compiled.reset(seed=args.seed)  # compiles, or loads numba's cache
    compiled.step(int(np.flatnonzero(info["action_mask"])[0]))
    r["env_compiled"] = bench_gym(compiled, args.seconds, args.seed)
    if not args.json:
        print(
            f"{'':<26} compiled single env (make_single) "
            f"{r['env_compiled']['steps_per_s']:>10,.0f} steps/s   "
            f"({r['env_compiled']['steps_per_cpu_s']:,.0f} per CPU-second)"
        )


def bench_batched_sizes(args, spec, variant: dict, r: dict) -> None:
    """The batched env at each ``--batch-sizes`` size, one thread and/or threaded
    (``--parallel``), into ``r["batched"]``."""
    from castle_envs.core.threads import resolve_threads

    r["batched"] = []
    settings = {"off": [False], "on": [True], "both": [False, True]}[args.parallel]
    for n in args.batch_sizes:
        for parallel in settings:
            if parallel and False in settings and resolve_threads(True, args.threads, n) == 1:
                if not args.json:
                    print(f"{'':<26} batched x{n:<5} (threaded: one thread at this size)")
                continue
            b = bench_batched(
                spec.slug, variant, n, args.seconds, args.seed, parallel, args.threads
            )
            r["batched"].append(b)
            if not args.json:
                print_batched(n, b)


def print_batched(n: int, b: dict) -> None:
    label = "one thread" if b["threads"] == 1 else f"{b['threads']} threads"
    load = "" if b["load_average"] is None else f"   load average {b['load_average']:.2f}"
    print(
        f"{'':<26} batched x{n:<5} {label:<11} "
        f"{b['steps_per_s']:>12,.0f} steps/s   "
        f"({b['steps_per_cpu_s']:,.0f} per CPU-second)   "
        f"{b['bytes_per_env'] / 1024:.1f} KiB/env   first call "
        f"{b['first_call_s']:.2f} s (numba cache hits: "
        f"{b['numba_cache_hits']}){load}"
    )


def bench_learner_row(args, jobs: list) -> dict:
    """``--learners``: the learners of the game (Castle Siege when no game is named)."""
    game = jobs[0][0].slug if args.game is not None else "castle-siege"
    if game not in LEARNER_CONFIGS:
        raise ValueError(
            f"--learners measures the learners of {', '.join(LEARNER_CONFIGS)}; not {game}"
        )
    difficulty = jobs[0][1].get("difficulty", "very_hard") if args.game else "very_hard"
    learners = bench_learners(difficulty, args.learner_steps, quiet=args.json, game=game)
    return {"game": game, "learners": learners}


def print_peer(peer: dict, results: list[dict]) -> None:
    """PettingZoo's connect_four_v3 rate and each game's rates over it."""
    if "error" in peer:
        print(f"(PettingZoo connect_four_v3 not measured: {peer['error']})")
        return
    print(
        f"{'pettingzoo connect_four_v3':<26} {'':>26}env {peer['steps_per_s']:>10,.0f}"
        f" steps/s   ({peer['games']} games)"
    )
    for r in results:
        if "env" not in r:
            continue  # a row of learners: no env to compare
        compiled = r.get("env_compiled")
        print(
            f"  {r['game']}: env / connect_four = "
            f"{r['env']['steps_per_s'] / peer['steps_per_s']:.2f}"
            + (
                f", compiled single env / connect_four = "
                f"{compiled['steps_per_s'] / peer['steps_per_s']:.2f}"
                if compiled
                else ""
            )
            + "".join(
                f", batched x{b['num_envs']}"
                + (f" {b['threads']} threads" if b.get("threads", 1) > 1 else "")
                + f" / connect_four = {b['steps_per_s'] / peer['steps_per_s']:.1f}"
                for b in r.get("batched", [])
            )
        )


#: the learners --learners trains, each with its shipped config's network and PPO settings
LEARNER_CONFIGS = {
    "castle-siege": {
        "move_ppo": "configs/castle_siege/hard_move_ppo.yaml",
        "maskable_ppo": "configs/castle_siege/very_hard.yaml",
    },
    "castellion": {
        "move_ppo": "configs/castellion/move_ppo.yaml",
        "maskable_ppo": "configs/castellion/academy.yaml",
    },
    "castle-rooms": {
        "move_ppo": "configs/castle_rooms/2p_move_ppo.yaml",
        "maskable_ppo": "configs/castle_rooms/2p.yaml",
    },
}


def bench_learners(
    difficulty: str, steps: int, quiet: bool = False, game: str = "castle-siege"
) -> dict:
    """Env steps per second while training (rollouts and updates together), each learner
    of ``game`` for about ``steps`` env steps (Castle Siege on ``difficulty``), one after the
    other in this process, evaluation, checkpoints and warm starts off; run folders in a
    temporary directory. A multi-player move_ppo update is whole games: at least one."""
    import os
    import tempfile

    from .config import load_config

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for algo, path in LEARNER_CONFIGS[game].items():
            overrides = [
                f"total_timesteps={steps}",
                "eval.every_steps=1000000000",
                "checkpoint.every_steps=1000000000",
                "eval.episodes=1",
                "torch_threads=1",
            ]
            spec = get_game(game)
            if difficulty in spec.variants:  # Castle Siege's difficulty
                overrides.append(f"variant.{spec.variant_arg}={difficulty}")
            if algo == "move_ppo":
                overrides.append("pretrain.agent=''")
                overrides.append("pretrain.dagger=0")
            config = load_config(path, overrides)
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
            cpu0, wall0 = time.process_time(), time.perf_counter()
            if algo == "move_ppo" and not get_game(game).solitaire:
                from .train_moves_aec import run_training as run_aec

                summary = run_aec(config, run_dir=os.path.join(tmp, algo))
                detail = {"n_envs": config.n_envs, "env": "whole self-play games, Python move view"}
            elif algo == "move_ppo":
                from .train_moves import run_training

                summary = run_training(config, run_dir=os.path.join(tmp, algo))
                detail = {"n_envs": config.n_envs, "env": "batched move view"}
            else:
                from .train import train

                summary = train(config, run_dir=os.path.join(tmp, algo), progress_bar=False)
                detail = {
                    "n_envs": config.n_envs,
                    "env": f"{config.vec_env} vec env of Python envs",
                }
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            n = int(summary["num_timesteps"])
            out[algo] = {
                "steps": n,
                "seconds": wall,
                "steps_per_s": n / wall,
                "steps_per_cpu_s": n / max(cpu, 1e-9),
                "load_average": load,
                "config": path,
                **detail,
            }
            if not quiet:
                r = out[algo]
                print(
                    f"learner {algo:<13} {r['steps_per_s']:>10,.0f} env steps/s while "
                    f"training ({r['steps_per_cpu_s']:,.0f} per CPU-second; {n} steps, "
                    f"{r['n_envs']} envs, {r['env']}, {path}, load average "
                    f"{load if load is None else round(load, 2)})"
                )
    return out


def bench_solvers(difficulty: str, seed: int, deals: int, nodes: int, quiet: bool) -> dict:
    """The Castle Siege solver on some deals (``solve --compare``)."""
    import io

    from castle_envs.core.jit import HAVE_NUMBA

    from .solve import compare_solvers

    if not HAVE_NUMBA:
        if not quiet:
            print("(solver timing skipped: the compiled solver needs numba)")
        return {"error": "numba is not installed"}
    text = io.StringIO()
    report = compare_solvers(
        difficulty, seed, deals, nodes, {"attack": "any", "defeated": "discard"}, text
    )
    if not quiet:
        for line in text.getvalue().splitlines():
            print(f"{'':<26} solver: {line.strip()}")
    return report


#: the solver rows of a game's bench (``--solver-deals``): Castle Siege's solver timed
SOLVER_BENCHES = {"castle-siege": bench_solvers}


def _vector_games():
    from castle_envs.registry import VECTOR_GAMES

    return VECTOR_GAMES


__all__ = [
    "bench_core",
    "bench_gym",
    "bench_aec",
    "bench_game",
    "bench_batched",
    "bench_peer",
    "get_game",
]
