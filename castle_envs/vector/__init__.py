"""Batched environments: many games per call, stepped by compiled kernels (numba).

``castle_envs.make_vec("castle-siege", num_envs=4096, difficulty="hard")`` returns a
``gymnasium.vector.VectorEnv`` with the single env's observation, action and mask layouts,
same-step autoreset and ``action_masks()`` of shape (num_envs, n_actions). Without numba
(the ``fast`` extra) the same kernels run as plain Python, with a warning.
"""
from __future__ import annotations

from ._jit import HAVE_NUMBA, INSTALL_HINT

VECTOR_GAMES = {"castle-siege": "castle_envs.vector.castle_siege:CastleSiegeVectorEnv"}
#: single Gymnasium envs on the same compiled kernels (drop-ins for the Python envs)
COMPILED_SINGLE = {"castle-siege": "castle_envs.vector.single:CompiledCastleSiegeEnv"}


def make_vec(game: str, num_envs: int, **kwargs):
    """A batched ``gymnasium.vector.VectorEnv`` of ``game``; ``kwargs`` are the single env's
    keyword arguments plus ``copy`` and ``parallel`` (see the env class)."""
    import importlib

    from ..registry import get_game

    get_game(game)   # unknown names: the standard error listing the games
    if game not in VECTOR_GAMES:
        raise ValueError(f"no batched env for {game!r} yet; available: {sorted(VECTOR_GAMES)}")
    module, _, name = VECTOR_GAMES[game].partition(":")
    return getattr(importlib.import_module(module), name)(num_envs, **kwargs)


def make_single(game: str, **kwargs):
    """The compiled single env of ``game`` (same API and games as the Python env)."""
    import importlib

    if game not in COMPILED_SINGLE:
        raise ValueError(f"no compiled single env for {game!r}; available: {sorted(COMPILED_SINGLE)}")
    module, _, name = COMPILED_SINGLE[game].partition(":")
    return getattr(importlib.import_module(module), name)(**kwargs)


__all__ = ["make_vec", "make_single", "VECTOR_GAMES", "COMPILED_SINGLE", "HAVE_NUMBA",
           "INSTALL_HINT"]
