"""The thin Gymnasium layer shared by the solitaire games.

A game supplies its ``GameState`` factory, observation encoder and renderers; this class
turns them into a ``gymnasium.Env`` with a flat ``Discrete`` action space and the action
mask three ways: ``info["action_mask"]``, ``action_masks()`` (sb3-contrib's MaskablePPO),
and, for vector envs, ``info["action_mask"]`` stacked by Gymnasium (or
``envs.call("action_masks")``).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import gymnasium as gym
import numpy as np

from .env_common import DEFAULT_ILLEGAL_ACTION, GameEnvMixin, flat_space, flatten, screen_action
from .errors import EpisodeOverError
from .options import check_choice
from .state import GameState


class MaskedSolitaireEnv(GameEnvMixin, gym.Env):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    #: option keys ``reset(options=...)`` accepts, beyond those the game parses itself
    reset_option_keys: tuple[str, ...] = ()

    #: ``observation=``: ``"vector"`` (the game's Box; the mask in ``info["action_mask"]``
    #: and ``action_masks()``), or ``"flat"`` (that vector followed by the mask, one Box)
    observation_modes = ("vector", "flat")

    def __init__(
        self,
        render_mode: str | None = None,
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 1000,
        observation: str = "vector",
    ) -> None:
        self._set_common(render_mode, illegal_action, illegal_action_penalty, max_episode_steps)
        self.observation_mode = check_choice("observation", observation, self.observation_modes)
        self.state: GameState | None = None
        self._steps = 0
        self._done = False

    def _set_spaces(self, vector: gym.spaces.Box, num_actions: int) -> None:
        """The action space and the observation space of the chosen ``observation`` form."""
        self.action_space = gym.spaces.Discrete(num_actions)
        self.observation_space = (
            flat_space(vector, num_actions) if self.observation_mode == "flat" else vector
        )

    def _present(self, state: GameState) -> np.ndarray:
        obs = self.observe_state(state)
        if self.observation_mode == "flat":
            return flatten(obs, state.legal_action_mask())
        return obs

    # --- what each game provides -----------------------------------------------------------
    @abstractmethod
    def new_state(self, rng: np.random.Generator, options: dict) -> GameState: ...

    @abstractmethod
    def observe_state(self, state: GameState) -> np.ndarray: ...

    def reward_snapshot(self, state: GameState) -> Any:
        """What ``_reward`` needs of the state before a step (kept cheap: called every step)."""
        return None

    def step_reward(self, before: Any, after: GameState) -> float:
        """Default: the game's return, paid once at the end."""
        return float(after.returns()[0]) if after.is_terminal() else 0.0

    def state_info(self, state: GameState) -> dict:
        return {}

    @abstractmethod
    def render_state_ansi(self, state: GameState) -> str: ...

    @abstractmethod
    def render_state_rgb(self, state: GameState) -> np.ndarray: ...

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        self.state = self.new_state(self.np_random, dict(options or {}))
        self._steps = 0
        self._done = False
        return self._present(self.state), self._full_info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self.state is None:
            raise EpisodeOverError("step() called before reset(): call reset() first")
        if self._done:
            raise EpisodeOverError("step() called after the episode ended; call reset() first")
        action, legal = screen_action(
            action,
            self.state.actions,
            self.state.legal_action_mask(),
            self.illegal_action,
            lambda: self.state,
            type(self).__name__,
        )
        if not legal:
            # pipelines without masks: end the episode with a documented penalty
            self._done = True
            info = self._full_info()
            info["illegal_action"] = True
            return (self._present(self.state), self.illegal_action_penalty, True, False, info)
        before = self.reward_snapshot(self.state)
        self.state.apply_legal(action)  # checked above
        self._steps += 1
        terminated = self.state.is_terminal()
        truncated = not terminated and self._steps >= self.max_episode_steps
        self._done = terminated or truncated
        reward = self.step_reward(before, self.state)
        return self._present(self.state), reward, terminated, truncated, self._full_info()

    @property
    def game_state(self) -> GameState | None:
        """The rules state (``state``; the name every env kind shares)."""
        return self.state

    def action_masks(self) -> np.ndarray:
        """The legal-action mask (``sb3_contrib.MaskablePPO`` calls this)."""
        if self.state is None:
            raise EpisodeOverError("action_masks() called before reset(): call reset() first")
        return self.state.legal_action_mask().copy()

    @classmethod
    @abstractmethod
    def state_type(cls) -> type[GameState]: ...

    def _full_info(self) -> dict[str, Any]:
        # the same keys and types at every step (numbers, bools, arrays): replay buffers and
        # vector envs stack them
        state = self.state
        assert state is not None  # called after reset()
        info = self.state_info(state)
        info["action_mask"] = state.legal_action_mask().copy()
        if self.illegal_action == "penalty":
            info["illegal_action"] = False
        return info
