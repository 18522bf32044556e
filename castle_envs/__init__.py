"""castle-envs: RL environments for four castle-themed tabletop games.

``import castle_envs`` registers the Gymnasium ids ``castle_envs/CastleSiege-v0`` and
``castle_envs/Castellion-v0``; the PettingZoo games are ``castle_envs.castle_rooms_v0`` and
``castle_envs.castell_v0``.

Each id also has a ``vector_entry_point``: ``gymnasium.make_vec(id, num_envs)`` (or
``vectorization_mode="vector_entry_point"``) gives the compiled batched env
(``castle_envs.make_vec``); without numba (the ``fast`` extra) it gives the Python envs in a
same-step-autoreset ``SyncVectorEnv`` instead, with a warning. ``vectorization_mode="sync"``
still gives Gymnasium's own ``SyncVectorEnv``.

The ids are registered with ``disable_env_checker=True``: Gymnasium 1.4's
``PassiveEnvChecker`` breaks for good after a ``reset`` that raised (a bad deck, caught,
then a good reset: the next ``step`` fails with ``TypeError: cannot unpack non-iterable
NoneType``), and its checks are the ones this project's tests run with
``gymnasium.utils.env_checker.check_env`` on every env. ``gymnasium.make(id,
disable_env_checker=False)`` turns it back on.
"""

from __future__ import annotations

import importlib
from functools import partial
from importlib import metadata
from typing import TYPE_CHECKING, Any

import gymnasium

from .registry import GAMES, get_game

if TYPE_CHECKING:
    import numpy as np

try:  # the installed distribution's version (pyproject.toml); a bare checkout falls back
    __version__ = metadata.version("castle-envs")
except metadata.PackageNotFoundError:
    __version__ = "0.6.0"


def _vector_entry_point(game: str, num_envs: int = 1, **kwargs: Any) -> Any:
    from castle_envs.registry import gym_vector_env

    return gym_vector_env(game, num_envs, **kwargs)


for _spec in GAMES.values():
    if _spec.gym_id is not None and _spec.gym_id not in gymnasium.registry:
        gymnasium.register(
            id=_spec.gym_id,
            entry_point=_spec.env_class,
            vector_entry_point=partial(_vector_entry_point, _spec.slug),
            disable_env_checker=True,
        )

_LAZY_MODULES = {"castle_rooms_v0", "castell_v0"}


def sample_masked(masks: Any, rng: Any = None, no_legal: int = 0) -> int | np.ndarray:
    """A uniformly random legal action per mask row (see ``castle_envs.core.masks``)."""
    from .core.masks import sample_masked as _sample

    return _sample(masks, rng, no_legal)


def make_vec(game: str, num_envs: int, **kwargs: Any) -> Any:
    """A batched ``gymnasium.vector.VectorEnv`` of ``game`` ("castle-siege", "castellion")."""
    from castle_envs.registry import make_vec as _make_vec

    return _make_vec(game, num_envs, **kwargs)


def __getattr__(name: str) -> Any:
    # PettingZoo-style modules load on first use so the Gymnasium games import fast.
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'castle_envs' has no attribute {name!r}")


__all__ = ["GAMES", "get_game", "make_vec", "sample_masked", "castle_rooms_v0", "castell_v0"]
