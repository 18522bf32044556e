"""The training algorithms a config may name (``algo``), each an entry of ``ALGORITHMS``.

An ``Algorithm`` says how ``castle-envs train`` runs it: ``run(config, args)`` trains (or,
with ``args.resume``, continues) and returns the run's summary; ``keys`` are the summary
entries printed when it finishes; ``done(summary)`` says how far an interrupted run got;
``check(config, spec)`` rejects a config the algorithm cannot train (after the checks every
algorithm shares). ``run`` and ``check`` may be ``"module:function"`` strings, imported only
when used, so this module (which ``config`` reads for the list of names) stays light.
Another trainer adds itself with ``register_algorithm(Algorithm("name", "module:function",
...))``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _steps_done(summary: dict) -> str:
    return f"{summary.get('num_timesteps')} trained steps"


@dataclass(frozen=True)
class Algorithm:
    """One ``algo`` of the training harness (see the module's docstring)."""

    name: str
    run: Callable[..., dict] | str
    keys: tuple[str, ...] = ("run_dir", "num_timesteps", "final_eval", "wall_seconds")
    done: Callable[[dict], str] = _steps_done
    check: Callable[..., None] | str | None = None


#: every training algorithm by name; ``register_algorithm`` adds one (an entry, never a branch)
ALGORITHMS: dict[str, Algorithm] = {}


def register_algorithm(algorithm: Algorithm) -> None:
    """Add a training algorithm (a name already taken raises ValueError)."""
    if algorithm.name in ALGORITHMS:
        raise ValueError(f"algorithm {algorithm.name!r} is taken")
    ALGORITHMS[algorithm.name] = algorithm


def resolved(target):
    """``target`` itself, or the function a ``"module:function"`` string names."""
    if isinstance(target, str):
        from castle_envs.registry import load

        return load(target)
    return target


def _progress_bar(args) -> bool:
    return not getattr(args, "no_progress", False)


def run_maskable_ppo(config, args) -> dict:
    """MaskablePPO over the game's flat action space (``experiments/train.py``)."""
    from .train import train

    if args.resume:
        return train(resume=args.resume, progress_bar=_progress_bar(args))
    return train(config, run_dir=args.run_dir, progress_bar=_progress_bar(args))


def run_cem(config, args) -> dict:
    """The cross-entropy method on the Castle Siege linear scorer (``train_cem.py``)."""
    from . import train_cem

    return train_cem.run_training(
        config, run_dir=args.run_dir, resume=args.resume, progress_bar=_progress_bar(args)
    )


def run_move_ppo(config, args) -> dict:
    """PPO over move features: ``train_moves`` (solitaire) or ``train_moves_aec``."""
    from castle_envs.registry import get_game

    from . import train_moves, train_moves_aec

    module = train_moves if get_game(config.game).solitaire else train_moves_aec
    return module.run_training(
        None if args.resume else config, run_dir=args.run_dir, resume=args.resume
    )


def run_exit_siege(config, args) -> dict:
    """Castle Siege's expert iteration (``exit_siege.py``)."""
    from . import exit_siege

    return exit_siege.run_training(
        None if args.resume else config, run_dir=args.run_dir, resume=args.resume
    )


for _algorithm in (
    Algorithm("maskable_ppo", run_maskable_ppo),
    Algorithm(
        "cem",
        run_cem,
        keys=("run_dir", "generations", "games", "steps", "wall_seconds", "final_eval"),
        done=lambda summary: f"generation {summary.get('generations')}",
        check="castle_envs.experiments.config:check_cem",
    ),
    Algorithm("move_ppo", run_move_ppo, check="castle_envs.experiments.config:check_move_ppo"),
    Algorithm(
        "exit_siege",
        run_exit_siege,
        keys=("run_dir", "rounds", "decisions", "wall_seconds"),
        done=lambda summary: f"round {summary.get('rounds')}",
        check="castle_envs.experiments.config:check_exit_siege",
    ),
):
    register_algorithm(_algorithm)
