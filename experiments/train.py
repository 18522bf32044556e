"""``castle-envs train --config configs/castle_siege/very_hard.yaml``: MaskablePPO on any game.

Read top to bottom: the config (``experiments/config.py``) names the game, its variant and
the PPO settings; ``make_vec_env`` builds masked envs (multi-player games become one seat
against opponents through ``castle_envs.wrappers.SingleAgentEnv``); the callbacks log win
rates to TensorBoard, evaluate on held-out seeds, follow the curriculum, grow the self-play
pool and checkpoint; ``--resume RUN_DIR`` continues from the last checkpoint with the saved
config. Everything a run needs to be repeated is written to its run folder:
``config.yaml`` (resolved), ``progress.json``, ``eval.csv``, ``checkpoints/``, ``tb/``,
``summary.json``.
"""
from __future__ import annotations

import copy
import csv
import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from castle_envs.registry import get_game

from .config import load_config, new_run_dir
from .stats import wilson_interval


def add_parser(sub):
    p = sub.add_parser("train", help="train from a YAML config (MaskablePPO, or algo: cem)")
    p.add_argument("--config", help="YAML config (see configs/)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last checkpoint")
    p.add_argument("--run-dir", help="where to write the run (default runs/NAME_TIMESTAMP)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override a config key, e.g. --set ppo.n_steps=128")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def run(args) -> int:
    if bool(args.config) == bool(args.resume):
        raise ValueError("give exactly one of --config or --resume")
    if args.resume and not (Path(args.resume) / "config.yaml").is_file():
        raise FileNotFoundError(f"{args.resume} has no config.yaml: not a run folder")
    config = load_config(Path(args.resume) / "config.yaml" if args.resume else args.config,
                         None if args.resume else args.overrides)
    if config["algo"] == "cem":
        from . import train_cem
        summary = train_cem.run_training(config, run_dir=args.run_dir, resume=args.resume,
                                         progress_bar=not args.no_progress)
        print(json.dumps({k: summary[k] for k in ("run_dir", "generations", "games", "steps",
                                                   "wall_seconds", "final_eval")}, indent=2))
        return 0
    if args.resume:
        summary = train(resume=args.resume, progress_bar=not args.no_progress)
    else:
        summary = train(config, run_dir=args.run_dir, progress_bar=not args.no_progress)
    print(json.dumps({k: summary[k] for k in ("run_dir", "num_timesteps", "final_eval",
                                               "wall_seconds")}, indent=2))
    return 0


# --- environments --------------------------------------------------------------------------
class VariantSwitch(gym.Wrapper):
    """Lets a curriculum change the variant (difficulty, level) used from the next reset."""

    def set_variant(self, key: str, value) -> None:
        setattr(self.env.unwrapped, key, value)


def make_opponents(config: dict, pool: list | None = None):
    """Policies for the other seats: the configured agents, mixed with self-play snapshots."""
    fixed = [_agent_policy(spec, config) for spec in config["opponents"]]
    share = config["self_play"]["fixed_opponent_share"]
    if not config["self_play"]["enabled"]:
        return fixed

    def draw(rng: np.random.Generator):
        if not pool or rng.random() < share:
            return fixed
        return [pool[int(rng.integers(len(pool)))]]
    return draw


def _agent_policy(spec: str, config: dict):
    """An opponent from an agent spec (``random``, ``heuristic``, ...) via ``agents``."""
    try:
        from castle_envs.agents import make_agent
    except ImportError:
        make_agent = None
    if make_agent is None:
        if spec != "random":
            raise ValueError(f"opponent {spec!r} needs castle_envs.agents.make_agent, which is not available")
        from castle_envs.agents.base import RandomAgent
        agent = RandomAgent(config["seed"])
    else:
        agent = make_agent(spec, game=config["game"], seed=config["seed"])
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
        self._phi = self.potential(self.env.unwrapped.state)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated else self.potential(self.env.unwrapped.state)
        reward = float(reward) + self.gamma * phi - self._phi
        self._phi = phi
        return obs, reward, terminated, truncated, info


def heuristic_potential(game: str):
    """The game's heuristic position value, scaled so one ordeal is worth about 1."""
    if game == "castellion":
        from castle_envs.agents.castellion import castle_score
        return lambda state: castle_score(state) / 400.0
    raise ValueError(f"no heuristic potential for {game!r}")


def make_env(config: dict, rank: int, pool: list | None = None, variant: dict | None = None,
             shaped: bool = False):
    from stable_baselines3.common.monitor import Monitor

    spec = get_game(config["game"])
    kwargs = {**config["env_kwargs"], **(variant or config["variant"])}
    if spec.api == "gymnasium":
        import castle_envs  # noqa: F401  (registers ids)
        env = gym.make(spec.gym_id, **kwargs)
    else:
        from castle_envs.wrappers import SingleAgentEnv
        env = SingleAgentEnv(spec.make(**kwargs), make_opponents(config, pool))
    if shaped and config["shaping"]:
        env = PotentialShaping(env, heuristic_potential(spec.slug), config["ppo"]["gamma"])
    env = Monitor(VariantSwitch(env), info_keywords=("won",) if spec.api == "gymnasium" else ())
    env.reset(seed=config["seed"] * 1000 + rank)
    return env


def make_vec_env(config: dict, pool: list | None = None):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [lambda rank=rank: make_env(config, rank, pool, shaped=True)
           for rank in range(config["n_envs"])]
    if config["vec_env"] == "subproc" and not config["self_play"]["enabled"]:
        return SubprocVecEnv(fns)
    return DummyVecEnv(fns)


# --- evaluation ----------------------------------------------------------------------------------
def evaluate_model(model, config: dict, episodes: int, seed: int, variant: dict | None = None,
                   deterministic: bool = True) -> dict:
    """Play ``episodes`` held-out games (env seeds ``seed``, ``seed+1``, ...) with masks."""
    env = make_env({**config, "seed": 0}, 0, pool=None, variant=variant)
    wins, returns, lengths = 0, [], []
    for i in range(episodes):
        obs, info = env.reset(seed=seed + i)
        done, total, length = False, 0.0, 0
        while not done:
            action, _ = model.predict(obs, action_masks=info["action_mask"],
                                      deterministic=deterministic)
            obs, reward, terminated, truncated, info = env.step(int(action))
            total += reward
            length += 1
            done = terminated or truncated
        won = info.get("won", total > 0)
        wins += int(bool(won))
        returns.append(total)
        lengths.append(length)
    low, high = wilson_interval(wins, episodes)
    return {"episodes": episodes, "wins": wins, "win_rate": wins / episodes,
            "ci95": [low, high], "mean_return": float(np.mean(returns)),
            "mean_length": float(np.mean(lengths))}


# --- behaviour cloning warm start ----------------------------------------------------------------
def pretrain(model, config: dict) -> dict:
    """Fit the policy to a baseline agent's moves on ``pretrain.episodes`` deals (masked
    cross-entropy), so PPO starts from the baseline's play instead of from uniform."""
    import torch

    from castle_envs.agents import make_agent

    pre = config["pretrain"]
    agent = make_agent(pre["agent"], game=config["game"], seed=pre["seed"])
    env = make_env({**config, "seed": 0}, 0)
    observations, masks, actions, wins = [], [], [], 0
    for episode in range(pre["episodes"]):
        agent.reset(pre["seed"] + episode)
        obs, info = env.reset(seed=pre["seed"] + episode)
        done = False
        while not done:
            state = env.unwrapped.state.clone() if agent.needs_state else None
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
    optimizer = torch.optim.Adam(policy.parameters(), lr=pre["learning_rate"])
    rng = np.random.default_rng(pre["seed"])
    n = len(actions)
    for _ in range(pre["epochs"]):
        order = rng.permutation(n)
        for start in range(0, n, pre["batch_size"]):
            idx = order[start:start + pre["batch_size"]]
            dist = policy.get_distribution(obs_t[idx], action_masks=mask_np[idx])
            loss = -dist.log_prob(act_t[idx]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        dist = policy.get_distribution(obs_t, action_masks=mask_np)
        agree = float((dist.distribution.probs.argmax(dim=1) == act_t).float().mean())
    return {"agent": pre["agent"], "episodes": pre["episodes"], "samples": n,
            "agent_win_rate": wins / pre["episodes"], "final_loss": loss.item(),
            "policy_agrees_with_agent": agree}


# --- callbacks ---------------------------------------------------------------------------------
def _callbacks(config: dict, run_dir: Path, pool: list, progress: dict):
    from stable_baselines3.common.callbacks import BaseCallback

    class Training(BaseCallback):
        """Win rate of training episodes, curriculum, evaluation, self-play, checkpoints."""

        def _on_training_start(self):
            self._wins = []
            self._t0 = time.perf_counter()
            self._steps0 = self.model.num_timesteps
            self._apply_stage()

        def _stage(self, steps: int) -> dict | None:
            for stage in config["curriculum"]:
                if steps < stage["until_steps"]:
                    return stage["variant"]
            return None

        def _apply_stage(self):
            variant = self._stage(self.model.num_timesteps) or config["variant"]
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
            every = config["eval"]["every_steps"]
            if steps // every > progress["evals_done"]:
                progress["evals_done"] = steps // every
                self._evaluate(steps)
            if config["self_play"]["enabled"]:
                snap = config["self_play"]["snapshot_every"]
                if steps // snap > progress["snapshots"]:
                    progress["snapshots"] = steps // snap
                    pool.append(PolicySnapshot(self.model.policy))
                    del pool[:-config["self_play"]["pool_size"]]
            ckpt = config["checkpoint"]["every_steps"]
            if steps // ckpt > progress["checkpoints"]:
                progress["checkpoints"] = steps // ckpt
                save_checkpoint(self.model, run_dir, progress)
            return True

        def _evaluate(self, steps: int):
            result = evaluate_model(self.model, config, config["eval"]["episodes"],
                                    config["eval"]["seed"])
            elapsed = time.perf_counter() - self._t0
            sps = (steps - self._steps0) / max(elapsed, 1e-9)
            for key in ("win_rate", "mean_return", "mean_length"):
                self.logger.record(f"eval/{key}", result[key])
            self.logger.record("time/steps_per_second", sps)
            row = {"timesteps": steps, "wall_seconds": progress["wall_before"] + elapsed,
                   **{k: result[k] for k in ("win_rate", "mean_return", "mean_length")},
                   "ci_low": result["ci95"][0], "ci_high": result["ci95"][1]}
            new = not (run_dir / "eval.csv").exists()
            with open(run_dir / "eval.csv", "a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
            if result["win_rate"] > progress["best_win_rate"]:
                progress["best_win_rate"] = result["win_rate"]
                self.model.save(run_dir / "best_model.zip")
            progress["last_eval"] = result

        def _on_training_end(self):
            progress["wall_before"] += time.perf_counter() - self._t0

    return Training()


def export_model(source: str | Path, target: str | Path) -> Path:
    """Save a trained model for shipping: the same MaskablePPO zip, with the optimizer's
    moment estimates dropped (a third of the size; only resuming training needs them)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(source, device="cpu")
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.learning_rate,
                                              **policy.optimizer_kwargs)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    model.save(target)
    return target


def save_checkpoint(model, run_dir: Path, progress: dict) -> None:
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(exist_ok=True)
    model.save(ckpt_dir / "latest.zip")
    progress["num_timesteps"] = int(model.num_timesteps)
    (run_dir / "progress.json").write_text(json.dumps(progress, indent=2))


# --- the run -------------------------------------------------------------------------------------
def build_model(config: dict, env, run_dir: Path):
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config["policy"]["activation"]]
    return MaskablePPO(
        "MlpPolicy", env, seed=config["seed"], device=config["device"], verbose=0,
        tensorboard_log=str(run_dir / "tb"),
        policy_kwargs={"net_arch": list(config["policy"]["net_arch"]), "activation_fn": activation},
        **config["ppo"])


def train(config: dict | None = None, run_dir: str | Path | None = None, resume: str | None = None,
          progress_bar: bool = True, stop_after: int | None = None) -> dict:
    """Run (or ``resume``) training; ``stop_after`` ends this session after that many steps,
    checkpointed, as an interruption would (tests use it to exercise ``resume``)."""
    from sb3_contrib import MaskablePPO

    if resume:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            raise FileNotFoundError(f"{run_dir} has no config.yaml: not a run folder")
        config = load_config(run_dir / "config.yaml")
        progress = json.loads((run_dir / "progress.json").read_text())
    else:
        config, run_dir = new_run_dir(config, run_dir)
        progress = {"num_timesteps": 0, "evals_done": 0, "checkpoints": 0, "snapshots": 0,
                    "best_win_rate": -1.0, "wall_before": 0.0, "variant": None}
    import torch
    torch.set_num_threads(config["torch_threads"])
    pool: list = []
    env = make_vec_env(config, pool)
    if resume:
        model = MaskablePPO.load(run_dir / "checkpoints" / "latest.zip", env=env,
                                 device=config["device"])
        model.tensorboard_log = str(run_dir / "tb")
    else:
        model = build_model(config, env, run_dir)
        if config["pretrain"]["agent"]:
            progress["pretrain"] = pretrain(model, config)
            save_checkpoint(model, run_dir, progress)
    remaining = config["total_timesteps"] - model.num_timesteps
    if stop_after is not None:
        remaining = min(remaining, stop_after)
    callback = _callbacks(config, run_dir, pool, progress)
    try:
        if remaining > 0:
            model.learn(remaining, callback=callback, reset_num_timesteps=not resume,
                        tb_log_name="ppo", progress_bar=progress_bar)
    finally:
        save_checkpoint(model, run_dir, progress)   # an interrupted run resumes from here
        env.close()
    final = evaluate_model(model, config, config["eval"]["episodes"], config["eval"]["seed"])
    model.save(run_dir / "final_model.zip")
    summary = {"run_dir": str(run_dir), "num_timesteps": int(model.num_timesteps),
               "final_eval": final, "wall_seconds": progress["wall_before"],
               "config": config}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
