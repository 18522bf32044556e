"""A trained MaskablePPO policy as an agent (``model:DIR`` or ``ppo:DIR`` on the command line).

The policy comes from a safe model directory (``castle_envs.agents.saved``: JSON plus
tensors, nothing unpickled). ``act`` takes the env's observation vector (a PettingZoo-style
dict is unpacked) and the mask, and returns the policy's most probable legal action.

A Stable-Baselines3 ``.zip`` holds pickled objects that run code when loaded, so
``ppo:FILE.zip`` is refused unless the spec says the file is the user's own
(``ppo:FILE.zip,trust_pickle=1``).
"""
from __future__ import annotations

import os

import numpy as np

from .base import Agent


class PPOAgent(Agent):
    needs_observation = True

    def __init__(self, policy, name: str = "ppo", seed: int | None = None,
                 deterministic: bool = True):
        super().__init__(seed)
        self.policy = policy
        self.name = name
        self.deterministic = deterministic

    @classmethod
    def from_spec(cls, rest: str, game: str, seed: int | None = None) -> "PPOAgent":
        """``ppo:DIR`` (a safe model directory) or ``ppo:FILE.zip,trust_pickle=1``."""
        from .registry import parse_options
        from .saved import load_agent, load_sb3_zip_trusted

        path, _, opts = rest.strip().partition(",")
        path = path.strip()
        options = parse_options(opts, {"trust_pickle": _flag}, "ppo") if opts else {}
        if not path:
            raise ValueError("ppo agent needs a model path: ppo:models/DIR")
        if os.path.isdir(path):
            if options:
                raise ValueError("trust_pickle applies to .zip files only; a model directory "
                                 "loads safely without it")
            agent = load_agent(path, game, seed)
            agent.name = f"ppo:{path}"
            return agent
        if not (os.path.isfile(path) or os.path.isfile(path + ".zip")):
            raise FileNotFoundError(f"no MaskablePPO model at {path!r}")
        if not options.get("trust_pickle"):
            raise ValueError(
                f"refused {path!r}: a Stable-Baselines3 zip holds pickled objects that can run "
                "code when loaded. Load a safe model directory instead (model:DIR, what "
                "castle-envs train writes), or, for a file you made yourself, "
                f"ppo:{path},trust_pickle=1")
        model = load_sb3_zip_trusted(path)
        return cls(model.policy, f"ppo:{rest.strip()}", seed)

    def act(self, observation, action_mask, state=None) -> int:
        if isinstance(observation, dict):
            observation = observation["observation"]
        action, _ = self.policy.predict(np.asarray(observation, dtype=np.float32),
                                        action_masks=np.asarray(action_mask, bool),
                                        deterministic=self.deterministic)
        return int(action)


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise ValueError(f"expected 1 or 0, got {text!r}")
