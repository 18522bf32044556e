"""The batched API for games without a compiled kernel yet: one Python env per slot.

``PerEnvVectorEnv`` is ``gymnasium.vector.SyncVectorEnv`` with same-step autoreset (as the
compiled envs) and ``action_masks()`` stacked to (num_envs, n_actions), so code written for
``make_vec`` runs on every Gymnasium game; it is as fast as the single env times num_envs.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from .actions import check_action
from .errors import ActionTypeError


class PerEnvVectorEnv(SyncVectorEnv):
    def __init__(
        self, env_class: type[gymnasium.Env], num_envs: int, copy: bool = True, **kwargs: Any
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        env_class(**kwargs)  # bad options fail here, once, with the env's own message
        # partial, not a lambda: the env pickles
        super().__init__(
            [partial(env_class, **kwargs) for _ in range(num_envs)],
            copy=copy,
            autoreset_mode=AutoresetMode.SAME_STEP,
        )

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """``SyncVectorEnv.step``, after every action is checked against the action space:
        one outside it raises ``ActionSpaceError`` naming its env before any env steps."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ActionTypeError(
                f"{type(self).__name__}: actions must be {self.num_envs} integer action ids, "
                f"got shape {actions.shape} dtype {actions.dtype}"
            )
        n = int(self.single_action_space.n)  # type: ignore[attr-defined]  # Discrete
        for i, action in enumerate(actions):
            check_action(action, n, f"{type(self).__name__} env {i}")
        return super().step(actions)

    def action_masks(self) -> np.ndarray:
        """(num_envs, n_actions) bool: the legal actions of every env's current position."""
        return np.stack(self.call("action_masks"))
