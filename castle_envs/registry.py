"""The games by name: one place the CLI, the agents and the harness look them up.

Entries name their modules as strings so that ``import castle_envs`` stays cheap and a
game's import errors surface only when that game is used.

Each entry describes its game to the shared code, which reads these attributes instead of
comparing slugs: whether it is a solitaire, its renderer, its compiled envs and its
move-feature view.
The attributes name objects of the environment library as ``"module:name"`` strings; nothing
here imports them, the code that uses one loads it (``load``). What plays a game (agents,
heuristics, solvers) registers with the lab's own registries, never here.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .core.jit import HAVE_NUMBA, INSTALL_HINT


@dataclass(frozen=True)
class GameSpec:
    slug: str  # command-line name, e.g. "castle-siege"
    title: str
    api: str  # "gymnasium" or "pettingzoo"
    env_class: str  # "module:Class" of the env
    variant_arg: str  # the keyword that picks a variant
    variants: tuple  # its allowed values, default first
    gym_id: str | None = None
    rules_doc: str = ""
    extra: dict = field(default_factory=dict)
    #: the module with ``render_ansi``, ``render_rgb``, ``render_svg`` and ``events`` (and
    #: what the play and replay commands read from it: ``LEGEND``, ``describe``, ...)
    renderer: str = ""
    #: ``"module:Class"`` of the batched env on compiled kernels (``make_vec``) and of the
    #: compiled single env (``make_single``), for a game with compiled kernels
    vector_env: str | None = None
    compiled_env: str | None = None
    #: ``"module:Class"`` of the move-feature view (``castle_envs.moves``), and its default
    #: capacity (rows)
    move_view: str | None = None
    move_capacity: int = 0
    #: the variants in the game's own order (easiest first), where it is not ``variants``'
    #: (which lists the default first)
    variant_order: tuple = ()

    @property
    def ordered_variants(self) -> tuple:
        """The variants in the game's own order: easiest first, fewest players first."""
        return self.variant_order or self.variants

    @property
    def solitaire(self) -> bool:
        """A one-player Gymnasium game (else a PettingZoo AEC game of 2-4 players)."""
        return self.api == "gymnasium"

    def load_env_class(self) -> Any:
        return load(self.env_class)

    def load_renderer(self) -> ModuleType:
        return importlib.import_module(self.renderer)

    def make(self, **kwargs: Any) -> Any:
        """The env, unwrapped (AEC games: the raw env)."""
        return self.load_env_class()(**kwargs)

    def state_type(self) -> Any:
        return self.load_env_class().state_type()


def load(target: Any) -> Any:
    """The object a ``"module:name"`` string names (``module`` alone: the module); any
    other ``target`` is that object already (registries take either)."""
    if not isinstance(target, str):
        return target
    module, _, name = target.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, name) if name else loaded


GAMES = {
    spec.slug: spec
    for spec in [
        GameSpec(
            "castle-siege",
            "Castle Siege",
            "gymnasium",
            "castle_envs.castle_siege.env:CastleSiegeEnv",
            "difficulty",
            ("very_hard", "easy", "medium", "hard"),
            "castle_envs/CastleSiege-v0",
            "castle_envs/castle_siege/RULES.md",
            renderer="castle_envs.castle_siege.render",
            vector_env="castle_envs.castle_siege.vector:CastleSiegeVectorEnv",
            compiled_env="castle_envs.castle_siege.compiled:CompiledCastleSiegeEnv",
            move_view="castle_envs.moves:SiegeMoves",
            move_capacity=256,
            variant_order=("easy", "medium", "hard", "very_hard"),
        ),
        GameSpec(
            "castellion",
            "Castellion",
            "gymnasium",
            "castle_envs.castellion.env:CastellionEnv",
            "level",
            ("school", "academy", "menace"),
            "castle_envs/Castellion-v0",
            "castle_envs/castellion/RULES.md",
            renderer="castle_envs.castellion.render",
            vector_env="castle_envs.castellion.vector:CastellionVectorEnv",
            compiled_env="castle_envs.castellion.vector:CompiledCastellionEnv",
            move_view="castle_envs.moves:CastellionMoves",
            move_capacity=137,
        ),
        GameSpec(
            "castle-rooms",
            "Castle Rooms",
            "pettingzoo",
            "castle_envs.castle_rooms.env:raw_env",
            "num_players",
            (2, 3, 4),
            None,
            "castle_envs/castle_rooms/RULES.md",
            renderer="castle_envs.castle_rooms.render",
            move_view="castle_envs.castle_rooms.moves:RoomsMoves",
            move_capacity=109,
        ),
        GameSpec(
            "castell",
            "Castell",
            "pettingzoo",
            "castle_envs.castell.env:raw_env",
            "num_players",
            (2, 3, 4),
            None,
            "castle_envs/castell/RULES.md",
            renderer="castle_envs.castell.render",
            move_view="castle_envs.castell.moves:CastellMoves",
            move_capacity=395,
        ),
    ]
}


def get_game(slug: str) -> GameSpec:
    try:
        return GAMES[slug]
    except KeyError:
        raise ValueError(f"unknown game {slug!r}; choose one of {sorted(GAMES)}") from None


#: the batched envs on compiled kernels, by game (each game spec's ``vector_env``)
VECTOR_GAMES = {slug: spec.vector_env for slug, spec in GAMES.items() if spec.vector_env}
#: single Gymnasium envs on the same compiled kernels (drop-ins for the Python envs; each
#: game spec's ``compiled_env``)
COMPILED_SINGLE = {slug: spec.compiled_env for slug, spec in GAMES.items() if spec.compiled_env}


def make_vec(game: str, num_envs: int, **kwargs: Any) -> Any:
    """A batched ``gymnasium.vector.VectorEnv`` of ``game``; ``kwargs`` are the single env's
    keyword arguments plus ``copy``, ``threads`` and ``parallel`` (see the env class):
    ``threads=N`` steps the batch as N contiguous row ranges on N threads (identical results);
    ``parallel=True`` picks one thread per core, each with at least 256 envs."""
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


def _per_env(spec: GameSpec, num_envs: int, kwargs: dict, warning: str, stacklevel: int) -> Any:
    """The Python envs of ``spec`` stepped one by one (``PerEnvVectorEnv``), after a warning
    (``stacklevel``: counted from here); the threading keywords do not apply to them."""
    from castle_envs.core.per_env import PerEnvVectorEnv

    kwargs.pop("parallel", None)
    kwargs.pop("threads", None)
    warnings.warn(warning, stacklevel=stacklevel)
    return PerEnvVectorEnv(spec.load_env_class(), num_envs, **kwargs)


def gym_vector_env(game: str, num_envs: int = 1, **kwargs: Any) -> Any:
    """What ``gymnasium.make_vec(id, num_envs)`` gives (the ids' ``vector_entry_point``): the
    compiled batched env; without numba, the Python envs in a same-step-autoreset
    ``SyncVectorEnv`` (``PerEnvVectorEnv``: the same API, and faster than the kernels run as
    plain Python), with a warning naming the ``fast`` extra."""
    if HAVE_NUMBA:
        return make_vec(game, num_envs, **kwargs)
    return _per_env(
        get_game(game),
        num_envs,
        kwargs,
        f"numba is not installed: gymnasium.make_vec steps {num_envs} Python "
        f"{game} envs one by one (same-step autoreset); {INSTALL_HINT}",
        stacklevel=4,
    )


def make_single(game: str, **kwargs: Any) -> Any:
    """The compiled single env of ``game`` (same API and games as the Python env)."""
    if game not in COMPILED_SINGLE:
        raise ValueError(
            f"no compiled single env for {game!r}; available: {sorted(COMPILED_SINGLE)}"
        )
    module, _, name = COMPILED_SINGLE[game].partition(":")
    return getattr(importlib.import_module(module), name)(**kwargs)
