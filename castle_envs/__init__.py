"""castle-envs: RL environments for four castle-themed tabletop games.

``import castle_envs`` registers the Gymnasium ids ``castle_envs/CastleSiege-v0`` and
``castle_envs/Castellion-v0``; the PettingZoo games are ``castle_envs.castle_rooms_v0`` and
``castle_envs.castell_v0``.
"""
import importlib

import gymnasium

from .registry import GAMES, get_game

__version__ = "0.1.0"

for _spec in GAMES.values():
    if _spec.gym_id is not None and _spec.gym_id not in gymnasium.registry:
        gymnasium.register(id=_spec.gym_id, entry_point=_spec.env_class)

_LAZY_MODULES = {"castle_rooms_v0", "castell_v0"}


def make_vec(game: str, num_envs: int, **kwargs):
    """A batched ``gymnasium.vector.VectorEnv`` of ``game`` ("castle-siege", "castellion")."""
    from .vector import make_vec as _make_vec
    return _make_vec(game, num_envs, **kwargs)


def __getattr__(name):
    # PettingZoo-style modules load on first use so the Gymnasium games import fast.
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'castle_envs' has no attribute {name!r}")


__all__ = ["GAMES", "get_game", "make_vec", "castle_rooms_v0", "castell_v0"]
