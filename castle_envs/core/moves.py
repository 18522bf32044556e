"""What every game's move-feature view shares (``castle_envs.moves`` has the views and the
wrappers): ``capacity`` rows of ``num_features``, the zeroed arrays one view fills, the
view computed in Python from a rules state, and the observation space of the view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np


def check_capacity(capacity: Any) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ValueError(f"capacity must be a positive int, got {capacity!r}")
    return int(capacity)


def feature_columns(names: tuple[str, ...]) -> dict[str, int]:
    """Each feature name's column. A name given twice is refused: a dict would keep only its
    last column, and the first would be filled under no name."""
    columns = {name: i for i, name in enumerate(names)}
    if len(columns) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"feature names given more than once: {repeated}")
    return columns


def view_spaces(
    obs_space: gym.spaces.Box, num_actions: int, capacity: int, num_features: int
) -> gym.spaces.Dict:
    """The env's observation beside ``capacity`` rows of ``num_features`` move features."""
    return gym.spaces.Dict(
        {
            "observation": obs_space,
            "move_features": gym.spaces.Box(0.0, 1.0, (capacity, num_features), np.float32),
            "move_ids": gym.spaces.Box(0, num_actions - 1, (capacity,), np.int64),
            "move_mask": gym.spaces.MultiBinary(capacity),
        }
    )


class MoveView:
    """What every game's view object shares: ``capacity`` rows of ``num_features``, and the
    zeroed arrays one view fills (``empty()``; ``batch``: a leading batch dimension). A
    subclass names its game (``game``, the registry slug) and its columns
    (``feature_names()``)."""

    game = ""

    def __init__(self, capacity: int, num_features: int) -> None:
        self.capacity = check_capacity(capacity)
        self.num_features = num_features

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        raise NotImplementedError

    def empty(self, batch: int | None = None) -> dict:
        lead = () if batch is None else (batch,)
        return {
            "move_features": np.zeros(lead + (self.capacity, self.num_features), np.float32),
            "move_ids": np.zeros(lead + (self.capacity,), np.int64),
            "move_mask": np.zeros(lead + (self.capacity,), np.int8),
        }


class StateMoves(MoveView):
    """A view computed in Python from the rules state (the games without a kernel). The
    subclass names its game, columns and default capacity in its class line, and gives
    ``rows(state, actions)`` (one row per legal action of the player to act) and
    ``observation(state)``::

        class CastellMoves(StateMoves, game="castell", features=FEATURES, capacity=395):
            rows = staticmethod(move_rows)
    """

    features: tuple[str, ...] = ()
    default_capacity = 1

    def __init_subclass__(
        cls, game: str = "", features: Sequence[str] = (), capacity: int = 1, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        cls.game, cls.features, cls.default_capacity = game, tuple(features), capacity

    def __init__(self, capacity: int | None = None) -> None:
        super().__init__(
            self.default_capacity if capacity is None else capacity, len(self.features)
        )

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        return cls.features

    def rows(self, state: Any, actions: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def observation(self, state: Any) -> np.ndarray:
        raise NotImplementedError

    def from_state(self, state: Any, out: dict | None = None) -> tuple[dict, int]:
        """The view of the player to act (all zero once the game is over) and its count of
        legal moves: rows in increasing action id; past the capacity the lowest ids are kept
        (the default capacity, the whole action space, gives every legal move its row)."""
        out = self.empty() if out is None else out
        for a in out.values():
            a[:] = 0
        if state.is_terminal():
            return out, 0
        legal = np.flatnonzero(state.legal_action_mask())
        rows = self.rows(state, legal[: self.capacity])
        k = len(rows)
        out["move_features"][:k] = rows
        out["move_ids"][:k] = legal[:k]
        out["move_mask"][:k] = 1
        return out, len(legal)


class KernelMoves(MoveView):
    """A view filled by a game's move kernel ``_M`` (``move_rows_batch``) with its scratch:
    the batched env's ``row_args()`` are what ``batch`` takes."""

    _M: Any
    scratch: Any

    def _batch(self, rows: tuple, out: dict, legal: np.ndarray) -> None:
        valid = out["move_mask"].view(np.bool_)
        self._M.move_rows_batch(
            *rows, out["move_features"], out["move_ids"], valid, legal, *self.scratch.args()
        )

    def batch_env(self, env: Any, out: dict, legal: np.ndarray) -> None:
        """Fill ``out`` and ``legal`` from the batched env ``env`` of the view's game."""
        self._batch(env.row_args(), out, legal)
