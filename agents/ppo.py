"""A trained sb3-contrib ``MaskablePPO`` policy as an agent (``ppo:PATH`` on the command line).

The model is loaded on the CPU once; ``act`` takes the env's observation vector (a
PettingZoo-style dict is unpacked, or built, to match the model's observation space) and
the mask, and returns the model's most probable legal action (deterministic).
"""
from __future__ import annotations

import os

import numpy as np

from .base import Agent


class PPOAgent(Agent):
    needs_observation = True

    def __init__(self, path: str, seed: int | None = None, deterministic: bool = True):
        super().__init__(seed)
        if not path:
            raise ValueError("ppo agent needs a model path: ppo:PATH")
        if not (os.path.isfile(path) or os.path.isfile(path + ".zip")):
            raise FileNotFoundError(f"no MaskablePPO model at {path!r}")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:
            raise ValueError(f"ppo agents need the 'train' extra (sb3-contrib): {err}") from None
        try:
            self.model = MaskablePPO.load(path, device="cpu")
        except Exception as err:   # a zip that is not a MaskablePPO model
            raise ValueError(f"cannot load a MaskablePPO model from {path!r}: {err}") from None
        self.path = path
        self.deterministic = deterministic
        self.name = f"ppo:{path}"
        import gymnasium
        self._dict_obs = isinstance(self.model.observation_space, gymnasium.spaces.Dict)

    def act(self, observation, action_mask, state=None) -> int:
        if isinstance(observation, dict) and not self._dict_obs:
            observation = observation["observation"]
        elif self._dict_obs and not isinstance(observation, dict):
            observation = {"observation": observation,
                           "action_mask": np.asarray(action_mask, dtype=np.int8)}
        action, _ = self.model.predict(observation, action_masks=np.asarray(action_mask, bool),
                                       deterministic=self.deterministic)
        return int(action)
