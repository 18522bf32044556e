"""PPO with action masks on the batched Castle Siege env, CleanRL style: one file, top to bottom.

    python -m castle_envs.experiments.ppo_vec --total-timesteps 200000            # this script
    python -m castle_envs.experiments.ppo_vec --algo sb3 --total-timesteps 200000  # sb3 MaskablePPO baseline
    tensorboard --logdir runs

The batched env (``castle_envs.make_vec``) steps every game in one compiled call and returns
the masks with the observations; autoreset happens in the same step, so a rollout needs no
special case at episode ends. Illegal actions get zero probability (logits masked to -1e8).
Both algorithms log ``charts/episodic_return``, ``charts/win_rate`` and ``charts/SPS`` to
TensorBoard, and ``--curve`` writes the learning curve (env steps, mean return of the episodes
finished since the last point) as JSON for comparisons.

Truncation is not bootstrapped: Castle Siege provably ends within 45 turns (RULES.md), far
below the 1000-step guard, so every episode end is a real termination.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

import castle_envs


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--algo", choices=["ppo_vec", "sb3"], default="ppo_vec")
    p.add_argument("--difficulty", default="easy")
    p.add_argument("--reward", default="shaped", help="'win' or 'shaped' (env option)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--num-steps", type=int, default=64, help="rollout length per env")
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument(
        "--anneal-lr",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="decay the learning rate linearly to 0 (off: as sb3's default)",
    )
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--logdir", default="runs")
    p.add_argument("--curve", help="write the learning curve here (JSON)")
    args = p.parse_args(argv)
    for name in ("total_timesteps", "num_envs", "num_steps", "num_minibatches"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.curve:
        from .common import check_overwrite, json_starting_with

        try:  # now, not after the training
            check_overwrite(args.curve, "--curve", json_starting_with("args"), "a learning curve")
        except ValueError as err:
            p.error(str(err))
    return args


# --- the policy -------------------------------------------------------------------------------
SQRT2 = float(np.sqrt(2))


def layer(inp, out, std=SQRT2):
    lin = nn.Linear(inp, out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """Separate actor and critic MLPs (as CleanRL's ppo.py and sb3's MlpPolicy)."""

    def __init__(self, obs_size, n_actions, hidden):
        super().__init__()
        self.critic = nn.Sequential(
            layer(obs_size, hidden),
            nn.Tanh(),
            layer(hidden, hidden),
            nn.Tanh(),
            layer(hidden, 1, std=1.0),
        )
        self.actor = nn.Sequential(
            layer(obs_size, hidden),
            nn.Tanh(),
            layer(hidden, hidden),
            nn.Tanh(),
            layer(hidden, n_actions, std=0.01),
        )

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def act(self, obs, mask, action=None):
        """Sample (or score) actions from the masked policy: (action, log-prob, entropy, value)."""
        logits = self.actor(obs).masked_fill(~mask, -1e8)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


# --- learning curve bookkeeping -----------------------------------------------------------------
class Curve:
    """Episode returns and wins, logged to TensorBoard and kept for ``--curve``."""

    def __init__(self, writer):
        self.writer, self.points, self.returns, self.wins = writer, [], [], []

    def episodes(self, returns, wins):
        self.returns.extend(returns)
        self.wins.extend(wins)

    def point(self, step, sps):
        self.writer.add_scalar("charts/SPS", sps, step)
        if not self.returns:
            return
        ret, win = float(np.mean(self.returns)), float(np.mean(self.wins))
        self.writer.add_scalar("charts/episodic_return", ret, step)
        self.writer.add_scalar("charts/win_rate", win, step)
        self.points.append(
            {
                "step": int(step),
                "return": ret,
                "win_rate": win,
                "episodes": len(self.returns),
                "sps": sps,
            }
        )
        print(
            f"step {step:>9,}  return {ret:6.3f}  win rate {win:5.3f}  "
            f"({len(self.returns)} episodes)  {sps:,.0f} steps/s",
            flush=True,
        )
        self.returns, self.wins = [], []


# --- PPO on the batched env ---------------------------------------------------------------------
def planned_updates(total_timesteps: int, batch: int) -> int:
    """The PPO iterations that collect at least ``total_timesteps`` env steps in rollouts of
    ``batch`` steps (the last one completes its rollout), announced on stdout."""
    updates = -(-total_timesteps // batch)  # rounded up: at least what was asked
    print(
        f"{updates} iterations of {batch:,} env steps (--num-envs x --num-steps) = "
        f"{updates * batch:,} env steps (--total-timesteps {total_timesteps:,})"
    )
    return updates


def train_ppo_vec(args, writer, curve):
    envs = castle_envs.make_vec(
        "castle-siege",
        args.num_envs,
        difficulty=args.difficulty,
        reward=args.reward,
        copy=False,
        illegal_action="raise",
    )
    n, t_len = args.num_envs, args.num_steps
    obs_size, n_actions = envs.single_observation_space.shape[0], envs.single_action_space.n
    agent = Agent(obs_size, n_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # rollout storage, allocated once
    obs_buf = torch.zeros((t_len, n, obs_size))
    mask_buf = torch.zeros((t_len, n, n_actions), dtype=torch.bool)
    act_buf = torch.zeros((t_len, n), dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((t_len, n)) for _ in range(4))

    obs, info = envs.reset(seed=args.seed)
    next_obs, next_mask = (
        torch.from_numpy(obs).clone(),
        torch.from_numpy(info["action_mask"]).clone(),
    )
    next_done = torch.zeros(n)
    episode_return = np.zeros(n)
    batch = n * t_len
    minibatch = batch // args.num_minibatches
    updates = planned_updates(args.total_timesteps, batch)
    global_step, start, rollout_seconds = 0, time.perf_counter(), 0.0

    for update in range(1, updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1 - (update - 1) / updates)

        # 1. collect a rollout: t_len steps of every env
        rollout_start = time.perf_counter()
        for t in range(t_len):
            obs_buf[t], mask_buf[t], done_buf[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, next_mask)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            obs, reward, terminated, truncated, info = envs.step(action.numpy())
            global_step += n
            rew_buf[t] = torch.from_numpy(reward).float()
            finished = terminated | truncated
            episode_return += reward
            if finished.any():
                curve.episodes(episode_return[finished].tolist(), info["won"][finished].tolist())
                episode_return[finished] = 0.0
            next_obs = torch.from_numpy(obs).clone()
            next_mask = torch.from_numpy(envs.action_masks())
            next_done = torch.from_numpy(finished).float()

        rollout_seconds += time.perf_counter() - rollout_start

        # 2. advantages by GAE; an episode end cuts the bootstrap
        with torch.no_grad():
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rew_buf)
            last = 0.0
            for t in reversed(range(t_len)):
                not_done = 1.0 - (next_done if t == t_len - 1 else done_buf[t + 1])
                following = next_value if t == t_len - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * following * not_done - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                adv[t] = last
            returns = adv + val_buf

        # 3. PPO epochs over shuffled minibatches
        b_obs, b_mask = obs_buf.reshape(batch, -1), mask_buf.reshape(batch, -1)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch).split(minibatch):
                _, logp, entropy, value = agent.act(b_obs[idx], b_mask[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                mb_adv = b_adv[idx]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((value - b_ret[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        sps = global_step / (time.perf_counter() - start)
        writer.add_scalar("charts/rollout_SPS", global_step / rollout_seconds, global_step)
        writer.add_scalar("losses/policy", pg_loss.item(), global_step)
        writer.add_scalar("losses/value", v_loss.item(), global_step)
        writer.add_scalar("losses/entropy", entropy.mean().item(), global_step)
        curve.point(global_step, sps)
    print(f"rollouts (env + policy inference): {global_step / rollout_seconds:,.0f} steps/s")
    return global_step, time.perf_counter() - start


# --- the baseline: sb3-contrib MaskablePPO on the single env --------------------------------------
def train_sb3(args, writer, curve):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    from castle_envs.castle_siege.env import CastleSiegeEnv

    class Log(BaseCallback):
        def __init__(self):
            super().__init__()
            self.returns = np.zeros(args.num_envs)
            self.start = time.perf_counter()

        def _on_step(self):
            self.returns += self.locals["rewards"]
            for i, done in enumerate(self.locals["dones"]):
                if done:
                    curve.episodes([self.returns[i]], [self.locals["infos"][i].get("won", False)])
                    self.returns[i] = 0.0
            return True

        def _on_rollout_end(self):
            curve.point(self.num_timesteps, self.num_timesteps / (time.perf_counter() - self.start))

    venv = DummyVecEnv(
        [
            lambda: CastleSiegeEnv(args.difficulty, reward=args.reward, illegal_action="raise")
            for _ in range(args.num_envs)
        ]
    )
    venv.seed(args.seed)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.num_steps,
        batch_size=args.num_envs * args.num_steps // args.num_minibatches,
        n_epochs=args.update_epochs,
        learning_rate=args.learning_rate,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_coef,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        seed=args.seed,
        policy_kwargs={"net_arch": [args.hidden, args.hidden], "activation_fn": nn.Tanh},
        verbose=0,
    )
    planned_updates(args.total_timesteps, args.num_envs * args.num_steps)  # sb3 rounds up too
    log = Log()
    model.learn(args.total_timesteps, callback=log)
    return model.num_timesteps, time.perf_counter() - log.start


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    name = f"{args.algo}_{args.difficulty}_{args.reward}_s{args.seed}_{int(time.time())}"
    writer = SummaryWriter(str(Path(args.logdir) / name))
    writer.add_text("hyperparameters", json.dumps(vars(args)))
    curve = Curve(writer)
    train = train_ppo_vec if args.algo == "ppo_vec" else train_sb3
    steps, seconds = train(args, writer, curve)
    writer.close()
    print(f"{args.algo}: {steps:,} env steps in {seconds:.1f} s = {steps / seconds:,.0f} steps/s")
    if args.curve:
        Path(args.curve).write_text(
            json.dumps(
                {"args": vars(args), "steps": steps, "seconds": seconds, "points": curve.points},
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
