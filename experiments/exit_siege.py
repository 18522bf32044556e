"""Expert iteration for Castle Siege: the ISMCTS agent teaches its own move scorer.

Read top to bottom; each round is

1. **play**: ``exit_siege.games`` training deals (seeds ``seed`` + round * games + i, all at
   least 20,000,000, never the evaluation deals) with the ``ismcts`` agent whose priors and
   playouts come from this round's scorer; at every battle-phase decision it searched, keep
   the features of every legal move (``battle_features``, the scorer's own 18) and the root's
   visit counts (the search's improved policy, Anthony, Tian and Barber 2017);
2. **fit**: the scorer's battle weights by cross-entropy between the visit distribution
   and ``softmax(features @ w / temp)`` (the prior the search uses), over every round's
   decisions so far, from the round's weights, with an L2 pull towards them;
3. **check**: the new scorer inside the search and the old one play the same
   ``exit_siege.eval_games`` held-back training deals (seeds 21,000,000 and up); the round's
   winner is the next round's scorer.

Recycle and Royal Assault weights are kept as they are.

Expert iteration is a plug-in of the training harness (``run_folder.run_chunked``): a round is
its chunk, counted as ``rounds`` to ``exit_siege.rounds``; its check is part of the round, so
the harness adds no held-out evaluation. The config is ``algo: exit_siege`` with an
``exit_siege`` section (``experiments/config.py``'s ``ExItConfig``), and the run folder holds
the harness's ``config.yaml``, ``progress.json``, ``checkpoints/latest/`` (the scorer and the
rounds done), ``final_model/policy.json`` and ``summary.json``, and the rounds' record,
``round_K/{data.npz, policy.json, summary.json}``: a round with a summary is done, so a killed
run resumes at the first round without one (its half-played games are replayed: a round's
games depend only on their seeds). A rounds folder from before the run folder (a
``config.json`` of the command line, no ``config.yaml``) resumes too: its ``config.json``
becomes the run's ``config.yaml``.

    castle-envs train --config configs/tiny/castle_siege_exit.yaml
    python -m castle_envs.experiments.exit_siege --out runs/exit_siege --rounds 3 --games 100

The command line builds the config; run again with the same ``--out`` and arguments, it
resumes (``--rounds`` may grow: a round's games do not depend on how many follow).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import (
    BATTLE_FEATURES,
    LinearPolicy,
    battle_features,
)
from castle_envs.agents.registry import shipped_models_dir
from castle_envs.agents.search.castle_siege_ismcts import ISMCTSPolicy
from castle_envs.experiments.stats import paired_proportion_difference, wilson_interval

from castle_envs.castle_siege.rules import BATTLE, State

from .common import json_object, new_folder
from .config import TrainConfig, dump_config, resolve
from .run_folder import HARNESS_PROGRESS, RunFolder, Schedule, run_chunked

TRAIN_SEEDS = 20_000_000
CHECK_SEEDS = 21_000_000


def play(policy: ISMCTSPolicy, seed: int, difficulty: str, record: list | None) -> bool:
    """One game on deal ``seed``; with ``record``, append (features, visits) per searched
    battle decision."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    rng = np.random.default_rng([seed, 0])
    while not state.outcome:
        view = state.player_view()
        action = policy(view, rng)
        if record is not None and policy.searched and view.phase == BATTLE:
            actions, feats = battle_features(view)
            visits = np.zeros(len(actions))
            where = {int(a): i for i, a in enumerate(actions)}
            for a, n, _, _ in policy.root_stats():
                if a in where:
                    visits[where[a]] += n
            if visits.sum() > 0:
                record.append((feats.astype(np.float32), visits.astype(np.float32)))
        state.apply_action(action)
    return state.outcome == 1


def fit(
    data: list, w0: np.ndarray, temp: float, l2: float = 1e-3, steps: int = 300, lr: float = 0.05
) -> tuple[np.ndarray, float, float]:
    """Battle weights minimising mean cross-entropy(visits, softmax(F w / temp)) + l2 |w-w0|^2
    (Adam, full batch). Returns (w, loss at w0, loss at w)."""
    feats = [f for f, _ in data]
    targets = [v / v.sum() for _, v in data]
    sizes = np.array([len(f) for f in feats])
    F = np.concatenate(feats).astype(np.float64)
    P = np.concatenate(targets).astype(np.float64)
    seg = np.repeat(np.arange(len(feats)), sizes)
    scale = F.std(axis=0) + 1e-6  # steps in standardized units

    def loss_grad(w):
        z = F @ w / temp
        zmax = np.full(len(feats), -np.inf)
        np.maximum.at(zmax, seg, z)
        e = np.exp(z - zmax[seg])
        tot = np.bincount(seg, e, minlength=len(feats))
        q = e / tot[seg]
        logq = z - zmax[seg] - np.log(tot[seg])
        loss = -(P * logq).sum() / len(feats) + l2 * ((w - w0) ** 2).sum()
        grad = F.T @ (q - P) / temp / len(feats) + 2 * l2 * (w - w0)
        return loss, grad

    w = w0.copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    start, _ = loss_grad(w0)
    for t in range(1, steps + 1):
        _, g = loss_grad(w)
        g = g * scale
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8) * scale
    end, _ = loss_grad(w)
    return w, float(start), float(end)


def with_battle(scorer: LinearPolicy, w: np.ndarray) -> LinearPolicy:
    weights = {k: dict(v) for k, v in scorer.weights.items()}
    weights["battle"] = {name: float(x) for name, x in zip(BATTLE_FEATURES, w)}
    return LinearPolicy(weights)


# --- the run: a plug-in of the harness (experiments/run_folder.py) ------------------------------
def default_init() -> Path:
    """The scorer a run starts from when ``exit_siege.init`` is empty."""
    return shipped_models_dir() / "castle_siege_very_hard_linear" / "policy.json"


def done_rounds(path: Path) -> int:
    """How many rounds of the folder are done: round_0, round_1, ... with a summary."""
    k = 0
    while (path / f"round_{k}" / "summary.json").is_file():
        k += 1
    return k


class ExpertIteration:
    """Expert iteration as a ``run_folder.Chunked`` trainer: the scorer and every round's
    decisions; a chunk is one round (play, fit, check), written to ``round_K/``."""

    def __init__(self, config: TrainConfig, log: Callable[[str], None] | None = None):
        self.config, self.ex = config, config.exit_siege
        self.difficulty = config.variant["difficulty"]
        self.log = log or _say

    def schedule(self) -> Schedule:
        return Schedule(
            total=self.ex.rounds,
            eval_every=0,
            checkpoint_every=1,
            unit="rounds",
            column="round",
            eval_at_start=False,
            summary_keys=("decisions",),
            whole_chunks=True,
        )

    def initial_progress(self) -> dict:
        return {"decisions": 0}

    def build(self, folder: RunFolder, progress: dict) -> None:
        """The scorer and data of the rounds done (their folders are the record)."""
        self.path = folder.path
        self.data: list = []
        done = done_rounds(self.path) if folder.resumed else 0
        self.scorer = (
            LinearPolicy.load(self.path / f"round_{done - 1}" / "policy.json")
            if done
            else LinearPolicy.load(self.ex.init or default_init())
        )
        for k in range(done):
            with np.load(self.path / f"round_{k}" / "data.npz") as saved:
                self.data += _unpack(saved)
            self.log(f"round {k}: done (resumed)")
        progress.update(rounds=done, checkpoints=done, decisions=len(self.data))

    def train_chunk(self, progress: dict) -> int:
        ex, k = self.ex, progress["rounds"]
        folder = self.path / f"round_{k}"
        folder.mkdir(exist_ok=True)
        start, cpu = time.time(), time.process_time()
        scorer = self.scorer
        search = ISMCTSPolicy(scorer, iterations=ex.iterations, temp=ex.temp)
        record: list = []
        wins = sum(
            play(search, self.config.seed + k * ex.games + i, self.difficulty, record)
            for i in range(ex.games)
        )
        np.savez_compressed(folder / "data.npz", **_pack(record))
        self.data += record
        w, before, after = fit(self.data, scorer.battle.copy(), ex.temp)
        candidate = with_battle(scorer, w)
        old = ISMCTSPolicy(scorer, iterations=ex.iterations, temp=ex.temp)
        new = ISMCTSPolicy(candidate, iterations=ex.iterations, temp=ex.temp)
        seeds = [CHECK_SEEDS + k * ex.eval_games + i for i in range(ex.eval_games)]
        old_w = np.array([play(old, s, self.difficulty, None) for s in seeds], float)
        new_w = np.array([play(new, s, self.difficulty, None) for s in seeds], float)
        diff = paired_proportion_difference(new_w, old_w)
        keep = diff["mean"] > 0
        if keep:
            self.scorer = scorer = candidate
        scorer.save(folder / "policy.json")
        summary = {
            "round": k,
            "train_games": ex.games,
            "train_wins": int(wins),
            "decisions": len(record),
            "all_decisions": len(self.data),
            "loss_before": before,
            "loss_after": after,
            "check_seeds": [seeds[0], seeds[-1]],
            "check_old": _rate(old_w),
            "check_new": _rate(new_w),
            "paired": diff,
            "kept_new": bool(keep),
            "wall_s": time.time() - start,
            "cpu_s": time.process_time() - cpu,
            "battle_weights": dict(zip(BATTLE_FEATURES, map(float, scorer.battle))),
        }
        # the summary last: a round with one is done
        (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        progress["rounds"], progress["decisions"] = k + 1, len(self.data)
        self.log(
            f"round {k}: train {wins}/{ex.games}, loss {before:.4f} -> {after:.4f}, "
            f"check old {int(old_w.sum())} new {int(new_w.sum())} of {len(seeds)}, "
            f"{'kept' if keep else 'dropped'} ({summary['cpu_s']:.0f} CPU-s)"
        )
        return 1

    def evaluate(self, progress: dict, write_row: Callable[[dict], None]) -> dict:
        raise NotImplementedError(
            "expert iteration's check is part of its round "
            "(its schedule has no held-out evaluation)"
        )

    def write_checkpoint(self, folder: Path) -> None:
        """The scorer and how many rounds it comes from (the rounds' data stay in their
        folders: a checkpoint does not copy them)."""
        self.scorer.save(folder / "policy.json")
        (folder / "rounds.json").write_text(json.dumps({"rounds": done_rounds(self.path)}))

    def save_model(self, target: Path) -> None:
        """The scorer as ``target/policy.json`` (``--agent linear:target/policy.json``)."""
        target.mkdir(parents=True, exist_ok=True)
        self.scorer.save(target / "policy.json")

    def close(self) -> None:
        pass


def run_training(
    config: TrainConfig | None = None,
    run_dir=None,
    resume=None,
    stop_after: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Run (or ``resume`` a run folder, an old rounds folder included); ``stop_after`` ends
    this session after that many rounds, checkpointed, as an interrupt would."""
    if resume:
        folder = open_run(resume)
        if not folder.has_progress:
            # a rounds folder from before the harness, or a run killed before its first
            # checkpoint: the round folders say how far it got
            done = done_rounds(folder.path)
            if done:
                wall = sum(
                    json.loads((folder / f"round_{k}" / "summary.json").read_text()).get(
                        "wall_s", 0.0
                    )
                    for k in range(done)
                )
                folder.write_progress(
                    {
                        "rounds": done,
                        **HARNESS_PROGRESS,
                        "wall_seconds": float(wall),
                        "decisions": 0,
                    }
                )
            else:
                folder.resumed = False
    elif config is None:
        raise ValueError("give a config, or a run folder to resume")
    else:
        folder = RunFolder.create(config, run_dir)
    trainer = ExpertIteration(folder.config, log)
    return run_chunked(trainer, folder, stop_after, trainer.schedule())


# --- run folders from before the harness: a config.json of the command line ---------------------
OLD_CONFIG = "config.json"
_OLD_KEYS: dict[str, type | tuple[type, ...]] = {
    "rounds": int,
    "games": int,
    "eval_games": int,
    "difficulty": str,
    "iterations": int,
    "temp": (int, float),
    "seed": int,
    "init": str,
}


def open_run(path) -> RunFolder:
    """``RunFolder.open`` of an expert-iteration run; a rounds folder from before it had a run
    folder (``config.json``, no ``config.yaml``) first gets the ``config.yaml`` its
    ``config.json`` says, or a ValueError naming the file and what to do."""
    path = Path(path)
    if not (path / RunFolder.CONFIG).is_file() and (path / OLD_CONFIG).is_file():
        dump_config(old_config(path / OLD_CONFIG), path / RunFolder.CONFIG)
    return RunFolder.open(path, algo="exit_siege", what="expert-iteration")


def old_config(path: Path) -> TrainConfig:
    """The config of an old rounds folder's ``config.json`` (its command-line arguments)."""
    try:
        args = json_object(path)
        for key, kind in _OLD_KEYS.items():
            if key not in args:
                raise ValueError(f"no {key!r}")
            if not isinstance(args[key], kind) or isinstance(args[key], bool):
                raise TypeError(f"{key!r} is {args[key]!r}")
        return exit_config(args)
    except (OSError, ValueError, TypeError) as err:
        raise ValueError(
            f"{path}: not the config.json of an expert-iteration rounds folder "
            f"({err}); start the run again in a new folder (--out), or write "
            f"its config.yaml (algo: exit_siege)"
        ) from None


def exit_config(args: dict) -> TrainConfig:
    """The checked config of the command line's arguments (``args`` as ``vars(args)``; an
    ``init`` that is the shipped scorer's path becomes the default, "")."""
    init = args["init"]
    if init and Path(init).resolve() == default_init().resolve():
        init = ""
    return resolve(
        {
            "name": "exit_siege",
            "algo": "exit_siege",
            "game": "castle-siege",
            "variant": {"difficulty": args["difficulty"]},
            "seed": args["seed"],
            "exit_siege": {
                "rounds": args["rounds"],
                "games": args["games"],
                "eval_games": args["eval_games"],
                "iterations": args["iterations"],
                "temp": args["temp"],
                "init": init,
            },
        }
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="runs/exit_siege", help="the run folder (resumed if there)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--games", type=int, default=100, help="training games a round")
    p.add_argument("--eval-games", type=int, default=100, help="check games a round")
    p.add_argument("--difficulty", default="very_hard")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--temp", type=float, default=4.0)
    p.add_argument("--seed", type=int, default=TRAIN_SEEDS)
    p.add_argument(
        "--init",
        default="",
        help="starting scorer, a policy.json (default: the shipped castle_siege_very_hard_linear)",
    )
    args = p.parse_args(argv)
    if args.seed < TRAIN_SEEDS:
        p.error(f"--seed must be at least {TRAIN_SEEDS:,}: lower seeds are evaluation deals")
    try:
        config = exit_config(vars(args))
    except ValueError as err:
        p.error(str(err))
    out = Path(args.out)
    if (out / RunFolder.CONFIG).is_file() or (out / OLD_CONFIG).is_file():
        try:
            folder = open_run(out)
            _check_same_run(folder, config)
        except ValueError as err:
            p.error(str(err))
        summary = run_training(resume=str(out))
    else:
        try:
            new_folder(out, "--out", "it holds no run to resume: give a new or empty folder")
        except ValueError as err:
            p.error(str(err))
        summary = run_training(config, run_dir=out)
    if summary.get("interrupted"):
        print(f"interrupted after round {summary['rounds']}; run the same command to resume")


def _check_same_run(folder: RunFolder, config: TrainConfig) -> None:
    """The command line resumes its ``--out`` only with the arguments it started with
    (``--rounds`` may change: written to the run's config.yaml)."""
    saved = folder.config
    grown = dataclasses.replace(saved.exit_siege, rounds=config.exit_siege.rounds)
    differ = [
        name
        for name, a, b in (
            ("variant", saved.variant, config.variant),
            ("seed", saved.seed, config.seed),
        )
        if a != b
    ]
    differ += [
        f"exit_siege.{f.name}"
        for f in dataclasses.fields(grown)
        if getattr(grown, f.name) != getattr(config.exit_siege, f.name)
    ]
    if differ:
        raise ValueError(
            f"{folder.path} is a run of other arguments ({', '.join(differ)} "
            f"differ): give the same ones to resume it, or another --out"
        )
    if grown != saved.exit_siege:
        dump_config(saved.replace(exit_siege=grown), folder / RunFolder.CONFIG)


def _say(line: str) -> None:
    print(line, flush=True)


def _rate(wins: np.ndarray) -> dict:
    low, high = wilson_interval(int(wins.sum()), len(wins))
    return {"wins": int(wins.sum()), "games": len(wins), "low": low, "high": high}


def _pack(record: list) -> dict:
    sizes = np.array([len(f) for f, _ in record], np.int64)
    if not record:
        return {
            "sizes": sizes,
            "feats": np.zeros((0, len(BATTLE_FEATURES)), np.float32),
            "visits": np.zeros(0, np.float32),
        }
    return {
        "sizes": sizes,
        "feats": np.concatenate([f for f, _ in record]),
        "visits": np.concatenate([v for _, v in record]),
    }


def _unpack(saved) -> list:
    ends = np.cumsum(saved["sizes"])
    starts = ends - saved["sizes"]
    return [(saved["feats"][a:b], saved["visits"][a:b]) for a, b in zip(starts, ends)]


if __name__ == "__main__":
    main()
