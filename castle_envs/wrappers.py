"""Pipeline adapters: one seat of a multi-player AEC game as a single-agent Gymnasium env.

Single-agent learners (Stable-Baselines3, CleanRL scripts) train on the PettingZoo games
through ``SingleAgentEnv``: the learner holds one seat, the other seats are played by the
given opponent policies between the learner's moves. The mask is in
``info["action_mask"]`` and ``action_masks()``, as in the solitaire envs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from .core.actions import action_int
from .core.errors import EpisodeOverError

#: an opponent: ``policy(observation, action_mask, state) -> action`` (``state`` is a clone
#: of the rules state when the policy has ``needs_state = True``, else None)
Policy = Callable[..., int]


class SingleAgentEnv(gym.Env):
    def __init__(
        self,
        aec_env: Any,
        opponents: Sequence[Policy] | Callable[[np.random.Generator], Sequence[Policy]],
        seat: int | str = "random",
    ) -> None:
        """``opponents``: one policy per other seat (reused if shorter), or a function of the
        env's rng returning them anew each episode (self-play pools). ``seat``: the learner's
        seat, or ``"random"`` for a uniformly drawn seat each episode."""
        self.aec = aec_env
        self.num_players = len(aec_env.possible_agents)
        if seat != "random" and not (isinstance(seat, int) and 0 <= seat < self.num_players):
            raise ValueError(f"seat must be 'random' or 0-{self.num_players - 1}, got {seat!r}")
        self.seat_choice = seat
        self._opponent_source = opponents
        agent0 = aec_env.possible_agents[0]
        self.observation_space = aec_env.observation_space(agent0)["observation"]
        self.action_space: gym.spaces.Discrete = aec_env.action_space(agent0)
        self.render_mode = getattr(aec_env, "render_mode", None)
        self.metadata = dict(getattr(aec_env, "metadata", {}))
        self._done = True
        self._last_mask: np.ndarray | None = None

    def _draw_opponents(self) -> list:
        source = self._opponent_source
        chosen = source(self.np_random) if callable(source) else list(source)
        if not chosen:
            raise ValueError("SingleAgentEnv needs at least one opponent policy")
        return [chosen[i % len(chosen)] for i in range(self.num_players - 1)]

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.seat = (
            int(self.np_random.integers(self.num_players))
            if self.seat_choice == "random"
            else self.seat_choice
        )
        others = self._draw_opponents()
        self._policies = {}
        for s in range(self.num_players):
            if s != self.seat:
                self._policies[s] = others.pop(0)
        self.agent = self.aec.possible_agents[self.seat]
        # the deal follows from this env's rng, so reset(seed=...) fixes the whole episode
        self.aec.reset(seed=int(self.np_random.integers(2**31)), options=options)
        self._done = False
        self._reward = 0.0
        obs, info = self._advance()
        return obs, info

    def _advance(self) -> tuple[np.ndarray, dict]:
        """Let the opponents move until the learner must act or the game is over."""
        aec = self.aec
        while aec.agents:
            agent = aec.agent_selection
            obs, reward, terminated, truncated, info = aec.last()
            if agent == self.agent:
                self._reward += reward
                if terminated or truncated:
                    self._done = True
                    self._terminated, self._truncated = terminated, truncated
                return obs["observation"], self._info(obs, info)
            if terminated or truncated:
                aec.step(None)
                continue
            seat = aec.agent_name_mapping[agent]
            policy = self._policies[seat]
            state = aec.game_state.clone() if getattr(policy, "needs_state", False) else None
            action = policy(obs["observation"], obs["action_mask"].astype(bool), state)
            aec.step(int(action))
        # the game ended and every agent has left
        self._done = True
        self._terminated, self._truncated = True, False
        return self._final_obs, {"action_mask": np.zeros(self.action_space.n, dtype=bool)}

    def _info(self, obs: dict, info: dict) -> dict:
        self._final_obs = obs["observation"]
        mask = self._last_mask = obs["action_mask"].astype(bool)
        out = {k: v for k, v in info.items() if k != "action_mask"}
        out["action_mask"] = mask.copy()
        out["seat"] = self.seat
        return out

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done:
            raise EpisodeOverError("step() called after the episode ended; call reset() first")
        self._reward = 0.0
        self.aec.step(action_int(action, type(self).__name__))  # floats refused, not truncated
        obs, info = self._advance()
        reward = self._reward
        if self._done:
            return obs, reward, self._terminated, self._truncated, info
        return obs, reward, False, False, info

    def action_masks(self) -> np.ndarray:
        if self._last_mask is None:
            raise EpisodeOverError("action_masks() called before reset(): call reset() first")
        return self._last_mask.copy()

    def render(self) -> str | np.ndarray | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
