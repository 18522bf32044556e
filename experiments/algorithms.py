"""The training algorithms a config may name (``algo``), each an entry of ``ALGORITHMS``.

An ``Algorithm`` says how ``castle-envs train`` runs it: ``run(config, args)`` trains (or,
with ``args.resume``, continues) and returns the run's summary; ``keys`` are the summary
entries printed when it finishes; ``done(summary)`` says how far an interrupted run got;
``check(config, spec)`` rejects a config the algorithm cannot train (after the checks every
algorithm shares). ``run`` and ``check`` may be ``"module:function"`` strings, imported only
when used, so this module (which ``config`` reads for the list of names) stays light and
imports no trainer (the harness's own ``run`` functions are in ``train.py``).
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


#: where the harness's own trainers are started from their config and command-line args
_TRAIN = "castle_envs.experiments.train"

for _algorithm in (
    Algorithm("maskable_ppo", f"{_TRAIN}:run_maskable_ppo"),
    Algorithm(
        "cem",
        f"{_TRAIN}:run_cem",
        keys=("run_dir", "generations", "games", "steps", "wall_seconds", "final_eval"),
        done=lambda summary: f"generation {summary.get('generations')}",
        check="castle_envs.experiments.config:check_cem",
    ),
    Algorithm(
        "move_ppo", f"{_TRAIN}:run_move_ppo", check="castle_envs.experiments.config:check_move_ppo"
    ),
    Algorithm(
        "exit_siege",
        f"{_TRAIN}:run_exit_siege",
        keys=("run_dir", "rounds", "decisions", "wall_seconds"),
        done=lambda summary: f"round {summary.get('rounds')}",
        check="castle_envs.experiments.config:check_exit_siege",
    ),
    Algorithm(
        "ntuple_value",
        "castle_envs.experiments.train_ntuple:run_training_args",
        keys=("run_dir", "games", "decisions", "cpu_seconds", "wall_seconds", "final_eval"),
        done=lambda summary: f"{summary.get('games')} games",
        check="castle_envs.experiments.config:check_ntuple",
    ),
):
    register_algorithm(_algorithm)
