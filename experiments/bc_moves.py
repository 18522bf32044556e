"""Behaviour cloning of a move-scoring network from a teacher agent, with DAgger rounds.

The first pass plays ``pretrain.episodes`` games with the teacher (``pretrain.agent``, e.g.
the Castellion ``planner``) on training deals (``pretrain.seed`` and up, 20,000,000 or
more) and records, at every decision with more than one legal move, the position's
observation vector, the legal moves' rows of the move view (``castle_envs.moves``) and the
row the teacher chose, and the return that followed (the env's reward, discounted by
``ppo.gamma``). The network (``agents/learned/move_policy.py``) is fitted to those choices
(cross-entropy over each position's legal moves) and its value head to those returns
(squared error, weighted ``ppo.vf_coef``), so that PPO starts with a value that fits the
policy it starts from. Each DAgger round (``pretrain.dagger``)
then plays as many new deals with the *network* choosing the moves (greedy) and the teacher
naming, in every position the network reaches, the move it would play; the new labels join
the data and the network is fitted again. So the network learns the teacher's answers in
the positions its own play leads to, not only in the teacher's.

Games are played on the rules state (``GameState``), one position at a time; the variants
(``move_ppo.levels`` or the config's variant) take turns game by game.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from castle_envs.moves import move_view
from castle_envs.registry import get_game

if TYPE_CHECKING:
    from .config import TrainConfig


def _variants(config: TrainConfig) -> list[dict]:
    from .config import levels_of

    return levels_of(config)


class Data:
    """Positions: observation rows, packed move rows, the teacher's row and the return that
    followed, per position."""

    def __init__(self):
        self.obs, self.rows, self.counts, self.labels, self.returns = [], [], [], [], []

    def add(self, obs, rows, label, ret) -> None:
        self.obs.append(np.asarray(obs, np.float32))
        self.rows.append(np.asarray(rows, np.float32))
        self.counts.append(len(rows))
        self.labels.append(int(label))
        self.returns.append(float(ret))

    def __len__(self) -> int:
        return len(self.labels)

    def tensors(self):
        import torch

        return (
            torch.as_tensor(np.stack(self.obs)),
            torch.as_tensor(np.concatenate(self.rows)),
            torch.as_tensor(self.counts),
            torch.as_tensor(self.labels),
            torch.as_tensor(self.returns, dtype=torch.float32),
        )


def collect(config: TrainConfig, teacher, episodes: int, seed: int, data: Data, net=None) -> dict:
    """Play ``episodes`` deals (seeds ``seed`` ..); the teacher labels every decision with a
    choice; the teacher also plays them unless ``net`` is given (DAgger: the network plays,
    greedy). Returns the games' win count (a solitaire's ``outcome``) and the decisions
    recorded."""
    import torch

    gamma = config.ppo.gamma
    view = move_view(config.game, config.move_ppo.capacity)
    envs = [get_game(config.game).make(**config.env_kwargs, **v) for v in _variants(config)]
    wins = decisions = 0
    for g in range(episodes):
        env = envs[g % len(envs)]
        state = env.new_state(np.random.default_rng(seed + g), {})
        teacher.reset(seed + g)
        steps = 0
        game, rewards = [], []  # the recorded positions (step, row) and every reward
        while not state.is_terminal() and steps < env.max_episode_steps:
            mask = state.legal_action_mask()
            view_out, n = view.from_state(state)
            k = min(n, view.capacity)
            ids = view_out["move_ids"][:k]
            label_action = None
            if n > 1 or net is None:
                label_action = teacher.act(None, mask, state.player_view())
            if n > 1:
                obs = view.observation(state)
                where = np.flatnonzero(ids == label_action)
                if len(where):  # always, unless the capacity cut the teacher's move
                    game.append((steps, obs, view_out["move_features"][:k], int(where[0])))
            if net is None or n == 1:
                action = label_action if label_action is not None else int(ids[0])
            else:
                with torch.no_grad():
                    h = net.embed(torch.as_tensor(obs)[None])
                    logits = net.move_logits(
                        h,
                        torch.zeros(k, dtype=torch.long),
                        torch.as_tensor(view_out["move_features"][:k]),
                    )
                action = int(ids[int(torch.argmax(logits))])
            before = env.reward_snapshot(state)
            state.apply_action(action)
            rewards.append(env.step_reward(before, state))
            steps += 1
        returns = np.zeros(len(rewards) + 1)
        for t in reversed(range(len(rewards))):
            returns[t] = rewards[t] + gamma * returns[t + 1]
        for step, obs, rows, label in game:
            data.add(obs, rows, label, returns[step])
        decisions += len(game)
        wins += int(getattr(state, "outcome", 0) == 1)
    return {"episodes": episodes, "wins": wins, "decisions": decisions}


def fit(
    net,
    data: Data,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    vf_coef: float = 0.5,
) -> list:
    """Cross-entropy of the teacher's rows plus ``vf_coef`` x the value's squared error,
    ``epochs`` passes over ``data``; returns the mean loss, accuracy and value error of each
    pass."""
    import torch

    obs, rows, counts, labels, returns = data.tensors()
    offsets = torch.cumsum(counts, 0) - counts
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(int(seed))
    n = len(labels)
    history = []
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        total = correct = value = 0.0
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            cnt = counts[idx]
            owner = torch.repeat_interleave(torch.arange(len(idx)), cnt)
            first = torch.repeat_interleave(offsets[idx], cnt)
            within = torch.arange(int(cnt.sum())) - torch.repeat_interleave(
                torch.cumsum(cnt, 0) - cnt, cnt
            )
            width = int(cnt.max())
            mask = torch.arange(width)[None, :] < cnt[:, None]
            h = net.embed(obs[idx])
            logits = torch.full((len(idx), width), float("-inf"))
            logits[mask] = net.move_logits(h, owner, rows[first + within])
            ce = torch.nn.functional.cross_entropy(logits, labels[idx])
            v_err = ((net.value(h).squeeze(1) - returns[idx]) ** 2).mean()
            loss = ce + vf_coef * v_err
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(ce.detach()) * len(idx)
            value += float(v_err.detach()) * len(idx)
            correct += float((logits.argmax(1) == labels[idx]).sum())
        history.append({"loss": total / n, "accuracy": correct / n, "value_mse": value / n})
    net.eval()
    return history


def pretrain(net, config: TrainConfig, log=print) -> dict:
    """The whole warm start: the teacher's games, a fit, then ``pretrain.dagger`` rounds of
    the network's games labelled by the teacher, each followed by a fit."""
    from castle_envs.agents.registry import make_agent

    pre = config.pretrain
    teacher = make_agent(pre.agent, config.game, seed=pre.seed)
    data = Data()
    t0 = time.perf_counter()
    rounds = []
    seed = pre.seed
    for r in range(pre.dagger + 1):
        played = collect(config, teacher, pre.episodes, seed, data, net if r else None)
        seed += pre.episodes
        history = fit(
            net,
            data,
            pre.epochs,
            pre.batch_size,
            pre.learning_rate,
            pre.seed + r,
            config.ppo.vf_coef,
        )
        rounds.append(
            {
                "round": r,
                "player": "network" if r else "teacher",
                **played,
                "positions": len(data),
                "fit": history[-1],
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
        log(rounds[-1])
    return {"teacher": pre.agent, "rounds": rounds}
