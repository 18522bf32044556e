"""Cross-entropy-method training of the Castle Siege linear move scorer
(``castle_envs.agents.castle_siege_linear``), read top to bottom.

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

Run: ``castle-envs train --config configs/castle_siege/very_hard_cem.yaml``. The run folder
gets ``config.yaml``, ``history.csv`` (per generation: mean's and elite's fitness, held-out
win rates), ``checkpoints/latest/checkpoint.json`` (the search's state after the last whole
generation, put in place by ``RunFolder.save_checkpoint``: resume with ``--resume``; runs
written before it kept ``checkpoint.json`` at the folder's root, and resume from there too)
and ``policy.json`` (the mean, loadable as ``--agent linear:PATH``).
"""
from __future__ import annotations

import csv
import json
import logging
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np

from castle_envs.agents.castle_siege_linear import HEURISTIC_WEIGHTS, LinearPolicy
from castle_envs.castle_siege.rules import State

from .config import CEMConfig, TrainConfig
from .journal import write_atomic
from .run_folder import RunFolder
from .parallel import run_chunks

#: the initial spread of a weight: 10% of its starting value, at least this much. Features
#: in rank points (up to 13 per card) get a tenth of the spread of the 0/1 and count features,
#: so that one step moves every feature's contribution by about the same amount.
_RANK_POINT_FEATURES = {"battle.rank_spent", "battle.overkill", "battle.target_rank",
                        "recycle.castle_distance", "recycle.rank", "royal.defender_ranks",
                        "royal.castle_rank"}
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


def evaluate(thetas: list, games: dict, first_seed: int, workers: int | None, backend: str,
             chunk: int = 100) -> tuple[np.ndarray, int]:
    """(len(thetas), len(games)) win rates, every theta on the same deals per difficulty,
    and the number of moves (environment steps) played."""
    jobs, where = [], []
    for t, theta in enumerate(thetas):
        for d, (difficulty, n) in enumerate(games.items()):
            for start in range(0, n, chunk):
                jobs.append((np.asarray(theta), difficulty, first_seed + start, min(chunk, n - start)))
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
    floor = np.array([_MIN_SIGMA[n.partition(".")[0]] * (0.1 if n in _RANK_POINT_FEATURES else 1.0)
                      for n in LinearPolicy.names()])
    return mean, np.maximum(0.1 * np.abs(mean), floor)


def run_training(config: TrainConfig, run_dir: str | Path | None = None, resume: str | None = None,
                 progress_bar: bool = True, stop_after: int | None = None) -> dict:
    """Run (or ``resume``) a CEM run; ``stop_after`` ends this session after that many
    generations, checkpointed, as an interruption would."""
    if resume:
        # the run's own config, as saved
        folder = RunFolder.open(resume, algo="cem", what="CEM")
        # killed before its first checkpoint: the run starts again, in its own folder
        resume = resume if checkpoint_path(folder) is not None else None
    else:
        folder = RunFolder.create(config, run_dir)
    config, run_dir = folder.config, folder.path
    summary = _generations(folder, bool(resume), progress_bar, stop_after)
    cem = config.cem
    if summary["generations"] == cem.generations and cem.eval_games:
        policy = LinearPolicy.load(run_dir / "policy.json")
        rates = evaluate([policy.vector()], cem.eval_games, cem.eval_seed,
                         _workers(cem), cem.backend)[0][0]
        summary["final_eval"] = dict(zip(cem.eval_games, rates.tolist()))
    else:
        summary["final_eval"] = None
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
_CHECKPOINT_KEYS = {"generation": int, "mean": list, "sigma": list, "sigma0": list,
                    "wall_seconds": float, "steps": int, "rng": dict}


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
        saved = json.loads(path.read_text())
        if not isinstance(saved, dict):
            raise TypeError(f"expected a JSON object, got {type(saved).__name__}")
        for key, kind in _CHECKPOINT_KEYS.items():
            if key not in saved:
                raise KeyError(f"no {key!r}")
            if not isinstance(saved[key], (int, float) if kind is float else kind):
                raise TypeError(f"{key!r} is not a {kind.__name__}")
        names = LinearPolicy.names()
        if saved.get("names", names) != names or not (
                len(saved["mean"]) == len(saved["sigma"]) == len(saved["sigma0"]) == len(names)):
            raise ValueError("its weights are not those of this version's linear scorer")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is missing or damaged: {err}") from None
    return saved


def _checkpoint_writer(text: str) -> Callable[[Path], None]:
    """What ``RunFolder.save_checkpoint`` calls to fill the new checkpoint folder."""
    def write(folder: Path) -> None:
        (folder / CHECKPOINT).write_text(text)
    return write


def _workers(cem: CEMConfig) -> int | None:
    return cem.workers or None


def _generations(folder: RunFolder, resume: bool, progress_bar: bool,
                 stop_after: int | None) -> dict:
    config, run_dir = folder.config, folder.path
    cem = config.cem
    games = dict(cem.games)
    weights = np.array([cem.fitness_weights.get(d, 1.0) for d in games])
    held_out = dict(cem.eval_games)
    rng = np.random.default_rng(config.seed)
    old = run_dir / CHECKPOINT          # where runs before RunFolder's checkpoints kept it
    saved: dict = {}
    if resume:
        ckpt = checkpoint_path(folder)
        if ckpt is None:
            raise FileNotFoundError(f"{run_dir} has no checkpoint to resume from")
        saved = read_checkpoint(ckpt)
        mean, sigma = np.array(saved["mean"]), np.array(saved["sigma"])
        sigma0 = np.array(saved["sigma0"])
        start = saved["generation"]
        rng.bit_generator.state = saved["rng"]
        trim_history(run_dir / "history.csv", start)
    else:
        mean, sigma = initial_search(cem.init)
        sigma0 = sigma.copy()
        start = 0
        with open(run_dir / "history.csv", "w", newline="") as f:
            csv.writer(f).writerow(["generation", "games", "steps", "seconds", "mean_fitness",
                                    "elite_fitness", "best_fitness"]
                                   + [f"eval_{d}" for d in held_out])
    names = LinearPolicy.names()
    total_games = start * (cem.population + 1) * sum(games.values())
    total_steps = saved["steps"] if resume else 0
    t0 = time.time() - (saved["wall_seconds"] if resume else 0.0)
    end = cem.generations if stop_after is None else min(cem.generations, start + stop_after)
    for gen in range(start, end):
        noise = rng.standard_normal((cem.population, len(mean)))
        thetas = [mean] + [mean + sigma * z for z in noise]   # the mean plays too: its fitness is the curve
        rates, moves = evaluate(thetas, games, cem.deal_seed + gen * 1_000_000, _workers(cem),
                                cem.backend)
        total_steps += moves
        fitness = rates @ weights
        order = np.argsort(-fitness, kind="stable")   # the mean may stay in the elite
        elite = np.array([thetas[i] for i in order[:cem.elite]])
        mean = elite.mean(0)
        # a floor on the spread keeps exploring: with a few elites the plain CEM spread
        # collapses within a handful of generations (Szita and Lorincz 2006 add noise too)
        sigma = np.maximum(elite.std(0), cem.sigma_floor * sigma0)
        total_games += len(thetas) * sum(games.values())
        row = [gen + 1, total_games, total_steps, round(time.time() - t0, 1), fitness[0],
               fitness[order[:cem.elite]].mean(), fitness[order[0]]]
        if held_out and ((gen + 1) % cem.eval_every == 0 or gen + 1 == cem.generations):
            ev = evaluate([mean], held_out, cem.eval_seed, _workers(cem), cem.backend)[0][0]
            row += ev.tolist()
        else:
            row += [""] * len(held_out)
        # a kill may come between any two of these: the history row first (a resume drops
        # the rows of generations the checkpoint does not hold, so none is counted twice),
        # then the policy and the checkpoint, each replaced whole (never half written; the
        # checkpoint through RunFolder.save_checkpoint, as every trainer's)
        with open(run_dir / "history.csv", "a", newline="") as f:
            csv.writer(f).writerow(row)
            f.flush()
        policy_path = run_dir / "policy.json"
        LinearPolicy.from_vector(mean).save(policy_path.with_suffix(".json.tmp"))
        os.replace(policy_path.with_suffix(".json.tmp"), policy_path)
        state = json.dumps({"generation": gen + 1, "mean": mean.tolist(),
                            "sigma": sigma.tolist(), "sigma0": sigma0.tolist(), "names": names,
                            "wall_seconds": time.time() - t0, "steps": total_steps,
                            "rng": rng.bit_generator.state}, indent=1)
        folder.save_checkpoint(_checkpoint_writer(state))
        if old.is_file():        # an old run's checkpoint, superseded from now on
            old.unlink()
        if progress_bar:
            logging.getLogger(__name__).info(
                f"generation {gen + 1}/{cem.generations}: mean fitness {fitness[0]:.4f}, "
                f"elite {row[5]:.4f}, {row[3]:.0f} s" +
                (f", held-out {dict(zip(held_out, row[7:]))}" if row[7] != "" else ""))
    return {"run_dir": str(run_dir), "generations": end, "games": total_games, "steps": total_steps,
            "wall_seconds": round(time.time() - t0, 1), "policy": str(run_dir / "policy.json")}
