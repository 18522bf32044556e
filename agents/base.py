"""The one interface every agent implements.

``act(observation, action_mask, state=None)`` returns a legal action id. ``observation`` is
what the env gives the acting player; ``state`` (optional) is a *clone* of the rules state
for agents that search: such agents must treat hidden parts of it (deck order, opponents'
hands) as unknown and re-sample them from what the player has seen. ``reset(seed)`` makes
an agent's own randomness reproducible.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Agent(ABC):
    name = "agent"
    #: True for agents that need ``state`` passed to ``act``
    needs_state = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation, action_mask: np.ndarray, state=None) -> int: ...


class RandomAgent(Agent):
    """Uniform over the legal moves."""
    name = "random"

    def act(self, observation, action_mask, state=None) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 0:
            raise ValueError("no legal action in the mask")
        return int(legal[self.rng.integers(len(legal))])
