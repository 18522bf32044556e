"""PPO over move features (``algo: move_ppo``), CleanRL style: one file, read top to bottom.

The policy (``agents/learned/move_policy.py``) scores every legal move of the move-feature view
(``castle_envs.moves``) with a shared network and samples the softmax over the legal moves;
a value head reads the state. Rollouts run on the batched env with the move view
(``make_move_vec``: the features come from the compiled kernel, for the whole batch in one
call). Each rollout stores only the legal moves' rows (packed, about 40 per position
instead of the capacity's 256), so memory follows the moves actually played.

Run: ``castle-envs train --config configs/castle_siege/hard_move_ppo.yaml``; the run folder
gets ``config.yaml``, ``progress.json``, ``eval.csv`` (held-out win rate of the greedy policy
against env steps and wall time), ``tb/`` (TensorBoard), ``checkpoints/latest/`` and
``final_model/`` / ``best_model/`` (model directories, ``--agent model:DIR``).

Checkpoints are tensors (``torch.save`` of tensors, read back with
``torch.load(weights_only=True)``) and JSON: network, optimizer, torch's random state and the
batch's whole position and generators, so ``--resume`` continues the very games that were
being played. A checkpoint is taken between rollouts; Ctrl-C or SIGTERM checkpoints and stops.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
from castle_envs.agents.learned import move_policy
from castle_envs.agents.registry import LINEAR_GAMES

from castle_envs.moves import linear_scale, make_move_vec
from castle_envs.registry import get_game

from .config import PPOConfig, TrainConfig, levels_of
from .run_folder import RunFolder, open_or_create, run_chunked
from .stats import win_record


def _env_kwargs(config: TrainConfig) -> dict:
    return {**config.env_kwargs, **config.variant}


def make_envs(config: TrainConfig, num_envs: int):
    """The batched env with the move view; with ``move_ppo.levels`` the batch is split
    evenly among them (``MixedMoveVec``)."""
    if len(levels_of(config)) > 1:
        return MixedMoveVec(
            [
                make_move_vec(
                    config.game,
                    num_envs // len(levels_of(config)),
                    capacity=config.move_ppo.capacity,
                    **{**config.env_kwargs, **v},
                )
                for v in levels_of(config)
            ]
        )
    return make_move_vec(
        config.game, num_envs, capacity=config.move_ppo.capacity, **_env_kwargs(config)
    )


class MixedMoveVec:
    """Several batched move envs of one game (different variants, the same spaces) stepped
    as one batch: their rows concatenated in order. Part ``j`` deals from ``seed`` plus the
    sizes of the parts before it, so every env of the batch has its own deal seed."""

    def __init__(self, parts: list):
        self.parts = parts
        self.sizes = [p.num_envs for p in parts]
        self.num_envs = sum(self.sizes)
        self.single_observation_space = parts[0].single_observation_space

    @staticmethod
    def _join(outs: list) -> dict:
        return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}

    def reset(self, seed: int):
        obs, offset = [], 0
        for part, n in zip(self.parts, self.sizes):
            obs.append(part.reset(seed=seed + offset)[0])
            offset += n
        return self._join(obs), {}

    def step(self, actions):
        outs, offset = [], 0
        for part, n in zip(self.parts, self.sizes):
            outs.append(part.step(actions[offset : offset + n]))
            offset += n
        info = {
            "won": np.concatenate(
                [o[4].get("won", np.zeros(n, bool)) for o, n in zip(outs, self.sizes)]
            )
        }
        return (
            self._join([o[0] for o in outs]),
            np.concatenate([o[1] for o in outs]),
            np.concatenate([o[2] for o in outs]),
            np.concatenate([o[3] for o in outs]),
            info,
        )

    def rows(self) -> dict:
        return {f"{j}/{k}": v for j, part in enumerate(self.parts) for k, v in part.rows().items()}

    def load_rows(self, rows: dict) -> dict:
        obs = []
        for j, part in enumerate(self.parts):
            mine = {k.partition("/")[2]: v for k, v in rows.items() if k.startswith(f"{j}/")}
            obs.append(part.load_rows(mine))
        return self._join(obs)

    def close(self) -> None:
        for part in self.parts:
            part.close()


def arch_of(config: TrainConfig, envs) -> dict:
    space = envs.single_observation_space
    n_feat = int(space["move_features"].shape[1])
    # Castle Siege's linear term reads the CEM scorer's columns; other games': every column
    linear = get_game(config.game).slug in LINEAR_GAMES
    offset = n_feat - len(linear_scale()) if linear else 0
    return {
        "obs_size": int(space["observation"].shape[0]),
        "num_features": n_feat,
        "hidden": config.move_ppo.hidden,
        "linear_offset": offset,
        "capacity": config.move_ppo.capacity,
    }


def evaluate(
    net, config: TrainConfig, episodes: int, seed: int, variant: dict | None = None
) -> dict:
    """Greedy play of the deals seeded ``seed`` .. ``seed + episodes - 1`` (env i's first
    game is exactly ``env.reset(seed=seed + i)``'s)."""
    import torch

    cfg = config.replace(
        variant=variant or config.variant, move_ppo=dataclasses.replace(config.move_ppo, levels=[])
    )
    envs = make_envs(cfg, episodes)
    obs, _ = envs.reset(seed=seed)
    done = np.zeros(episodes, bool)
    won = np.zeros(episodes, bool)
    steps = 0
    with torch.no_grad():
        while not done.all():
            logits, _ = net(
                torch.as_tensor(obs["observation"]),
                torch.as_tensor(obs["move_features"]),
                torch.as_tensor(obs["move_mask"]).bool(),
            )
            rows = logits.argmax(1).numpy()
            actions = obs["move_ids"][np.arange(episodes), rows]
            obs, _, term, trunc, info = envs.step(actions)
            steps += int((~done).sum())
            ended = (term | trunc) & ~done
            if ended.any():
                won[ended] = info["won"][ended]
                done |= ended
    envs.close()
    wins = int(won.sum())
    return {
        **win_record(wins, episodes, "interval95"),
        "seed": seed,
        "steps": steps,
    }


def ppo_epochs(
    net, optimizer, ppo: PPOConfig, obs_f, mask_f, rows_all, act_f, logp_f, adv_f, ret_f
) -> list:
    """PPO's epochs over minibatches of positions. Position ``i`` has the state ``obs_f[i]``
    and its legal moves' rows packed in ``rows_all`` (``mask_f[i]``: which of the padded
    columns they fill, legal rows first); ``act_f[i]`` is the column played. Returns
    (policy loss, value loss, entropy, approx KL) per minibatch."""
    import torch

    batch, width = mask_f.shape
    counts = mask_f.sum(1)
    offsets = torch.cumsum(counts, 0) - counts
    # a batch of whole games (multi-player) need not divide into minibatches: a remainder
    # under a quarter minibatch is left out of that epoch (one position would have no
    # advantage spread to normalise by); the solitaires' batches always divide
    smallest = max(2, ppo.batch_size // 4)
    stats = []
    for _ in range(ppo.n_epochs):
        perm = torch.randperm(batch)
        for start in range(0, batch, ppo.batch_size):
            idx = perm[start : start + ppo.batch_size]
            if len(idx) < smallest:
                continue
            cnt = counts[idx]
            owner = torch.repeat_interleave(torch.arange(len(idx)), cnt)
            first = torch.repeat_interleave(offsets[idx], cnt)
            within = torch.arange(int(cnt.sum())) - torch.repeat_interleave(
                torch.cumsum(cnt, 0) - cnt, cnt
            )
            rows = rows_all[first + within]
            h = net.embed(obs_f[idx])
            logits = torch.full((len(idx), width), float("-inf"))
            logits[mask_f[idx]] = net.move_logits(h, owner, rows)
            dist = torch.distributions.Categorical(logits=logits)
            logp = dist.log_prob(act_f[idx])
            ratio = torch.exp(logp - logp_f[idx])
            a_mb = adv_f[idx]
            a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8)
            pg = torch.max(
                -a_mb * ratio, -a_mb * torch.clamp(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)
            ).mean()
            v = net.value(h).squeeze(1)
            v_loss = 0.5 * ((v - ret_f[idx]) ** 2).mean()
            ent = dist.entropy().mean()
            loss = pg + ppo.vf_coef * v_loss - ppo.ent_coef * ent
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), ppo.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                kl = ((ratio - 1) - torch.log(ratio)).mean()
            stats.append((pg.item(), v_loss.item(), ent.item(), kl.item()))
    return stats


def log_update(
    writer, progress: dict, stats: list, batch: int, elapsed: float, t_roll: float
) -> None:
    """An update's losses and speeds, to TensorBoard and ``progress``."""
    n = progress["num_timesteps"]
    for name, value in zip(
        ("policy_loss", "value_loss", "entropy", "approx_kl"), np.mean(stats, axis=0)
    ):
        writer.add_scalar(f"losses/{name}", value, n)
    writer.add_scalar("charts/steps_per_second", batch / elapsed, n)
    writer.add_scalar("charts/rollout_steps_per_second", batch / t_roll, n)
    progress["steps_per_second"] = round(batch / elapsed, 1)
    progress["rollout_steps_per_second"] = round(batch / t_roll, 1)


# --- the run: a plug-in of the harness (experiments/run_folder.py) ------------------------------
class SavesMoveNet:
    """What both move-feature PPO trainers (this one and ``train_moves_aec``'s self-play) do
    alike: save their network as a model directory."""

    net: Any
    optimizer: Any
    arch: dict
    config: TrainConfig
    card_extra: dict

    def save_model(self, target: Path) -> None:
        move_policy.save(
            self.net,
            target,
            self.arch,
            self.config.game,
            self.config.variant,
            self.config.env_kwargs,
            self.card_extra,
        )

    def write_training_state(self, folder: Path) -> None:
        """Network, optimizer and torch's random state (the checkpoint's common part)."""
        import torch

        torch.save(self.net.state_dict(), folder / "policy.pt")
        torch.save(self.optimizer.state_dict(), folder / "optimizer.pt")
        torch.save({"torch": torch.get_rng_state()}, folder / "rng.pt")

    def read_training_state(self, ckpt: Path) -> None:
        """Restores what ``write_training_state`` wrote; ValueError naming the file that is
        damaged or does not fit this run."""
        import torch
        from castle_envs.agents.learned.model_files import load_optimizer, tensor_dict
        from castle_envs.agents.learned.saved import load_tensors

        for name, restore in (
            ("policy.pt", lambda path: self.net.load_state_dict(tensor_dict(path))),
            ("optimizer.pt", lambda path: load_optimizer(self.optimizer, path)),
            ("rng.pt", lambda path: torch.set_rng_state(load_tensors(path)["torch"])),
        ):
            try:
                restore(ckpt / name)
            except (RuntimeError, KeyError, TypeError, AttributeError, IndexError) as err:
                raise ValueError(
                    f"{ckpt / name}: not a checkpoint of this run's config "
                    f"({str(err).splitlines()[0] if str(err) else type(err).__name__})"
                ) from None


def eval_row(result: dict) -> dict:
    """The evaluation log's columns of an ``evaluate`` result."""
    low, high = result["interval95"]
    return {
        "episodes": result["episodes"],
        "wins": result["wins"],
        "win_rate": result["win_rate"],
        "low": low,
        "high": high,
    }


class MovePPO(SavesMoveNet):
    """PPO over move features as a ``run_folder.Chunked`` trainer: the network, its optimizer
    and the batched envs; a chunk is one rollout of ``ppo.n_steps`` and its update."""

    def __init__(self, config: TrainConfig):
        self.config = config
        self.ppo = config.ppo
        self.n_envs, self.n_steps = config.n_envs, self.ppo.n_steps
        self.batch = self.n_envs * self.n_steps
        self.ar = np.arange(self.n_envs)

    def initial_progress(self) -> dict:
        return {"updates": 0, "episodes": 0, "wins": 0}

    def build(self, folder: RunFolder, progress: dict) -> None:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        config, mp = self.config, self.config.move_ppo
        torch.set_num_threads(config.torch_threads)
        self.envs = make_envs(config, self.n_envs)
        self.arch = arch = arch_of(config, self.envs)
        torch.manual_seed(config.seed)  # the network's initial weights
        self.net = move_policy.build_net(
            arch["obs_size"], arch["num_features"], arch["hidden"], arch["linear_offset"]
        )
        self.optimizer = torch.optim.Adam(
            self.net.parameters(), lr=self.ppo.learning_rate, eps=1e-5
        )
        if folder.resumed:
            self.obs = self.load_checkpoint(folder.latest_checkpoint())
        else:
            if mp.init_linear:
                move_policy.init_linear(self.net, mp.init_linear, mp.temperature)
            if mp.init_model:
                from castle_envs.agents.learned.saved import init_from_model

                init_from_model(self.net, arch, config.game, mp.init_model)
            if config.pretrain.agent:
                from . import bc_moves

                progress["pretrain"] = bc_moves.pretrain(self.net, config, log=lambda r: None)
                # the warm start's time is part of the run's (the curve's wall time includes it)
                progress["wall_seconds"] += progress["pretrain"]["rounds"][-1]["seconds"]
                move_policy.save(
                    self.net,
                    folder / "pretrain_model",
                    arch,
                    config.game,
                    config.variant,
                    config.env_kwargs,
                    {"trained": {"algo": "behaviour cloning", "config": "config.yaml"}},
                )
            self.obs, _ = self.envs.reset(seed=config.seed)
        self.writer = SummaryWriter(str(folder / "tb"))
        self.card_extra: dict[str, dict] = {
            "trained": {"algo": "move_ppo", "config": "config.yaml"}
        }
        if len(levels_of(config)) > 1:  # one network for these variants (``variant``: the first)
            self.card_extra["trained"]["levels"] = list(dict.fromkeys(mp.levels))

    def train_chunk(self, progress: dict) -> int:
        import torch

        net, envs, obs, ppo, arch = self.net, self.envs, self.obs, self.ppo, self.arch
        n_steps, n_envs, batch = self.n_steps, self.n_envs, self.batch
        t0 = time.perf_counter()
        # --- rollout: store the state, the legal rows (packed), the choice ----------
        b_obs = torch.zeros((n_steps, n_envs, arch["obs_size"]))
        b_mask = torch.zeros((n_steps, n_envs, arch["capacity"]), dtype=torch.bool)
        b_rows, b_act = [], torch.zeros((n_steps, n_envs), dtype=torch.long)
        b_logp = torch.zeros((n_steps, n_envs))
        b_val = torch.zeros((n_steps + 1, n_envs))
        b_rew = torch.zeros((n_steps, n_envs))
        b_done = torch.zeros((n_steps, n_envs))
        for t in range(n_steps):
            o = torch.as_tensor(obs["observation"])
            m = torch.as_tensor(obs["move_mask"]).bool()
            f = torch.as_tensor(obs["move_features"])
            with torch.no_grad():
                logits, value = net(o, f, m)
            dist = torch.distributions.Categorical(logits=logits)
            a = dist.sample()
            b_obs[t], b_mask[t], b_act[t] = o, m, a
            b_rows.append(f[m])
            b_logp[t], b_val[t] = dist.log_prob(a), value
            actions = obs["move_ids"][self.ar, a.numpy()]
            obs, reward, term, trunc, info = envs.step(actions)
            self.obs = obs
            done = term | trunc
            b_rew[t] = torch.as_tensor(reward, dtype=torch.float32)
            b_done[t] = torch.as_tensor(done, dtype=torch.float32)
            if done.any():
                progress["episodes"] += int(done.sum())
                progress["wins"] += int(info["won"][done].sum())
                self.writer.add_scalar(
                    "charts/win_rate_window",
                    float(info["won"][done].mean()),
                    progress["num_timesteps"] + (t + 1) * n_envs,
                )
        with torch.no_grad():
            _, b_val[n_steps] = net(
                torch.as_tensor(obs["observation"]),
                torch.as_tensor(obs["move_features"]),
                torch.as_tensor(obs["move_mask"]).bool(),
            )
        t_roll = time.perf_counter() - t0
        # --- advantages (GAE; a finished game's value is 0) ------------------------
        adv = torch.zeros((n_steps, n_envs))
        last = torch.zeros(n_envs)
        for t in reversed(range(n_steps)):
            live = 1.0 - b_done[t]
            delta = b_rew[t] + ppo.gamma * b_val[t + 1] * live - b_val[t]
            last = delta + ppo.gamma * ppo.gae_lambda * live * last
            adv[t] = last
        ret = adv + b_val[:n_steps]
        # --- PPO epochs over minibatches of positions --------------------------------
        obs_f, mask_f = b_obs.reshape(batch, -1), b_mask.reshape(batch, -1)
        act_f, logp_f = b_act.reshape(batch), b_logp.reshape(batch)
        adv_f, ret_f = adv.reshape(batch), ret.reshape(batch)
        rows_all = torch.cat(b_rows)
        stats = ppo_epochs(
            net, self.optimizer, ppo, obs_f, mask_f, rows_all, act_f, logp_f, adv_f, ret_f
        )
        progress["num_timesteps"] += batch
        progress["updates"] += 1
        log_update(self.writer, progress, stats, batch, time.perf_counter() - t0, t_roll)
        return batch

    def evaluate(self, progress: dict, write_row) -> dict:
        config, net = self.config, self.net
        mixed = len(levels_of(config)) > 1
        rates = []
        distinct = [dict(t) for t in dict.fromkeys(tuple(v.items()) for v in levels_of(config))]
        for variant in distinct:
            result = evaluate(
                net.eval(),
                config,
                config.eval.episodes,
                config.eval.seed,
                variant if mixed else None,
            )
            write_row(
                {
                    **({"level": next(iter(variant.values()))} if mixed else {}),
                    **eval_row(result),
                }
            )
            name = f"eval/win_rate_{next(iter(variant.values()))}" if mixed else "eval/win_rate"
            self.writer.add_scalar(name, result["win_rate"], progress["num_timesteps"])
            rates.append(result["win_rate"])
        net.train()
        if mixed:  # the levels' mean decides the best model
            result = {
                "win_rate": float(np.mean(rates)),
                "by_level": {next(iter(v.values())): r for v, r in zip(distinct, rates)},
            }
        return result

    def write_checkpoint(self, folder: Path) -> None:
        """Network, optimizer, torch's random state and the batch's whole position."""
        import torch

        self.write_training_state(folder)
        torch.save(
            {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in self.envs.rows().items()},
            folder / "envs.pt",
        )

    def load_checkpoint(self, ckpt: Path):
        """Restores what ``write_checkpoint`` wrote; returns the batch's current observation."""
        from castle_envs.agents.learned.saved import load_tensors

        self.read_training_state(ckpt)
        saved = load_tensors(ckpt / "envs.pt")
        try:
            # the rows are checked where they enter the batch (``load_rows``): the compiled
            # kernels trust every word of a row
            return self.envs.load_rows({k: v.numpy() for k, v in saved.items()})
        except (RuntimeError, KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(
                f"{ckpt / 'envs.pt'}: not a checkpoint of this run's envs "
                f"({str(err).splitlines()[0]})"
            ) from None

    def close(self) -> None:
        self.writer.close()
        self.envs.close()


def run_training(
    config: TrainConfig | None = None,
    run_dir=None,
    resume=None,
    progress_bar: bool = False,
    stop_after: int | None = None,
) -> dict:
    """Train (or ``resume`` a run folder); ``stop_after`` ends this session after about that
    many env steps (whole rollouts), checkpointed, as an interrupt would."""
    folder = open_or_create(config, run_dir, resume, algo="move_ppo")
    return run_chunked(MovePPO(folder.config), folder, stop_after)


def export_model(run_dir, target) -> Path:
    """A run's ``final_model/`` (else its latest checkpoint's network) as a model directory
    at ``target``: how a run stopped by its time limit is shipped."""
    import torch
    from castle_envs.agents.learned.saved import load_tensors

    folder = RunFolder.open(run_dir)
    run_dir, config = folder.path, folder.config
    final = run_dir / "final_model" / "weights.pt"
    source = final if final.is_file() else run_dir / "checkpoints" / "latest" / "policy.pt"
    if not source.is_file():
        raise FileNotFoundError(f"{run_dir} holds no final_model/ or checkpoint to export")
    envs = make_envs(config, 1)
    arch = arch_of(config, envs)
    envs.close()
    net = move_policy.build_net(
        arch["obs_size"], arch["num_features"], arch["hidden"], arch["linear_offset"]
    )
    net.load_state_dict(load_tensors(source))
    progress = folder.read_progress({"num_timesteps": int, "wall_seconds": float})
    with torch.no_grad():
        return move_policy.save(
            net,
            target,
            arch,
            config.game,
            config.variant,
            config.env_kwargs,
            {
                "trained": {
                    "algo": "move_ppo",
                    "config": "config.yaml",
                    "env_steps": progress["num_timesteps"],
                    "wall_seconds": round(progress["wall_seconds"], 1),
                }
            },
        )
