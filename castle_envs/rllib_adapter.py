"""The multi-player games as RLlib ``MultiAgentEnv``s, in the shape RLlib's masking modules read.

    from castle_envs.rllib_adapter import RLlibTurnBasedEnv
    env = RLlibTurnBasedEnv({"game": "castle-rooms", "num_players": 2})
    obs, infos = env.reset(seed=0)           # {"player_0": {"observations", "action_mask"}}
    obs, rewards, terminateds, truncateds, infos = env.step({"player_0": action})

Only this module imports ray; the rest of the package never does (the ``distributed`` extra).

Why not RLlib's own ``PettingZooEnv`` wrapper: RLlib's action-masking module
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``)
reads observations ``{"observations": ..., "action_mask": ...}`` with a float mask it can
take the log of, while our PettingZoo envs give ``{"observation": ..., "action_mask": int8}``.
The adapter renames and casts, and nothing else: the rules, rewards and errors are the
PettingZoo env's.

Turn-taking (RLlib's convention for turn-based games)
    Each step returns an observation only for the agent to act next, so RLlib asks only that
    agent for an action. A turn may be several steps of the same agent (Castle Rooms plays
    cards until ``EndTurn``). Rewards are 0 until the game ends; the step that ends it returns
    every agent's final observation and reward (the game's +1 per winner, -1 otherwise) with
    ``terminateds["__all__"] = True`` (or ``truncateds`` at ``max_episode_steps``).
Illegal actions
    Raise ``IllegalActionError``: the adapter asks the env for ``illegal_action="raise"``
    (the envs' own default is ``"penalty"``), so a training run that finishes proves the
    masked policy never picked one. Pass ``illegal_action="penalty"`` in the env config to
    end the game with a penalty instead.
env_config
    ``game``: a multi-player slug of ``castle_envs.registry`` ("castle-rooms" by default,
    "castell"); every other key goes to that game's ``raw_env`` (``num_players``,
    rule options, ``max_episode_steps``, ...).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from castle_envs.registry import get_game


class RLlibTurnBasedEnv(MultiAgentEnv):
    def __init__(self, config: dict | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        spec = get_game(config.pop("game", "castle-rooms"))
        if spec.solitaire:
            raise ValueError(
                f"{spec.slug} is a single-agent Gymnasium game; the RLlib adapter "
                "is for the multi-player (PettingZoo) games"
            )
        self.game = spec.slug
        config.setdefault("illegal_action", "raise")  # a masked policy never picks one
        self.aec = spec.make(**config)
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        inner = self.aec.observation_space(self.agents[0])
        n_actions = int(self.aec.action_space(self.agents[0]).n)
        space = gymnasium.spaces.Dict(
            {
                "observations": inner["observation"],
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (n_actions,), dtype=np.float32),
            }
        )
        self.observation_spaces = {a: space for a in self.agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.agents}
        # (RLlib types agent ids as any hashable; these are the AEC env's str names)
        self.observation_space = gymnasium.spaces.Dict(self.observation_spaces)  # type: ignore[arg-type]
        self.action_space = gymnasium.spaces.Dict(self.action_spaces)  # type: ignore[arg-type]

    def _obs(self, agent: str) -> dict:
        raw = self.aec.observe(agent)
        return {
            "observations": raw["observation"],
            "action_mask": raw["action_mask"].astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.aec.reset(seed=seed, options=options)
        agent = self.aec.agent_selection
        return {agent: self._obs(agent)}, {}

    def step(self, action_dict: dict) -> Any:
        agent = self.aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn; got actions for {sorted(action_dict)}")
        self.aec.step(action_dict[agent])
        aec = self.aec
        terminated = all(aec.terminations.values())
        truncated = not terminated and all(aec.truncations.values())
        if terminated or truncated:
            # Everyone sees the end and gets the game's return.
            everyone = list(aec.agents)
            obs = {a: self._obs(a) for a in everyone}
            rewards = {a: float(aec.rewards[a]) for a in everyone}
            infos = {
                a: {k: v for k, v in aec.infos[a].items() if k != "action_mask"} for a in everyone
            }
            return (obs, rewards, {"__all__": terminated}, {"__all__": truncated}, infos)
        nxt = aec.agent_selection
        return ({nxt: self._obs(nxt)}, {agent: 0.0}, {"__all__": False}, {"__all__": False}, {})

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
