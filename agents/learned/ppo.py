"""A trained MaskablePPO policy as an agent (``model:DIR`` or ``ppo:DIR`` on the command line).

The policy comes from a safe model directory (``castle_envs.agents.learned.saved``: JSON plus
tensors, nothing unpickled). ``act`` takes the env's observation vector (a PettingZoo-style
dict is unpacked) and the mask, and returns the policy's most probable legal action.

A Stable-Baselines3 ``.zip`` holds pickled objects that run code when loaded, so
``ppo:FILE.zip`` is refused unless the spec says the file is the user's own
(``ppo:FILE.zip,trust_pickle=1``).
"""

from __future__ import annotations

import numpy as np
from castle_envs.agents.base import Agent


class PPOAgent(Agent):
    needs_observation = True

    def __init__(
        self, policy, name: str = "ppo", seed: int | None = None, deterministic: bool = True
    ):
        super().__init__(seed)
        self.policy = policy
        self.name = name
        self.deterministic = deterministic

    def act(self, observation, action_mask, state=None) -> int:
        if isinstance(observation, dict):
            observation = observation["observation"]
        action, _ = self.policy.predict(
            np.asarray(observation, dtype=np.float32),
            action_masks=np.asarray(action_mask, bool),
            deterministic=self.deterministic,
        )
        return int(action)
