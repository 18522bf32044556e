"""``castle-envs``: one command line for playing, benchmarking, evaluating and training.

Each subcommand lives in its own module of ``castle_envs.experiments`` with
``add_parser(subparsers)`` and ``run(args) -> int``. ``COMMANDS`` lists them with a line of
help, so that ``castle-envs --help`` imports none of them: a subcommand's module is imported
only when it runs, and one that needs an optional extra (``train`` needs PyYAML, torch and
sb3-contrib) says which extra to install instead of failing at start.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from castle_envs import __version__

#: name -> one line of help (the module is castle_envs.experiments.<name>)
COMMANDS = {
    "demo": "play agents on Castle Siege Very Hard, print win rates",
    "play": "play a game in the terminal",
    "replay": "replay a game record in the terminal and as an HTML page",
    "bench": "steps per second: rules core, env, compiled and batched envs",
    "evaluate": "win rates of agents on common deals, with intervals",
    "tournament": "agents against each other: win rates and ratings",
    "solve": "solve deals with everything known: how winnable is each level?",
    "benchmark": "an agent on a standard deal set against the shipped agents and the ceiling",
    "train": "train from a YAML config (MaskablePPO; algo: cem, move_ppo or exit_siege)",
}

#: a missing module -> the extra that installs it
EXTRAS = {
    "yaml": "train",
    "torch": "train",
    "stable_baselines3": "train",
    "sb3_contrib": "train",
    "tensorboard": "train",
    "tqdm": "train",
    "rich": "train",
    "ray": "distributed",
    "numba": "fast",
    "matplotlib": "notebooks",
    "pygame": "dev",
}


def missing_extra_message(command: str | None, err: ImportError) -> str:
    module = (err.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return f"castle-envs {command}: error: {err}"
    return (
        f"castle-envs {command}: error: this needs the '{extra}' extra ({module} is not "
        f'installed): pip install "castle-envs[{extra}]"'
    )


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (``castle-envs bench: error: argument
    --threads: expected a positive integer, got '0' (castle-envs bench --help)``), exit 2;
    subcommand parsers are of the same class."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def one_line(text) -> str:
    return " ".join(str(text).split())


def _command_in(argv: list[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def build_parser(command: str | None = None, lazy: bool = False) -> argparse.ArgumentParser:
    """The parser. ``lazy``: only ``command``'s module is imported (for its full arguments),
    the others are listed by name; otherwise every subcommand whose module imports."""
    parser = Parser(
        prog="castle-envs", description="RL environments for four castle-themed tabletop games"
    )
    parser.add_argument("--version", action="version", version=f"castle-envs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if name == command or not lazy:
            try:
                module = importlib.import_module(f"castle_envs.experiments.{name}")
            except ImportError:
                if name == command:
                    raise
            else:
                module.add_parser(sub)
                continue
        sub.add_parser(name, help=help_text)
    return parser


class _StderrNow(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at each message (tests and notebooks swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def show_library_messages() -> None:
    """The library logs through ``logging`` (logger ``castle_envs``) and never prints, so a
    program using it can silence it; the command line shows its INFO messages on stderr."""
    logger = logging.getLogger("castle_envs")
    if not any(isinstance(h, _StderrNow) for h in logger.handlers):
        handler = _StderrNow()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    show_library_messages()
    command = _command_in(argv)
    try:
        parser = build_parser(command, lazy=True)
    except ImportError as err:
        print(missing_extra_message(command, err), file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help (0) or a usage error (2, one line printed)
        return int(exit_.code or 0)
    from .parallel import sigterm_raises

    try:
        # SIGTERM stops every command as it stops a pool of workers: one line, exit 143
        # (a run in this process alone, ``--workers 1``, would otherwise end without a word)
        with sigterm_raises():
            return int(args.run(args) or 0)
    except ValueError as err:
        # bad input from the user: one line and exit 2, never a traceback
        print(f"castle-envs {args.command}: error: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:
        # a path that cannot be read or written (missing, a folder, no permission, disk full)
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(
            f"castle-envs {args.command}: error: {where}{one_line(err.strerror or err)}",
            file=sys.stderr,
        )
        return 2
    except ImportError as err:
        print(missing_extra_message(args.command, err), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except SystemExit as stop:
        return stopped(args.command, stop)


def stopped(command: str, stop: SystemExit) -> int:
    """A run that SIGTERM stopped (``parallel.Terminated``, once its workers are gone): one
    line saying so and what it saved, and its exit status (143); any other exit goes on."""
    from .parallel import Terminated

    if not isinstance(stop, Terminated):
        raise stop
    saved = f"; {stop.saved}" if stop.saved else ""
    print(f"castle-envs {command}: stopped by SIGTERM{saved}", file=sys.stderr)
    return int(stop.code or 0)


if __name__ == "__main__":
    sys.exit(main())
