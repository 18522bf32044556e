"""Cross-entropy-method training of the Castle Siege linear move scorer
(``castle_envs.agents.learned.castle_siege_linear``), read top to bottom.

Each generation samples ``population`` weight vectors around the current mean, plays every
one on the same fresh training deals (common random numbers: differences between
candidates are then differences in play, not in luck), and moves the mean to the average of
the ``elite`` best. Fitness is the win rate summed over the configured difficulties with
their weights, e.g. ``{hard: 1, very_hard: 10}``: Very Hard wins are rare, so Hard carries
most of the signal and Very Hard breaks ties the way we care about.

Training deals are seeds ``deal_seed + generation * 10**6 + i``, far from the evaluation
seeds (0-9999 for ``castle-envs evaluate``, 1,000,000+ for held-out curves). Games run on the
rules core (``State.new_game(default_rng(seed))`` deals exactly what ``env.reset(seed)``
deals), on local processes or Ray (``castle_envs.experiments.parallel``).

CEM is a plug-in of the training harness (``run_folder.run_chunked``): a generation is its
chunk, counted as ``generations`` to ``cem.generations``, with its held-out evaluation every
``cem.eval_every`` generations and after the last.

Run: ``castle-envs train --config configs/castle_siege/very_hard_cem.yaml``. The run folder
gets ``config.yaml``, ``history.csv`` (per generation: mean's and elite's fitness, held-out
win rates), ``eval.csv`` and ``progress.json`` (the harness's), ``checkpoints/latest/
checkpoint.json`` (the search's state after the last whole generation: resume with
``--resume``; runs written before it kept ``checkpoint.json`` at the folder's root and had no
``progress.json``, and resume from there too), ``policy.json`` (the mean, loadable as
``--agent linear:PATH``), ``best_model/policy.json`` (the mean of the best held-out
evaluation), ``final_model/policy.json`` and ``summary.json``.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy

from castle_envs.castle_siege.rules import State

from .common import json_object
from .config import CEMConfig, TrainConfig
from .journal import write_atomic
from .parallel import run_chunks
from .run_folder import HARNESS_PROGRESS, RunFolder, Schedule, run_chunked

#: the initial spread of a weight: 10% of its starting value, at least this much. Features
#: in rank points (up to 13 per card) get a tenth of the spread of the 0/1 and count features,
#: so that one step moves every feature's contribution by about the same amount.
_RANK_POINT_FEATURES = {
    "battle.rank_spent",
    "battle.overkill",
    "battle.target_rank",
    "recycle.castle_distance",
    "recycle.rank",
    "royal.defender_ranks",
    "royal.castle_rank",
}
_MIN_SIGMA = {"battle": 1.0, "recycle": 0.5, "royal": 1.0}


def play_games(theta, difficulty: str, seeds) -> tuple[int, int]:
    """(wins, moves) of the linear policy with weights ``theta`` on the deals of ``seeds``."""
    policy = LinearPolicy.from_vector(theta)
    wins = moves = 0
    for seed in seeds:
        state = State.new_game(np.random.default_rng(int(seed)), difficulty)
        while not state.is_terminal():
            state.apply_action(policy(state))
            moves += 1
        wins += state.outcome == 1
    return wins, moves


def _chunk(theta, difficulty, first, count):
    return play_games(theta, difficulty, range(first, first + count))


def evaluate(
    thetas: list, games: dict, first_seed: int, workers: int | None, backend: str, chunk: int = 100
) -> tuple[np.ndarray, int]:
    """(len(thetas), len(games)) win rates, every theta on the same deals per difficulty,
    and the number of moves (environment steps) played."""
    jobs, where = [], []
    for t, theta in enumerate(thetas):
        for d, (difficulty, n) in enumerate(games.items()):
            for start in range(0, n, chunk):
                jobs.append(
                    (np.asarray(theta), difficulty, first_seed + start, min(chunk, n - start))
                )
                where.append((t, d))
    results = run_chunks(_chunk, jobs, workers=workers, backend=backend)
    rates = np.zeros((len(thetas), len(games)))
    for (t, d), (w, _) in zip(where, results):
        rates[t, d] += w
    return rates / np.array(list(games.values()), dtype=float), sum(m for _, m in results)


def initial_search(init: str = "") -> tuple[np.ndarray, np.ndarray]:
    """The starting mean (the heuristic's weights, or the policy file ``init``) and spread."""
    policy = LinearPolicy.load(init) if init else LinearPolicy(HEURISTIC_WEIGHTS)
    mean = policy.vector()
    floor = np.array(
        [
            _MIN_SIGMA[n.partition(".")[0]] * (0.1 if n in _RANK_POINT_FEATURES else 1.0)
            for n in LinearPolicy.names()
        ]
    )
    return mean, np.maximum(0.1 * np.abs(mean), floor)


def run_training(
    config: TrainConfig | None,
    run_dir: str | Path | None = None,
    resume: str | None = None,
    progress_bar: bool = True,
    stop_after: int | None = None,
) -> dict:
    """Run (or ``resume``) a CEM run; ``stop_after`` ends this session after that many
    generations, checkpointed, as an interruption would."""
    if resume:
        # the run's own config, as saved
        folder = RunFolder.open(resume, algo="cem", what="CEM")
        ckpt = checkpoint_path(folder)
        if ckpt is None:
            # killed before its first checkpoint: the run starts again, in its own folder
            folder.resumed = False
            (folder / RunFolder.EVAL).unlink(missing_ok=True)
        elif not folder.has_progress:
            # a run from before CEM was a plug-in of the harness: its counters are its checkpoint's
            folder.write_progress(
                {**HARNESS_PROGRESS, **_counters(read_checkpoint(ckpt), folder.config.cem)}
            )
    elif config is None:
        raise ValueError("give a config, or a run folder to resume")
    else:
        folder = RunFolder.create(config, run_dir)
    trainer = CEM(folder.config, progress_bar)
    summary = run_chunked(trainer, folder, stop_after, trainer.schedule())
    final = summary.get("final_eval")
    summary["final_eval"] = final["by_difficulty"] if final else None
    summary["policy"] = str(folder / "policy.json")
    return summary


def trim_history(path: Path, generations: int) -> None:
    """Keep ``history.csv``'s header and its rows of generations 1..``generations`` (those
    the checkpoint holds): a row written before a kill that came ahead of the checkpoint, or
    a row cut mid-line, is dropped, and written again when its generation is redone."""
    if not path.is_file():
        return
    lines = path.read_text().splitlines(keepends=True)
    keep = lines[:1]
    for line in lines[1:]:
        if not line.endswith("\n"):
            logging.getLogger(__name__).warning("%s: a row cut mid-line dropped (redone)", path)
            break
        first = line.split(",", 1)[0]
        if first.isdigit() and int(first) <= generations:
            keep.append(line)
    if keep != lines:
        write_atomic(str(path), "".join(keep))


CHECKPOINT = "checkpoint.json"
_CHECKPOINT_KEYS = {
    "generation": int,
    "mean": list,
    "sigma": list,
    "sigma0": list,
    "wall_seconds": float,
    "steps": int,
    "rng": dict,
}


def checkpoint_path(folder: RunFolder) -> Path | None:
    """The run's checkpoint: ``checkpoints/latest/checkpoint.json``, else the root's
    ``checkpoint.json`` of a run written before CEM checkpointed through ``RunFolder``;
    None before the first generation ended."""
    for path in (folder.latest / CHECKPOINT, folder / CHECKPOINT):
        if path.is_file():
            return path
    return None


def read_checkpoint(path: Path) -> dict:
    """``checkpoint.json`` checked: its keys there with their types and its weights those of
    today's scorer, else ValueError '... missing or damaged: why'."""
    try:
        saved = json_object(path)
        for key, kind in _CHECKPOINT_KEYS.items():
            if key not in saved:
                raise KeyError(f"no {key!r}")
            if not isinstance(saved[key], (int, float) if kind is float else kind):
                raise TypeError(f"{key!r} is not a {kind.__name__}")
        names = LinearPolicy.names()
        if saved.get("names", names) != names or not (
            len(saved["mean"]) == len(saved["sigma"]) == len(saved["sigma0"]) == len(names)
        ):
            raise ValueError("its weights are not those of this version's linear scorer")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is missing or damaged: {err}") from None
    return saved


def _workers(cem: CEMConfig) -> int | None:
    return cem.workers or None


def _counters(saved: dict, cem: CEMConfig) -> dict:
    """The harness's counters of a checkpoint (``progress.json`` is written after it, so a
    kill between the two leaves it a generation behind; runs from before the harness have
    none)."""
    done = saved["generation"]
    return {
        "generations": done,
        "wall_seconds": float(saved["wall_seconds"]),
        "steps": saved["steps"],
        "games": done * (cem.population + 1) * sum(cem.games.values()),
        "checkpoints": done,
        "evals_done": done // cem.eval_every,
    }


# --- the run: a plug-in of the harness (experiments/run_folder.py) ------------------------------
class CEM:
    """CEM as a ``run_folder.Chunked`` trainer: the search's mean, spread and generator; a
    chunk is one generation, and its ``history.csv`` row is written with its checkpoint
    (after its held-out evaluation, when one is due)."""

    def __init__(self, config: TrainConfig, progress_bar: bool = True):
        self.config, self.cem = config, config.cem
        self.games = dict(self.cem.games)
        self.weights = np.array([self.cem.fitness_weights.get(d, 1.0) for d in self.games])
        self.held_out = dict(self.cem.eval_games)
        self.progress_bar = progress_bar
        self.row: list | None = None  # this generation's history row, until it is written

    def schedule(self) -> Schedule:
        return Schedule(
            total=self.cem.generations,
            eval_every=self.cem.eval_every if self.held_out else 0,
            checkpoint_every=1,
            unit="generations",
            column="generation",
            eval_at_start=False,
            eval_last=True,
            summary_keys=("games", "steps"),
            whole_chunks=True,
        )

    def initial_progress(self) -> dict:
        return {"games": 0, "steps": 0}

    def build(self, folder: RunFolder, progress: dict) -> None:
        self.folder, self.progress = folder, progress
        self.history = folder / "history.csv"
        self.rng = np.random.default_rng(self.config.seed)
        if folder.resumed:
            saved = read_checkpoint(checkpoint_path(folder) or folder.latest / CHECKPOINT)
            self.mean, self.sigma = np.array(saved["mean"]), np.array(saved["sigma"])
            self.sigma0 = np.array(saved["sigma0"])
            self.rng.bit_generator.state = saved["rng"]
            progress.update(_counters(saved, self.cem))
            trim_history(self.history, saved["generation"])
        else:
            self.mean, self.sigma = initial_search(self.cem.init)
            self.sigma0 = self.sigma.copy()
            with open(self.history, "w", newline="") as f:
                csv.writer(f).writerow(
                    [
                        "generation",
                        "games",
                        "steps",
                        "seconds",
                        "mean_fitness",
                        "elite_fitness",
                        "best_fitness",
                    ]
                    + [f"eval_{d}" for d in self.held_out]
                )
        self.t0 = time.time() - progress["wall_seconds"]

    def train_chunk(self, progress: dict) -> int:
        self._drop_old_checkpoint()
        cem, gen = self.cem, progress["generations"]
        noise = self.rng.standard_normal((cem.population, len(self.mean)))
        # the mean plays too: its fitness is the curve
        thetas = [self.mean] + [self.mean + self.sigma * z for z in noise]
        rates, moves = evaluate(
            thetas, self.games, cem.deal_seed + gen * 1_000_000, _workers(cem), cem.backend
        )
        progress["steps"] += moves
        fitness = rates @ self.weights
        order = np.argsort(-fitness, kind="stable")  # the mean may stay in the elite
        elite = np.array([thetas[i] for i in order[: cem.elite]])
        self.mean = elite.mean(0)
        # a floor on the spread keeps exploring: with a few elites the plain CEM spread
        # collapses within a handful of generations (Szita and Lorincz 2006 add noise too)
        self.sigma = np.maximum(elite.std(0), cem.sigma_floor * self.sigma0)
        progress["games"] += len(thetas) * sum(self.games.values())
        progress["generations"] = gen + 1
        self.row = [
            gen + 1,
            progress["games"],
            progress["steps"],
            round(time.time() - self.t0, 1),
            fitness[0],
            fitness[order[: cem.elite]].mean(),
            fitness[order[0]],
        ] + [""] * len(self.held_out)
        return 1

    def evaluate(self, progress: dict, write_row: Callable[[dict], None]) -> dict:
        """The mean on the held-out deals (``cem.eval_games`` from ``cem.eval_seed``); the
        best model is the one of the highest win rate weighted as the fitness is."""
        cem = self.cem
        rates = evaluate([self.mean], self.held_out, cem.eval_seed, _workers(cem), cem.backend)[0][
            0
        ]
        for (difficulty, games), rate in zip(self.held_out.items(), rates.tolist()):
            write_row({"difficulty": difficulty, "games": games, "win_rate": rate})
        if self.row is not None:
            self.row[7:] = rates.tolist()
        weights = np.array([cem.fitness_weights.get(d, 1.0) for d in self.held_out])
        weights = weights if weights.sum() > 0 else np.ones(len(rates))
        return {
            "win_rate": float(rates @ weights / weights.sum()),
            "by_difficulty": dict(zip(self.held_out, rates.tolist())),
        }

    def write_checkpoint(self, folder: Path) -> None:
        """The generation's history row, then ``policy.json`` and the search's state.

        A kill may come between any two of these: the history row first (a resume drops
        the rows of generations the checkpoint does not hold, so none is counted twice),
        then the policy, replaced whole, then the checkpoint (``folder`` is the new one,
        which ``RunFolder.save_checkpoint`` puts in place once it is written)."""
        progress = self.progress
        if self.row is not None:
            row, self.row = self.row, None
            with open(self.history, "a", newline="") as f:
                csv.writer(f).writerow(row)
                f.flush()
            if self.progress_bar:
                evals = dict(zip(self.held_out, row[7:]))
                logging.getLogger(__name__).info(
                    f"generation {row[0]}/{self.cem.generations}: mean fitness {row[4]:.4f}, "
                    f"elite {row[5]:.4f}, {row[3]:.0f} s"
                    + (f", held-out {evals}" if row[7:] and row[7] != "" else "")
                )
        policy_path = self.folder / "policy.json"
        LinearPolicy.from_vector(self.mean).save(policy_path.with_suffix(".json.tmp"))
        os.replace(policy_path.with_suffix(".json.tmp"), policy_path)
        state = {
            "generation": progress["generations"],
            "mean": self.mean.tolist(),
            "sigma": self.sigma.tolist(),
            "sigma0": self.sigma0.tolist(),
            "names": LinearPolicy.names(),
            "wall_seconds": progress["wall_seconds"],
            "steps": progress["steps"],
            "rng": self.rng.bit_generator.state,
        }
        (folder / CHECKPOINT).write_text(json.dumps(state, indent=1))

    def save_model(self, target: Path) -> None:
        """The mean as ``target/policy.json`` (``--agent linear:target/policy.json``)."""
        target.mkdir(parents=True, exist_ok=True)
        LinearPolicy.from_vector(self.mean).save(target / "policy.json")

    def close(self) -> None:
        self._drop_old_checkpoint()

    def _drop_old_checkpoint(self) -> None:
        """An old run's root ``checkpoint.json``, superseded once ``checkpoints/latest``
        holds a checkpoint (never earlier: a kill between the two must leave one)."""
        old = self.folder / CHECKPOINT
        if old.is_file() and (self.folder.latest / CHECKPOINT).is_file():
            old.unlink()
