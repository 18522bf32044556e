"""Helpers the subcommands share: picking a game and its variant from the command line."""
from __future__ import annotations

import argparse

from castle_envs.registry import GAMES, GameSpec, get_game


def add_game_arguments(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        parser.add_argument("game", help=f"one of {', '.join(GAMES)}")
    else:
        parser.add_argument("--game", required=True, help=f"one of {', '.join(GAMES)}")
    parser.add_argument("--difficulty", help="Castle Siege: easy, medium, hard, very_hard")
    parser.add_argument("--level", help="Castellion: school, academy, menace")
    parser.add_argument("--players", type=int, help="Castle Rooms / Castell: 2-4 players")


def game_and_variant(args) -> tuple[GameSpec, dict]:
    """The game spec and the env keyword naming its variant (the default when not given)."""
    spec = get_game(args.game)
    given = {"difficulty": args.difficulty, "level": args.level, "num_players": args.players}
    for key, value in given.items():
        if value is not None and key != spec.variant_arg:
            flag = "--players" if key == "num_players" else f"--{key}"
            raise ValueError(f"{flag} does not apply to {spec.slug}; it takes "
                             f"--{'players' if spec.variant_arg == 'num_players' else spec.variant_arg}")
    value = given[spec.variant_arg]
    if value is None:
        value = spec.variants[0]
    if value not in spec.variants:
        raise ValueError(f"unknown {spec.variant_arg} {value!r} for {spec.slug}; "
                         f"choose one of {list(spec.variants)}")
    return spec, {spec.variant_arg: value}


def describer(game: str):
    """``(state, action) -> words`` as the player may read them: the game's render module's
    ``describe`` where it hides something (Castellion's face-down Ordeals), else the state's
    own ``describe_action``."""
    render = __import__(f"castle_envs.{get_game(game).slug.replace('-', '_')}.render",
                        fromlist=["render_ansi"])
    return getattr(render, "describe", lambda state, action: state.describe_action(action))
