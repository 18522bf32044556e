"""``castle-envs``: one command line for playing, benchmarking, evaluating and training.

Each subcommand lives in its own module of ``experiments`` with ``add_parser(subparsers)``
and ``run(args) -> int``; ``COMMANDS`` lists them (a listed module that is not there yet is
skipped, so work on a new subcommand never breaks the others).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

COMMANDS = ("demo", "play", "bench", "evaluate", "tournament", "solve", "train")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="castle-envs", description="RL environments for four castle-themed tabletop games")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        if importlib.util.find_spec(f"castle_envs.experiments.{name}") is not None:
            importlib.import_module(f"castle_envs.experiments.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (ValueError, FileNotFoundError) as err:
        # bad input from the user: a message and a non-zero exit, never a traceback
        print(f"castle-envs {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
