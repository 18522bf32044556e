"""A policy that scores each legal move: a shared network over [state, move features].

``MovePolicyNet`` reads the env's observation vector through a small MLP (the state
embedding, also the value head's input) and scores every legal move's feature row
(``castle_envs.moves``) with a second MLP over [state embedding, move features], plus a
linear term over the view's columns from ``linear_offset`` on (Castle Siege: the CEM
scorer's 30 columns, so the CEM linear policy is one setting of the weights and training
can start from it, ``init_linear``; Castle Rooms: every column). The policy is the
softmax of these logits over the legal moves; the agent plays the most likely move.

Trained by ``castle-envs train`` with ``algo: move_ppo`` (multi-player games: by self-play);
saved as a model directory of kind ``move_policy`` (``model.json`` + ``weights.pt`` of plain
tensors), loaded by ``--agent model:DIR`` (``agents/learned/saved.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from castle_envs.agents.base import Agent

ARCH_KEYS = ("obs_size", "num_features", "hidden", "linear_offset", "capacity")


def build_net(obs_size: int, num_features: int, hidden: int = 128, linear_offset: int = 45):
    import torch
    from torch import nn

    class MovePolicyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear_offset = linear_offset
            self.state = nn.Sequential(
                nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
            )
            self.move = nn.Sequential(
                nn.Linear(hidden + num_features, hidden), nn.ReLU(), nn.Linear(hidden, 1)
            )
            self.linear = nn.Linear(num_features - linear_offset, 1, bias=False)
            self.value = nn.Linear(hidden, 1)
            # the MLP starts silent: the first policy is the linear term's (CEM when given)
            # (a Sequential's items are typed Module: this one is the Linear made above)
            nn.init.zeros_(self.move[2].weight)  # type: ignore[arg-type]
            nn.init.zeros_(self.move[2].bias)  # type: ignore[arg-type]
            nn.init.zeros_(self.linear.weight)

        def embed(self, obs):
            return self.state(obs)

        def move_logits(self, h, owner, rows):
            """Logits of packed move ``rows`` (M, F); ``owner[m]``: its row of ``h``."""
            x = torch.cat([h[owner], rows], dim=1)
            return (self.move(x) + self.linear(rows[:, self.linear_offset :])).squeeze(1)

        def forward(self, obs, feats, mask):
            """Padded logits (B, capacity) (-inf where ``mask`` is False) and values (B,)."""
            h = self.embed(obs)
            owner = torch.nonzero(mask, as_tuple=True)[0]
            logits = torch.full(mask.shape, float("-inf"), dtype=h.dtype)
            logits[mask] = self.move_logits(h, owner, feats[mask])
            return logits, self.value(h).squeeze(1)

    return MovePolicyNet()


def init_linear(net, policy_json, temperature: float = 1.0) -> None:
    """Set the linear term to the CEM scorer's weights (a ``policy.json``) / temperature."""
    import torch
    from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
    from castle_envs.agents.options import locate_shipped, shipped_models_dir

    from castle_envs.moves import linear_scale

    policy_json = locate_shipped(str(policy_json), shipped_models_dir(), "models")
    weights = LinearPolicy.load(policy_json).vector() * linear_scale() / temperature
    with torch.no_grad():
        net.linear.weight.copy_(torch.as_tensor(weights, dtype=torch.float32)[None, :])


class MovePolicyAgent(Agent):
    """Plays the legal move with the highest logit (``greedy``) or samples the softmax."""

    name = "move_policy"
    needs_state = True
    needs_observation = True

    def __init__(
        self,
        net,
        arch: dict,
        game: str = "castle-siege",
        greedy: bool = True,
        seed: int | None = None,
        name: str | None = None,
    ):
        super().__init__(seed)
        import torch

        from castle_envs.moves import move_view

        # one position at a time through a small network: one thread is fastest (two
        # threads measured ~3x slower per move on the 2-core machine)
        torch.set_num_threads(1)
        self.net = net.eval()
        self.greedy = greedy
        self.moves = move_view(game, arch["capacity"])
        self._torch = torch
        if name:
            self.name = name

    def act(self, observation, action_mask, state=None) -> int:
        if state is None:
            raise ValueError(f"the {self.name} agent needs the game state")
        torch = self._torch
        view, n = self.moves.from_state(state)
        if n == 0:
            raise ValueError("no legal move in this position")
        if isinstance(observation, dict):  # a PettingZoo observation
            observation = observation["observation"]
        if observation is None:
            observation = self.moves.observation(state)
        rows = view["move_mask"].astype(bool)
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observation, np.float32))[None]
            h = self.net.embed(obs)
            feats = torch.as_tensor(view["move_features"][rows])
            logits = self.net.move_logits(h, torch.zeros(len(feats), dtype=torch.long), feats)
        if self.greedy:
            choice = int(torch.argmax(logits))
        else:
            p = torch.softmax(logits.double(), 0).numpy()
            choice = int(self.rng.choice(len(p), p=p / p.sum()))
        return int(view["move_ids"][rows][choice])


def save(
    net,
    directory,
    arch: dict,
    game: str,
    variant: dict,
    env_kwargs: dict,
    extra: dict | None = None,
) -> Path:
    from castle_envs.agents.learned.model_files import write_weights

    policy = {k: arch[k] for k in ARCH_KEYS}
    tensors = {k: v.detach().clone() for k, v in net.state_dict().items()}
    return write_weights(
        directory, "move_policy", game, variant, env_kwargs, policy, tensors, extra
    )


#: the most move rows a position may show (the shipped models show 256 at most)
MAX_CAPACITY = 1 << 16


def check_arch(arch) -> dict:
    """The card's ``policy`` sizes, checked before a network of them is built: each a
    non-negative int, ``hidden`` and ``capacity`` at least 1, ``linear_offset`` within the
    features, and a network no larger than a model may be (``model_files.MAX_PARAMETERS``)."""
    from castle_envs.agents.learned.model_files import check_size, mlp_parameters

    if not isinstance(arch, dict):
        raise ValueError(f"policy must be a JSON object with {list(ARCH_KEYS)}")
    out = {}
    for key in ARCH_KEYS:
        value = arch.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1 << 20:
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}..."
            raise ValueError(f"policy.{key} must be a non-negative int, got {shown}")
        out[key] = value
    if out["capacity"] < 1 or out["hidden"] < 1:
        raise ValueError("policy.capacity and policy.hidden must be at least 1")
    if out["capacity"] > MAX_CAPACITY:
        raise ValueError(f"policy.capacity must be at most {MAX_CAPACITY}, got {out['capacity']}")
    if out["linear_offset"] > out["num_features"]:
        raise ValueError(
            f"policy.linear_offset {out['linear_offset']} is past the "
            f"{out['num_features']} move features"
        )
    hidden, features = out["hidden"], out["num_features"]
    parameters = (
        mlp_parameters([out["obs_size"], hidden, hidden], 1)  # the state MLP and value head
        + mlp_parameters([hidden + features, hidden], 1)  # the move MLP
        + features
        - out["linear_offset"]  # the linear term
    )
    check_size("policy (obs_size, num_features, hidden)", parameters)
    return out


def load(directory, card: dict, seed: int | None = None, name: str | None = None):
    """The ``MovePolicyAgent`` of a model directory whose ``model.json`` is ``card``."""
    from castle_envs.agents.learned.model_files import load_weights

    from castle_envs.moves import feature_names

    directory = Path(directory)
    arch = check_arch(card.get("policy"))
    if arch["num_features"] != len(feature_names(card["game"])):
        raise ValueError(
            f"{directory}: the model has {arch['num_features']} move features; "
            f"this version's {card['game']} view has "
            f"{len(feature_names(card['game']))}"
        )
    net = build_net(arch["obs_size"], arch["num_features"], arch["hidden"], arch["linear_offset"])
    load_weights(net, directory, card)
    return MovePolicyAgent(net, arch, card["game"], seed=seed, name=name)
