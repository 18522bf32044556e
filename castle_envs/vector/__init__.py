"""Batched environments: many games per call, stepped by compiled kernels (numba).

``castle_envs.make_vec("castle-siege", num_envs=4096, difficulty="hard")`` (or
``make_vec("castellion", 4096, level="menace")``) returns a ``gymnasium.vector.VectorEnv``
with the single env's observation, action and mask layouts, same-step autoreset and
``action_masks()`` of shape (num_envs, n_actions); env ``i`` reset with seed ``s`` plays the
single env's games after ``reset(seed=s + i)``. Both Gymnasium games have kernels
(``castle_siege.kernel``, ``castellion.kernel``). Without numba (the ``fast`` extra) the same
kernels run as plain Python, with a warning. A Gymnasium game without a kernel would get
the same API from one Python env per slot (``PerEnvVectorEnv``), with a warning.
"""

from __future__ import annotations

from ..registry import GAMES
from ..core.jit import HAVE_NUMBA, INSTALL_HINT

#: the batched envs on compiled kernels, by game (each game spec's ``vector_env``)
VECTOR_GAMES = {slug: spec.vector_env for slug, spec in GAMES.items() if spec.vector_env}
#: single Gymnasium envs on the same compiled kernels (drop-ins for the Python envs; each
#: game spec's ``compiled_env``)
COMPILED_SINGLE = {slug: spec.compiled_env for slug, spec in GAMES.items() if spec.compiled_env}


def make_vec(game: str, num_envs: int, **kwargs):
    """A batched ``gymnasium.vector.VectorEnv`` of ``game``; ``kwargs`` are the single env's
    keyword arguments plus ``copy``, ``threads`` and ``parallel`` (see the env class):
    ``threads=N`` steps the batch as N contiguous row ranges on N threads (identical results);
    ``parallel=True`` picks one thread per core, each with at least 256 envs."""
    import importlib

    from ..registry import get_game

    spec = get_game(game)  # unknown names: the standard error listing the games
    if game in VECTOR_GAMES:
        module, _, name = VECTOR_GAMES[game].partition(":")
        return getattr(importlib.import_module(module), name)(num_envs, **kwargs)
    if not spec.solitaire:
        raise ValueError(
            f"no batched env for {game!r} (a PettingZoo game); batched Gymnasium "
            f"games: {sorted(VECTOR_GAMES)}"
        )
    return _per_env(
        spec,
        num_envs,
        kwargs,
        f"{game} has no compiled kernel yet: make_vec steps {num_envs} Python envs "
        f"one by one (gymnasium SyncVectorEnv, same-step autoreset)",
        stacklevel=3,
    )


def _per_env(spec, num_envs: int, kwargs: dict, warning: str, stacklevel: int):
    """The Python envs of ``spec`` stepped one by one (``PerEnvVectorEnv``), after a warning
    (``stacklevel``: counted from here); the threading keywords do not apply to them."""
    import warnings

    from .per_env import PerEnvVectorEnv

    kwargs.pop("parallel", None)
    kwargs.pop("threads", None)
    warnings.warn(warning, stacklevel=stacklevel)
    return PerEnvVectorEnv(spec.load_env_class(), num_envs, **kwargs)


def gym_vector_env(game: str, num_envs: int = 1, **kwargs):
    """What ``gymnasium.make_vec(id, num_envs)`` gives (the ids' ``vector_entry_point``): the
    compiled batched env; without numba, the Python envs in a same-step-autoreset
    ``SyncVectorEnv`` (``PerEnvVectorEnv``: the same API, and faster than the kernels run as
    plain Python), with a warning naming the ``fast`` extra."""
    if HAVE_NUMBA:
        return make_vec(game, num_envs, **kwargs)
    from ..registry import get_game

    return _per_env(
        get_game(game),
        num_envs,
        kwargs,
        f"numba is not installed: gymnasium.make_vec steps {num_envs} Python "
        f"{game} envs one by one (same-step autoreset); {INSTALL_HINT}",
        stacklevel=4,
    )


def make_single(game: str, **kwargs):
    """The compiled single env of ``game`` (same API and games as the Python env)."""
    import importlib

    if game not in COMPILED_SINGLE:
        raise ValueError(
            f"no compiled single env for {game!r}; available: {sorted(COMPILED_SINGLE)}"
        )
    module, _, name = COMPILED_SINGLE[game].partition(":")
    return getattr(importlib.import_module(module), name)(**kwargs)


__all__ = [
    "make_vec",
    "make_single",
    "gym_vector_env",
    "VECTOR_GAMES",
    "COMPILED_SINGLE",
    "HAVE_NUMBA",
    "INSTALL_HINT",
]
