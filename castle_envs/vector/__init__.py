"""Deprecated alias of the batched envs' old home; it goes in the next release.

``castle_envs.make_vec``, ``castle_envs.registry.make_single`` and each game package's
``vector`` module (``castle_envs.castle_siege.vector.CastleSiegeVectorEnv``) are the paths to
use. The names below still import from here, with a ``DeprecationWarning`` naming the new
path.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: old name -> the module that holds it now
MOVED = {
    "make_vec": "castle_envs.registry",
    "make_single": "castle_envs.registry",
    "gym_vector_env": "castle_envs.registry",
    "VECTOR_GAMES": "castle_envs.registry",
    "COMPILED_SINGLE": "castle_envs.registry",
    "HAVE_NUMBA": "castle_envs.core.jit",
    "INSTALL_HINT": "castle_envs.core.jit",
    "CastleSiegeVectorEnv": "castle_envs.castle_siege.vector",
    "CompiledCastleSiegeEnv": "castle_envs.castle_siege.compiled",
    "CastellionVectorEnv": "castle_envs.castellion.vector",
    "CompiledCastellionEnv": "castle_envs.castellion.vector",
    "PerEnvVectorEnv": "castle_envs.core.per_env",
}


def __getattr__(name: str) -> Any:
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"castle_envs.vector.{name} moved to {MOVED[name]}.{name}; the old path goes in the "
        "next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(MOVED[name]), name)


__all__ = sorted(MOVED)
