"""The games by name: one place the CLI, the agents and the harness look them up.

Entries name their modules as strings so that ``import castle_envs`` stays cheap and a
game's import errors surface only when that game is used.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GameSpec:
    slug: str                 # command-line name, e.g. "castle-siege"
    title: str
    api: str                  # "gymnasium" or "pettingzoo"
    env_class: str            # "module:Class" of the env
    variant_arg: str          # the keyword that picks a variant
    variants: tuple           # its allowed values, default first
    gym_id: str | None = None
    rules_doc: str = ""
    extra: dict = field(default_factory=dict)

    def load_env_class(self):
        module, _, name = self.env_class.partition(":")
        return getattr(importlib.import_module(module), name)

    def make(self, **kwargs):
        """The env, unwrapped (AEC games: the raw env)."""
        return self.load_env_class()(**kwargs)

    def state_type(self):
        return self.load_env_class().state_type()


GAMES = {
    spec.slug: spec for spec in [
        GameSpec("castle-siege", "Castle Siege", "gymnasium",
                 "castle_envs.castle_siege.env:CastleSiegeEnv", "difficulty",
                 ("very_hard", "easy", "medium", "hard"), "castle_envs/CastleSiege-v0",
                 "castle_envs/castle_siege/RULES.md"),
        GameSpec("castellion", "Castellion", "gymnasium",
                 "castle_envs.castellion.env:CastellionEnv", "level",
                 ("school", "academy", "menace"), "castle_envs/Castellion-v0",
                 "castle_envs/castellion/RULES.md"),
        GameSpec("castle-rooms", "Castle Rooms", "pettingzoo",
                 "castle_envs.castle_rooms.env:raw_env", "num_players", (2, 3, 4), None,
                 "castle_envs/castle_rooms/RULES.md"),
        GameSpec("castell", "Castell", "pettingzoo",
                 "castle_envs.castell.env:raw_env", "num_players", (2, 3, 4), None,
                 "castle_envs/castell/RULES.md"),
    ]
}


def get_game(slug: str) -> GameSpec:
    try:
        return GAMES[slug]
    except KeyError:
        raise ValueError(f"unknown game {slug!r}; choose one of {sorted(GAMES)}") from None
