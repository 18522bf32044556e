"""Self-play PPO over move features for the multi-player games (``algo: move_ppo`` on a
PettingZoo game: Castle Rooms). Read top to bottom.

The policy is the move-scoring network of the solitaires (``agents/learned/move_policy.py``): each
legal move's row of the game's move view (``castle_envs.moves``) is scored with the state,
and the softmax over the legal moves is sampled. Each update plays ``n_envs`` whole games
side by side, seat by seat:

* with probability ``self_play.fixed_opponent_share`` the learner holds one seat (drawn)
  against the fixed ``opponents`` (agent specs: ``heuristic``, ``random``, ``model:DIR``);
* otherwise (``self_play.enabled``) the opponent is drawn uniformly from the snapshot pool
  (the learner's weights, frozen every ``self_play.snapshot_every`` steps, the last
  ``pool_size`` kept) and the current learner itself; against itself the learner holds every
  seat, and every seat's decisions are trained on.

A seat's decisions form its trajectory; the game's return (+1 a winner, -1 the others) is
its reward at its last decision; advantages are GAE along each trajectory. Steps count the
learner's decisions. Evaluation plays the greedy policy against ``eval.opponent`` (the
heuristic by default) on the held-out deals ``eval.seed`` and up, the learner in seat
``i mod players`` of game ``i``; a win is a return above 0.

Checkpoints (between updates; an update holds whole games, so no game is ever in flight):
the network, optimizer, snapshot pool and torch's random state as tensors, the counters as
JSON. Every other random draw (deals, who sits where, the fixed opponents' tie-breaks) comes
from generators seeded by (seed, update), so ``--resume`` continues exactly the run that
was stopped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.learned import move_policy

from castle_envs.moves import move_view
from castle_envs.registry import get_game

from .config import TrainConfig
from .run_folder import RunFolder, open_or_create, run_chunked
from .stats import win_record
from .train_moves import SavesMoveNet, eval_row, log_update, ppo_epochs

#: a game longer than this (every game here ends far sooner) counts as a draw
MAX_GAME_STEPS = 5000


_ENVS: dict = {}


def _env(config: TrainConfig):
    """The raw env of the config's game (one per game and options: it only encodes and deals)."""
    kwargs = {**config.env_kwargs, **config.variant}
    key = (config.game, json.dumps(kwargs, sort_keys=True))
    if key not in _ENVS:
        _ENVS[key] = get_game(config.game).make(**kwargs)
    return _ENVS[key]


def _deal(config: TrainConfig, seed: int):
    """The game ``env.reset(seed=seed)`` plays (the env's own ``new_state``)."""
    return _env(config).new_state(np.random.default_rng(seed), {})


def arch_of(config: TrainConfig) -> dict:
    view = move_view(config.game, config.move_ppo.capacity)
    env = _env(config)
    obs_size = int(env.observation_space(env.possible_agents[0])["observation"].shape[0])
    return {
        "obs_size": obs_size,
        "num_features": view.num_features,
        "hidden": config.move_ppo.hidden,
        "linear_offset": 0,
        "capacity": view.capacity,
    }


class Fixed:
    """A fixed opponent: an agent built from its spec, with one random stream per game and
    seat, ``default_rng([*prefix, game, seat])`` (``start(prefix)``): with ``prefix = [seed]``
    these are the streams ``castle-envs tournament`` resets its agents with, so the games
    are the tournament's."""

    def __init__(self, spec: str, game: str):
        from castle_envs.agents.registry import make_agent

        self.spec = spec
        self.agent = make_agent(spec, game)
        self.start([0])

    def start(self, prefix) -> None:
        self.prefix = [int(x) for x in prefix]
        self.rngs: dict[tuple, np.random.Generator] = {}

    def act(self, state, env, game: int) -> int:
        agent = self.agent
        key = (game, state.current_player)
        if key not in self.rngs:
            self.rngs[key] = np.random.default_rng([*self.prefix, game, state.current_player])
        agent.rng = self.rngs[key]
        obs = env.observe_state(state, state.current_player) if agent.needs_observation else None
        view = None
        if agent.needs_state:
            view = state.player_view(state.current_player)
        return int(agent.act(obs, state.legal_action_mask(), view))


def play(
    config: TrainConfig,
    states: list,
    seats: list,
    nets: dict,
    fixed: dict,
    record_net=None,
    greedy: bool = False,
) -> dict:
    """Play ``states`` to the end side by side. ``seats[g][s]`` names who holds seat ``s``
    of game ``g``: a key of ``nets`` (move networks, sampled, or their argmax when
    ``greedy``) or of ``fixed`` (agents). Decisions of ``record_net`` are returned per
    (game, seat) trajectory: lists of (obs, rows, choice, log-prob, value)."""
    import torch

    env = _env(config)
    view = move_view(config.game, config.move_ppo.capacity)
    traj: dict[tuple, list] = {}
    steps = 0
    live = [g for g, s in enumerate(states) if not s.is_terminal()]
    while live and steps < MAX_GAME_STEPS:
        groups: dict = {}
        for g in live:
            groups.setdefault(seats[g][states[g].current_player], []).append(g)
        for who, games in groups.items():
            if who in fixed:
                for g in games:
                    states[g].apply_action(fixed[who].act(states[g], env, g))
                continue
            net = nets[who]
            obs, rows, counts, ids = [], [], [], []
            for g in games:
                out, n = view.from_state(states[g])
                k = min(n, view.capacity)
                obs.append(view.observation(states[g]))
                rows.append(out["move_features"][:k])
                ids.append(out["move_ids"][:k])
                counts.append(k)
            o = torch.as_tensor(np.stack(obs))
            r = torch.as_tensor(np.concatenate(rows))
            cnt = torch.as_tensor(counts)
            width = int(cnt.max())
            mask = torch.arange(width)[None, :] < cnt[:, None]
            with torch.no_grad():
                h = net.embed(o)
                logits = torch.full((len(games), width), float("-inf"))
                logits[mask] = net.move_logits(
                    h, torch.repeat_interleave(torch.arange(len(games)), cnt), r
                )
                dist = torch.distributions.Categorical(logits=logits)
                choice = logits.argmax(1) if greedy else dist.sample()
                if who == record_net:
                    logp = dist.log_prob(choice)
                    value = net.value(h).squeeze(1)
            ends = np.cumsum(counts)
            for i, g in enumerate(games):
                c = int(choice[i])
                if who == record_net:
                    traj.setdefault((g, states[g].current_player), []).append(
                        (o[i], r[ends[i] - counts[i] : ends[i]], c, float(logp[i]), float(value[i]))
                    )
                states[g].apply_action(int(ids[i][c]))
        steps += 1
        live = [g for g in live if not states[g].is_terminal()]
    return traj


def evaluate(net, config: TrainConfig, episodes: int, seed: int) -> dict:
    """Greedy play against ``eval.opponent`` on the deals ``seed`` .. ``seed + episodes -
    1``; the learner sits in seat ``i mod players`` of game ``i``: the games ``castle-envs
    tournament --agents MODEL,OPPONENT --seed SEED`` plays."""
    opponent = config.eval.opponent
    n = config.variant["num_players"]
    states = [_deal(config, seed + i) for i in range(episodes)]
    seats = [["learner" if s == i % n else "opponent" for s in range(n)] for i in range(episodes)]
    fixed = {"opponent": Fixed(opponent, config.game)}
    fixed["opponent"].start([seed])
    play(config, states, seats, {"learner": net}, fixed, greedy=True)
    returns = [
        float(states[i].returns()[i % n]) if states[i].is_terminal() else 0.0
        for i in range(episodes)
    ]
    wins = int(sum(r > 0 for r in returns))
    return {
        **win_record(wins, episodes, "interval95"),
        "mean_return": float(np.mean(returns)),
        "seed": seed,
        "opponent": opponent,
    }


def _seating(config: TrainConfig, rng, pool: list, fixed_names: list) -> list:
    """Who holds each seat of one game."""
    n = config.variant["num_players"]
    sp = config.self_play
    me = int(rng.integers(n))
    if fixed_names and (not sp.enabled or rng.random() < sp.fixed_opponent_share):
        other = fixed_names[int(rng.integers(len(fixed_names)))]
    else:
        pick = int(rng.integers(len(pool) + 1))
        if pick == len(pool):
            return ["learner"] * n
        other = f"snapshot{pick}"
    return ["learner" if s == me else other for s in range(n)]


def _advantages(traj: dict, states: list, gamma: float, lam: float):
    """Per decision: (obs, rows, choice, log-prob, advantage, return), trajectory by
    trajectory in a fixed order."""
    out = []
    for g, seat in sorted(traj):
        steps = traj[(g, seat)]
        state = states[g]
        final = float(state.returns()[seat]) if state.is_terminal() else 0.0
        values = [s[4] for s in steps]
        last = 0.0
        advs = [0.0] * len(steps)
        for t in reversed(range(len(steps))):
            nxt = values[t + 1] if t + 1 < len(steps) else 0.0
            reward = final if t == len(steps) - 1 else 0.0
            delta = reward + gamma * nxt - values[t]
            last = delta + gamma * lam * last
            advs[t] = last
        for t, (o, r, c, lp, v) in enumerate(steps):
            out.append((o, r, c, lp, advs[t], advs[t] + v))
    return out


# --- the run: a plug-in of the harness (experiments/run_folder.py) ------------------------------
class SelfPlayMovePPO(SavesMoveNet):
    """Self-play PPO over move features as a ``run_folder.Chunked`` trainer: the network, its
    optimizer, the snapshot pool and the fixed opponents; a chunk is ``n_envs`` whole games
    and their update."""

    def __init__(self, config: TrainConfig):
        self.config = config
        self.ppo, self.sp = config.ppo, config.self_play

    def initial_progress(self) -> dict:
        return {"updates": 0, "games": 0, "snapshots": 0}

    def build(self, folder: RunFolder, progress: dict) -> None:
        import torch
        from torch.utils.tensorboard import SummaryWriter

        config = self.config
        torch.set_num_threads(config.torch_threads)
        self.arch = arch = arch_of(config)
        torch.manual_seed(config.seed)
        self.net = move_policy.build_net(
            arch["obs_size"], arch["num_features"], arch["hidden"], arch["linear_offset"]
        )
        self.optimizer = torch.optim.Adam(
            self.net.parameters(), lr=self.ppo.learning_rate, eps=1e-5
        )
        self.pool: list = self.load_checkpoint(folder.latest_checkpoint()) if folder.resumed else []
        if not folder.resumed and config.move_ppo.init_model:
            from castle_envs.agents.learned.saved import init_from_model

            init_from_model(self.net, arch, config.game, config.move_ppo.init_model)
        self.fixed_names = [f"fixed{i}" for i in range(len(config.opponents))]
        self.fixed = {
            name: Fixed(spec, config.game) for name, spec in zip(self.fixed_names, config.opponents)
        }
        self.writer = SummaryWriter(str(folder / "tb"))
        self.card_extra = {"trained": {"algo": "move_ppo", "config": "config.yaml"}}

    def train_chunk(self, progress: dict) -> int:
        import torch

        config, arch, ppo, sp, net = self.config, self.arch, self.ppo, self.sp, self.net
        t0 = time.perf_counter()
        rng = np.random.default_rng([config.seed, progress["updates"]])
        for name, opp in self.fixed.items():
            opp.start([config.seed, progress["updates"], int(name[5:])])
        first = config.seed + progress["games"]
        states = [_deal(config, first + g) for g in range(config.n_envs)]
        seats = [_seating(config, rng, self.pool, self.fixed_names) for _ in states]
        nets = {"learner": net}
        for i, snap in enumerate(self.pool):
            frozen = move_policy.build_net(
                arch["obs_size"], arch["num_features"], arch["hidden"], arch["linear_offset"]
            )
            frozen.load_state_dict(snap)
            nets[f"snapshot{i}"] = frozen.eval()
        traj = play(config, states, seats, nets, self.fixed, record_net="learner")
        t_roll = time.perf_counter() - t0
        data = _advantages(traj, states, ppo.gamma, ppo.gae_lambda)
        batch = len(data)
        obs_f = torch.stack([d[0] for d in data])
        counts = torch.as_tensor([len(d[1]) for d in data])
        mask_f = torch.arange(int(counts.max()))[None, :] < counts[:, None]
        rows_all = torch.cat([d[1] for d in data])
        act_f = torch.as_tensor([d[2] for d in data])
        logp_f = torch.as_tensor([d[3] for d in data], dtype=torch.float32)
        adv_f = torch.as_tensor([d[4] for d in data], dtype=torch.float32)
        ret_f = torch.as_tensor([d[5] for d in data], dtype=torch.float32)
        stats = ppo_epochs(
            net, self.optimizer, ppo, obs_f, mask_f, rows_all, act_f, logp_f, adv_f, ret_f
        )
        # the learner's results in the games it played against others
        learner_returns = [
            float(states[g].returns()[s])
            for g in range(len(states))
            for s in range(len(seats[g]))
            if seats[g][s] == "learner"
            and seats[g].count("learner") < len(seats[g])
            and states[g].is_terminal()
        ]
        progress["games"] += len(states)
        progress["num_timesteps"] += batch
        progress["updates"] += 1
        n = progress["num_timesteps"]
        log_update(self.writer, progress, stats, batch, time.perf_counter() - t0, t_roll)
        if learner_returns:
            self.writer.add_scalar(
                "charts/win_rate_vs_others", float(np.mean(np.array(learner_returns) > 0)), n
            )
        if sp.enabled and n // sp.snapshot_every > progress["snapshots"]:
            progress["snapshots"] = n // sp.snapshot_every
            self.pool.append({k: v.detach().clone() for k, v in net.state_dict().items()})
            del self.pool[: -sp.pool_size]
        return batch

    def evaluate(self, progress: dict, write_row) -> dict:
        config = self.config
        result = evaluate(self.net.eval(), config, config.eval.episodes, config.eval.seed)
        self.net.train()
        write_row(
            {
                **eval_row(result),
                "mean_return": round(result["mean_return"], 4),
            }
        )
        self.writer.add_scalar("eval/win_rate", result["win_rate"], progress["num_timesteps"])
        return result

    def write_checkpoint(self, folder: Path) -> None:
        """Network, optimizer, torch's random state and the snapshot pool, as tensors."""
        import torch

        self.write_training_state(folder)
        torch.save(
            {f"{i}/{k}": v for i, snap in enumerate(self.pool) for k, v in snap.items()},
            folder / "pool.pt",
        )

    def load_checkpoint(self, ckpt: Path) -> list:
        """Restores what ``write_checkpoint`` wrote; returns the snapshot pool."""
        from castle_envs.agents.learned.saved import load_tensors

        net = self.net
        try:
            self.read_training_state(ckpt)
            flat = load_tensors(ckpt / "pool.pt")
            indexes = {k.partition("/")[0] for k in flat}
            # snapshots are numbered 0..n-1 as written; another number (a negative one
            # would quietly land on the last snapshot) means the file is not ours
            if indexes != {str(i) for i in range(len(indexes))}:
                raise ValueError(f"pool.pt numbers its snapshots {sorted(indexes)[:5]}, not 0..n-1")
            pool: list[dict] = [{} for _ in indexes]
            for key, value in flat.items():
                i, _, name = key.partition("/")
                pool[int(i)][name] = value
            for snap in pool:
                net.load_state_dict(snap)  # each snapshot must fit this network
            net.load_state_dict(load_tensors(ckpt / "policy.pt"))
        except (RuntimeError, KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            raise ValueError(
                f"{ckpt}: not a checkpoint of this run's config ({str(err).splitlines()[0]})"
            ) from None
        return pool[-self.sp.pool_size :]

    def close(self) -> None:
        self.writer.close()


def run_training(
    config: TrainConfig | None = None, run_dir=None, resume=None, stop_after: int | None = None
) -> dict:
    """Train (or ``resume`` a run folder); ``stop_after`` ends this session after about that
    many learner decisions (whole updates), checkpointed, as an interrupt would."""
    folder = open_or_create(config, run_dir, resume, algo="move_ppo")
    return run_chunked(SelfPlayMovePPO(folder.config), folder, stop_after)
