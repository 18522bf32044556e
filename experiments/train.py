"""``castle-envs train --config configs/castle_siege/very_hard.yaml``: MaskablePPO on any game.

Read top to bottom: the config (``experiments/config.py``) names the game, its variant and
the PPO settings; ``make_vec_env`` builds masked envs (multi-player games become one seat
against opponents through ``castle_envs.wrappers.SingleAgentEnv``); the callbacks log win
rates to TensorBoard, evaluate on held-out seeds, follow the curriculum, grow the self-play
pool and checkpoint; ``--resume RUN_DIR`` continues from the last checkpoint with the saved
config. Everything a run needs to be repeated is written to its run folder:
``config.yaml`` (resolved), ``progress.json``, ``eval.csv``, ``checkpoints/latest/``, ``tb/``,
``best_model/`` and ``final_model/`` (model directories: ``--agent model:RUN/final_model``),
``summary.json``.

Nothing here unpickles: checkpoints and models are tensors read with
``torch.load(weights_only=True)`` plus JSON (``castle_envs.agents.learned.saved``), so resuming or
evaluating a run folder someone handed you runs no code from it.

Interrupts (Ctrl-C, or SIGTERM as ``timeout``, Docker and Kubernetes send) checkpoint and
exit. A checkpoint is taken between rollouts, so it counts exactly the steps trained on;
one taken by an interrupt in the middle of a rollout drops that rollout's unfinished steps
(resume collects them again). It also keeps the wall time so far and the random streams of
the training envs and of the policy, which resume continues instead of reseeding.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import signal
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from castle_envs.registry import get_game, load

from .algorithms import ALGORITHMS
from .config import TrainConfig, load_config
from .run_folder import RunFolder
from .stats import win_record


def add_parser(sub):
    p = sub.add_parser(
        "train", help="train from a YAML config (MaskablePPO; algo: cem, move_ppo or exit_siege)"
    )
    p.add_argument("--config", help="YAML config (see configs/)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last checkpoint")
    p.add_argument(
        "--run-dir",
        help="where to write the run: a new or empty folder (default runs/NAME_TIMESTAMP)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set ppo.n_steps=128",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def _report(summary: dict, done: str, keys: tuple) -> int:
    """The exit of a trainer (``ALGORITHMS``): an interrupted run says where it
    stopped and how to resume it (exit status 130), a finished one prints ``keys`` of its
    summary."""
    if summary.get("interrupted"):
        print(
            f"interrupted: checkpointed after {done}; "
            f"continue with castle-envs train --resume {summary['run_dir']}"
        )
        return 130
    print(json.dumps({k: summary.get(k) for k in keys}, indent=2))
    return 0


def run(args) -> int:
    # progress bars only on a terminal: in logs and CI they are carriage-return noise
    args.no_progress = args.no_progress or not sys.stderr.isatty()
    if bool(args.config) == bool(args.resume):
        raise ValueError("give exactly one of --config or --resume")
    if args.resume and not (Path(args.resume) / RunFolder.CONFIG).is_file():
        from .exit_siege import OLD_CONFIG, open_run

        if (Path(args.resume) / OLD_CONFIG).is_file():  # a rounds folder from before the harness
            open_run(args.resume)  # writes its config.yaml
    config = (
        RunFolder.open(args.resume).config
        if args.resume
        else load_config(args.config, args.overrides)
    )
    algorithm = ALGORITHMS[config.algo]
    summary = load(algorithm.run)(config, args)
    return _report(summary, algorithm.done(summary), algorithm.keys)


def _progress_bar(args) -> bool:
    return not getattr(args, "no_progress", False)


def run_maskable_ppo(config: TrainConfig, args) -> dict:
    """``algo: maskable_ppo``: MaskablePPO over the game's flat action space (``train``)."""
    if args.resume:
        return train(resume=args.resume, progress_bar=_progress_bar(args))
    return train(config, run_dir=args.run_dir, progress_bar=_progress_bar(args))


def run_cem(config: TrainConfig, args) -> dict:
    """``algo: cem``: the cross-entropy method on the Castle Siege linear scorer."""
    from . import train_cem

    return train_cem.run_training(
        config, run_dir=args.run_dir, resume=args.resume, progress_bar=_progress_bar(args)
    )


def run_move_ppo(config: TrainConfig, args) -> dict:
    """``algo: move_ppo``: PPO over move features, ``train_moves`` (solitaire games) or
    ``train_moves_aec``."""
    from . import train_moves, train_moves_aec

    module = train_moves if get_game(config.game).solitaire else train_moves_aec
    return module.run_training(
        None if args.resume else config, run_dir=args.run_dir, resume=args.resume
    )


def run_exit_siege(config: TrainConfig, args) -> dict:
    """``algo: exit_siege``: Castle Siege's expert iteration."""
    from . import exit_siege

    return exit_siege.run_training(
        None if args.resume else config, run_dir=args.run_dir, resume=args.resume
    )


# --- environments --------------------------------------------------------------------------
#: training deals start here, far above the study and evaluation deals (seeds below 2,000,000)
TRAIN_SEED_BASE = 20_000_000


class _IgnoreInterrupts:
    """An env factory for ``SubprocVecEnv`` whose worker ignores Ctrl-C: the terminal sends
    SIGINT to the whole process group, and a worker that died of it would leave the main
    process's checkpoint and ``close`` to fail with EOFError/BrokenPipeError."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return self.fn()


class VariantSwitch(gym.Wrapper):
    """Lets a curriculum change the variant (difficulty, level) used from the next reset."""

    def set_variant(self, key: str, value) -> None:
        setattr(self.env.unwrapped, key, value)


def make_opponents(config: TrainConfig, pool: list | None = None):
    """Policies for the other seats: the configured agents, mixed with self-play snapshots."""
    fixed = [_agent_policy(spec, config) for spec in config.opponents]
    share = config.self_play.fixed_opponent_share
    if not config.self_play.enabled:
        return fixed

    def draw(rng: np.random.Generator):
        if not pool or rng.random() < share:
            return fixed
        return [pool[int(rng.integers(len(pool)))]]

    return draw


def _agent_policy(spec: str, config: TrainConfig):
    """An opponent from an agent spec (``random``, ``heuristic``, ...) via ``agents``."""
    try:
        from castle_envs.agents import make_agent
    except ImportError:
        make_agent = None  # type: ignore[assignment]  # the agents do not import here
    if make_agent is None:
        if spec != "random":
            raise ValueError(
                f"opponent {spec!r} needs castle_envs.agents.make_agent, which is not available"
            )
        from castle_envs.agents.base import RandomAgent

        agent = RandomAgent(config.seed)
    else:
        agent = make_agent(spec, game=config.game, seed=config.seed)
    return _Bound(agent)


class _Bound:
    """An agent as a ``policy(obs, mask, state)`` callable."""

    def __init__(self, agent):
        self.agent = agent
        self.needs_state = getattr(agent, "needs_state", False)

    def __call__(self, obs, mask, state):
        return self.agent.act(obs, mask, state)


class PolicySnapshot:
    """A frozen copy of the learner's policy, playing as an opponent (self-play)."""

    needs_state = False

    def __init__(self, policy):
        self.policy = copy.deepcopy(policy)
        self.policy.set_training_mode(False)

    def __call__(self, obs, mask, state):
        action, _ = self.policy.predict(obs, action_masks=mask, deterministic=False)
        return int(action)


class PotentialShaping(gym.Wrapper):
    """Potential-based shaping (Ng, Harada and Russell 1999): adds ``gamma * phi(s') - phi(s)``
    to every reward, with ``phi = 0`` at the end of a game, which leaves the optimal policy
    unchanged while giving a signal on every move. Used for training only; evaluation reports
    the env's own reward."""

    def __init__(self, env, potential, gamma: float):
        super().__init__(env)
        self.potential, self.gamma = potential, gamma
        self._phi = 0.0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._phi = self.potential(self.env.unwrapped.state)  # type: ignore[attr-defined]
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        # (the game env's rules state: gymnasium's Env type does not name it)
        phi = 0.0 if terminated else self.potential(self.env.unwrapped.state)  # type: ignore[attr-defined]
        reward = float(reward) + self.gamma * phi - self._phi
        self._phi = phi
        return obs, reward, terminated, truncated, info


def heuristic_potential(game: str):
    """The game's heuristic position value (the agents' ``POTENTIALS``), scaled so one
    ordeal (the game's unit of progress) is worth about 1."""
    from castle_envs.agents.registry import heuristic_potential as potential

    value = potential(game)
    if value is None:
        raise ValueError(f"no heuristic potential for {game!r}")
    return value


def make_env(
    config: TrainConfig,
    rank: int,
    pool: list | None = None,
    variant: dict | None = None,
    shaped: bool = False,
):
    from stable_baselines3.common.monitor import Monitor

    spec = get_game(config.game)
    # masked training: an illegal action would be a bug, so it raises unless the config says
    # otherwise (the envs' own default, "penalty", is for pipelines without masks)
    kwargs = {"illegal_action": "raise", **config.env_kwargs, **(variant or config.variant)}
    if spec.solitaire:
        import castle_envs  # noqa: F401  (registers ids)

        env = gym.make(spec.gym_id, **kwargs)  # type: ignore[arg-type]  # set for gymnasium
    else:
        from castle_envs.wrappers import SingleAgentEnv

        env = SingleAgentEnv(spec.make(**kwargs), make_opponents(config, pool))
    if shaped and config.shaping:
        env = PotentialShaping(env, heuristic_potential(spec.slug), config.ppo.gamma)
    env = Monitor(VariantSwitch(env), info_keywords=("won",) if spec.solitaire else ())
    env.reset(seed=TRAIN_SEED_BASE + config.seed * 1000 + rank)
    return env


def make_vec_env(config: TrainConfig, pool: list | None = None):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [
        lambda rank=rank: make_env(config, rank, pool, shaped=True) for rank in range(config.n_envs)
    ]
    if config.vec_env == "subproc" and not config.self_play.enabled:
        return SubprocVecEnv([_IgnoreInterrupts(fn) for fn in fns])
    return DummyVecEnv(fns)  # type: ignore[arg-type]  # each fn's rank is a default argument


# --- evaluation ----------------------------------------------------------------------------------
def evaluate_model(
    model,
    config: TrainConfig,
    episodes: int,
    seed: int,
    variant: dict | None = None,
    deterministic: bool = True,
) -> dict:
    """Play ``episodes`` held-out games (env seeds ``seed``, ``seed+1``, ...) with masks."""
    env = make_env(config.replace(seed=0), 0, pool=None, variant=variant)
    wins, returns, lengths = 0, [], []
    for i in range(episodes):
        obs, info = env.reset(seed=seed + i)
        done, total, length = False, 0.0, 0
        while not done:
            action, _ = model.predict(
                obs, action_masks=info["action_mask"], deterministic=deterministic
            )
            obs, reward, terminated, truncated, info = env.step(int(action))
            total += reward
            length += 1
            done = terminated or truncated
        won = info.get("won", total > 0)
        wins += int(bool(won))
        returns.append(total)
        lengths.append(length)
    return {
        **win_record(wins, episodes, "ci95"),
        "mean_return": float(np.mean(returns)),
        "mean_length": float(np.mean(lengths)),
    }


# --- behaviour cloning warm start ----------------------------------------------------------------
def pretrain(model, config: TrainConfig) -> dict:
    """Fit the policy to a baseline agent's moves on ``pretrain.episodes`` deals (masked
    cross-entropy), so PPO starts from the baseline's play instead of from uniform."""
    import torch
    from castle_envs.agents import make_agent

    pre = config.pretrain
    agent = make_agent(pre.agent, game=config.game, seed=pre.seed)
    env = make_env(config.replace(seed=0), 0)
    observations, masks, actions, wins = [], [], [], 0
    for episode in range(pre.episodes):
        agent.reset(pre.seed + episode)
        obs, info = env.reset(seed=pre.seed + episode)
        done = False
        while not done:
            state = env.unwrapped.state.player_view() if agent.needs_state else None
            action = agent.act(obs, info["action_mask"], state)
            observations.append(obs)
            masks.append(info["action_mask"])
            actions.append(action)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += int(info.get("won", False))
    obs_t = torch.as_tensor(np.array(observations), dtype=torch.float32)
    mask_np = np.array(masks)
    act_t = torch.as_tensor(actions)
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=pre.learning_rate)
    rng = np.random.default_rng(pre.seed)
    n = len(actions)
    for _ in range(pre.epochs):
        order = rng.permutation(n)
        for start in range(0, n, pre.batch_size):
            idx = order[start : start + pre.batch_size]
            dist = policy.get_distribution(obs_t[idx], action_masks=mask_np[idx])
            loss = -dist.log_prob(act_t[idx]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        dist = policy.get_distribution(obs_t, action_masks=mask_np)
        agree = float((dist.distribution.probs.argmax(dim=1) == act_t).float().mean())
    return {
        "agent": pre.agent,
        "episodes": pre.episodes,
        "samples": n,
        "agent_win_rate": wins / pre.episodes,
        "final_loss": loss.item(),
        "policy_agrees_with_agent": agree,
    }


# --- callbacks ---------------------------------------------------------------------------------
def _callbacks(config: TrainConfig, folder: RunFolder, pool: list, progress: dict):
    from stable_baselines3.common.callbacks import BaseCallback

    class Training(BaseCallback):
        """Win rate of training episodes, curriculum, evaluation, self-play, checkpoints."""

        def _on_training_start(self):
            self._wins = []
            self._t0 = progress["_session_start"] = time.perf_counter()
            progress["_streams"] = _rng_states(self.training_env)
            self._steps0 = self.model.num_timesteps
            self._apply_stage()

        def _on_rollout_start(self):
            # every step collected so far has been trained on (PPO updates between
            # rollouts): the one point where a checkpoint's step count is exact
            steps = progress["num_timesteps"] = int(self.model.num_timesteps)
            # the envs' random streams as they stand between rollouts, kept for a checkpoint
            # an interrupt may take later (subprocess envs cannot be asked mid-step)
            progress["_streams"] = _rng_states(self.training_env)
            ckpt = config.checkpoint.every_steps
            if steps // ckpt > progress["checkpoints"]:
                progress["checkpoints"] = steps // ckpt
                save_checkpoint(self.model, folder, progress)

        def _stage(self, steps: int) -> dict | None:
            for stage in config.curriculum:
                if steps < stage["until_steps"]:
                    return stage["variant"]
            return None

        def _apply_stage(self):
            variant = self._stage(self.model.num_timesteps) or config.variant
            if variant != progress.get("variant"):
                key, value = next(iter(variant.items()))
                self.training_env.env_method("set_variant", key, value)
                progress["variant"] = variant
                self.logger.record("curriculum/stage", str(value))

        def _on_step(self) -> bool:
            steps = self.model.num_timesteps
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "episode" in info:
                    won = info.get("won", info["episode"]["r"] > 0)
                    self._wins.append(float(won))
            if len(self._wins) >= 20:
                self.logger.record("rollout/win_rate", float(np.mean(self._wins)))
                self._wins = []
            self._apply_stage()
            every = config.eval.every_steps
            if steps // every > progress["evals_done"]:
                progress["evals_done"] = steps // every
                self._evaluate(steps)
            if config.self_play.enabled:
                snap = config.self_play.snapshot_every
                if steps // snap > progress["snapshots"]:
                    progress["snapshots"] = steps // snap
                    pool.append(PolicySnapshot(self.model.policy))
                    del pool[: -config.self_play.pool_size]
            return True

        def _evaluate(self, steps: int):
            result = evaluate_model(self.model, config, config.eval.episodes, config.eval.seed)
            elapsed = time.perf_counter() - self._t0
            sps = (steps - self._steps0) / max(elapsed, 1e-9)
            for key in ("win_rate", "mean_return", "mean_length"):
                self.logger.record(f"eval/{key}", result[key])
            self.logger.record("time/steps_per_second", sps)
            row = {
                "timesteps": steps,
                "wall_seconds": progress["wall_before"] + elapsed,
                **{k: result[k] for k in ("win_rate", "mean_return", "mean_length")},
                "ci_low": result["ci95"][0],
                "ci_high": result["ci95"][1],
            }
            folder.append_eval(row)
            if result["win_rate"] > progress["best_win_rate"]:
                progress["best_win_rate"] = result["win_rate"]
                save_model(self.model, config, folder / "best_model")
            progress["last_eval"] = result

    return Training()


def save_model(model, config: TrainConfig, directory: str | Path) -> Path:
    """The policy as a safe model directory (``--agent model:DIR``); no optimizer state."""
    from castle_envs.agents.learned.saved import save_maskable_ppo

    return save_maskable_ppo(
        model.policy.state_dict(),
        directory,
        config.game,
        config.variant,
        config.env_kwargs,
        config.policy.net_arch,
        config.policy.activation,
    )


def export_model(run_dir: str | Path, target: str | Path) -> Path:
    """Ship a run's final policy (else its latest checkpoint) as a model directory."""
    from castle_envs.agents.learned.saved import load_tensors, save_maskable_ppo

    folder = RunFolder.open(run_dir)
    run_dir, config = folder.path, folder.config
    final = run_dir / "final_model"
    if (final / "model.json").is_file():
        source = final / "weights.pt"
    elif (run_dir / "checkpoints" / "latest" / "policy.pt").is_file():
        source = run_dir / "checkpoints" / "latest" / "policy.pt"
    else:
        raise FileNotFoundError(f"{run_dir} holds no final_model/ or checkpoint to export")
    return save_maskable_ppo(
        load_tensors(source),
        target,
        config.game,
        config.variant,
        config.env_kwargs,
        config.policy.net_arch,
        config.policy.activation,
    )


def _rng_states(env) -> list:
    return [g.bit_generator.state for g in env.get_attr("np_random")]


def save_checkpoint(model, folder: RunFolder, progress: dict) -> None:
    """Policy, optimizer and random streams as tensors and JSON (nothing to unpickle), with
    ``progress`` put in place whole by ``RunFolder.save_checkpoint``, then ``progress.json``.
    ``progress["num_timesteps"]`` must count the steps trained on (see ``_on_rollout_start``)."""
    import torch

    def write(tmp: Path) -> None:
        torch.save(model.policy.state_dict(), tmp / "policy.pt")
        torch.save(model.policy.optimizer.state_dict(), tmp / "optimizer.pt")
        torch.save({"torch": torch.get_rng_state()}, tmp / "rng.pt")
        streams = progress.get("_streams") or _rng_states(model.get_env())
        (tmp / "envs.json").write_text(json.dumps({"rng": streams}))

    if "_session_start" in progress:
        progress["wall_seconds"] = progress["wall_before"] + (
            time.perf_counter() - progress["_session_start"]
        )
    folder.save_checkpoint(write, progress)
    folder.write_progress(progress)


def load_checkpoint(model, run_dir: Path, progress: dict) -> None:
    """Restore what ``save_checkpoint`` wrote into a freshly built model and its envs."""
    import torch
    from castle_envs.agents.learned.model_files import load_optimizer, tensor_dict
    from castle_envs.agents.learned.saved import load_tensors

    from castle_envs.core.files import read_json

    ckpt = RunFolder(run_dir).latest_checkpoint()
    try:
        model.policy.load_state_dict(tensor_dict(ckpt / "policy.pt"))
    except (RuntimeError, KeyError, TypeError) as err:
        raise ValueError(
            f"{ckpt}: the checkpoint does not fit this run's config ({str(err).splitlines()[0]})"
        ) from None
    load_optimizer(model.policy.optimizer, ckpt / "optimizer.pt")
    rng = load_tensors(ckpt / "rng.pt")
    if not isinstance(rng, dict) or not isinstance(rng.get("torch"), torch.Tensor):
        raise ValueError(f"{ckpt}/rng.pt is not a castle-envs checkpoint")
    try:
        torch.set_rng_state(rng["torch"])
    except RuntimeError as err:
        raise ValueError(f"{ckpt}/rng.pt is not torch's random state ({err})") from None
    try:
        states = read_json(ckpt / "envs.json")["rng"]
        env = model.get_env()
        if len(states) != env.num_envs:
            raise ValueError(f"{len(states)} env streams for {env.num_envs} envs")
        for i, state in enumerate(states):
            gen = np.random.Generator(np.random.PCG64())
            gen.bit_generator.state = state
            env.set_attr("np_random", gen, indices=[i])
    except (KeyError, TypeError, ValueError, OSError) as err:
        raise ValueError(f"{ckpt}/envs.json is not a castle-envs checkpoint: {err}") from None
    model.num_timesteps = int(progress["num_timesteps"])


# --- the run -------------------------------------------------------------------------------------
def build_model(config: TrainConfig, env, run_dir: Path):
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config.policy.activation]
    return MaskablePPO(
        "MlpPolicy",
        env,
        seed=config.seed,
        device=config.device,
        verbose=0,
        tensorboard_log=str(run_dir / "tb"),
        policy_kwargs={"net_arch": list(config.policy.net_arch), "activation_fn": activation},
        **dataclasses.asdict(config.ppo),
    )


def _close_quietly(env, interrupted: bool) -> None:
    """Close the envs; after an interrupt, subprocess workers may still owe a step result,
    and a result larger than the pipe's buffer blocks its worker until it is read: so the
    workers are told to close and their pipes drained until they exit (at most a minute,
    then they are terminated), so that closing neither hangs nor fails on a broken pipe."""
    if interrupted and hasattr(env, "remotes") and not getattr(env, "closed", False):
        for remote in env.remotes:
            with contextlib.suppress(OSError):
                remote.send(("close", None))
        deadline = time.monotonic() + 60
        for remote, process in zip(env.remotes, env.processes):
            while process.is_alive() and time.monotonic() < deadline:
                with contextlib.suppress(EOFError, OSError):
                    while remote.poll(0.05):
                        remote.recv()
                process.join(0.05)
            if process.is_alive():
                process.terminate()
                process.join()
        env.closed = True
        return
    with contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):
        env.close()


def train(
    config: TrainConfig | None = None,
    run_dir: str | Path | None = None,
    resume: str | None = None,
    progress_bar: bool = True,
    stop_after: int | None = None,
) -> dict:
    """Run (or ``resume``) training; ``stop_after`` ends this session after that many steps,
    checkpointed, as an interruption would (tests use it to exercise ``resume``). An
    interrupt (Ctrl-C, SIGTERM) checkpoints and returns a summary with ``interrupted: True``."""
    if resume:
        folder = RunFolder.open(resume, algo="maskable_ppo")
        progress = folder.read_progress({"num_timesteps": int, "wall_before": float})
    else:
        if config is None:
            raise ValueError("give a config, or a run folder to resume")
        folder = RunFolder.create(config, run_dir)
        progress = {
            "num_timesteps": 0,
            "evals_done": 0,
            "checkpoints": 0,
            "snapshots": 0,
            "best_win_rate": -1.0,
            "wall_before": 0.0,
            "wall_seconds": 0.0,
            "variant": None,
        }
    config, run_dir = folder.config, folder.path
    import torch

    torch.set_num_threads(config.torch_threads)
    pool: list = []
    env = make_vec_env(config, pool)
    model = build_model(config, env, run_dir)
    if resume:
        load_checkpoint(model, run_dir, progress)
    elif config.pretrain.agent:
        progress["pretrain"] = pretrain(model, config)
        save_checkpoint(model, folder, progress)
    remaining = config.total_timesteps - model.num_timesteps
    if stop_after is not None:
        remaining = min(remaining, stop_after)
    callback = _callbacks(config, folder, pool, progress)
    guard = folder.interruptible()
    try:
        with guard:
            if remaining > 0:
                model.learn(
                    remaining,
                    callback=callback,
                    reset_num_timesteps=not resume,
                    tb_log_name="ppo",
                    progress_bar=progress_bar,
                )
            progress["num_timesteps"] = int(model.num_timesteps)  # the last rollout trained
    finally:
        save_checkpoint(model, folder, progress)  # an interrupted run resumes from here
        progress["wall_before"] = progress.get("wall_seconds", progress["wall_before"])
        folder.write_progress(progress)
        _close_quietly(env, guard.interrupted)
    interrupted = guard.interrupted
    summary = {
        "run_dir": str(run_dir),
        "num_timesteps": int(progress["num_timesteps"]),
        "wall_seconds": progress["wall_before"],
        "config": config.to_dict(),
    }
    if interrupted:
        return {**summary, "interrupted": True}
    summary["final_eval"] = evaluate_model(model, config, config.eval.episodes, config.eval.seed)
    save_model(model, config, run_dir / "final_model")
    folder.write_summary(summary)
    return summary
