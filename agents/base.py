"""The one interface every agent implements.

``act(observation, action_mask, state=None)`` returns a legal action id. ``observation`` is
what the env gives the acting player; ``state`` (optional) is a *clone* of the rules state
for agents that search: such agents must treat hidden parts of it (deck order, opponents'
hands) as unknown and re-sample them from what the player has seen. ``reset(seed)`` makes
an agent's own randomness reproducible.

Two class flags tell a harness what to pass (so it skips work nobody reads):
``needs_state`` (a clone of the rules state) and ``needs_observation`` (the encoded
observation vector; agents that decide from the state alone leave it ``False`` and get
``None``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Agent(ABC):
    name = "agent"
    #: True for agents that need ``state`` passed to ``act``
    needs_state = False
    #: True for agents that read the observation vector (False: the harness may pass None)
    needs_observation = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation, action_mask: np.ndarray, state=None) -> int: ...

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RandomAgent(Agent):
    """Uniform over the legal moves."""

    name = "random"

    def act(self, observation, action_mask, state=None) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 0:
            raise ValueError("no legal action in the mask")
        return int(legal[self.rng.integers(len(legal))])


class PolicyAgent(Agent):
    """An agent from a function ``policy(state, rng) -> action`` that reads only what the
    acting player may see (the games' hand-written baselines). It is given the live state
    read-only by harnesses that promise not to change it during ``act``; a clone otherwise."""

    needs_state = True

    def __init__(self, policy, name: str, seed: int | None = None):
        super().__init__(seed)
        self.policy = policy
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if hasattr(self.policy, "reset"):  # a policy that keeps per-game state
            self.policy.reset()

    def act(self, observation, action_mask, state=None) -> int:
        if state is None:
            raise ValueError(f"the {self.name} agent needs the game state")
        return int(self.policy(state, self.rng))
