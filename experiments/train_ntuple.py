"""``algo: ntuple_value``: a Castle Siege afterstate value of n-tuple tables, learned by
TD(lambda) over self-play of its own 1-ply greedy policy (``agents/learned/
castle_siege_ntuple_kernel.py`` has the tables, the afterstate and the update).

A chunk is ``ntuple.chunk_games`` games on training deals (``seed`` + games played, so a
resumed run plays the deals it would have played), their difficulty cycling through
``ntuple.levels`` (difficulty -> games in each cycle). Until ``ntuple.guide_until`` games,
each decision is played with a falling probability (``ntuple.guide`` at the start, 0 at
``guide_until``) by the shipped Very Hard linear move scorer instead of the value: from zero
weights the greedy policy wins almost nothing on Hard and Very Hard, so the value first
learns what the scorer's winning games look like. Held-out evaluation plays the greedy
policy on ``ntuple.eval_games`` deals of each of ``ntuple.eval_levels`` from
``ntuple.eval_seed``. The step is ``ntuple.lr``, falling geometrically to ``ntuple.lr_end``
at the last game when that is set. ``ntuple.init`` starts the tables at a saved ``ntuple_value`` model's
(a second stage with other settings). The checkpoint is the weights (``weights.npz``); ``final_model/`` is a
model directory of kind ``ntuple_value``; TensorBoard scalars go to ``tb/`` when
``tensorboardX`` or torch's writer is installed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.castle_siege_ntuple import WEIGHTS, NTupleValue, check_weights

from castle_envs.castle_siege.rules import difficulty_rows

from .config import TrainConfig
from .run_folder import RunFolder, Schedule, run_chunked
from .stats import win_record

#: the Very Hard linear scorer the early games follow (``ntuple.guide``)
GUIDE_MODEL = "castle_siege_very_hard_linear"


def deals(first_seed: int, n: int) -> np.ndarray:
    """The decks of the env's deals ``first_seed`` .. ``first_seed + n - 1`` (top first)."""
    return np.array(
        [np.random.default_rng(first_seed + i).permutation(52) for i in range(n)], np.int8
    )


def level_cycle(levels: dict) -> list[int]:
    """Defender rows per game of one cycle of ``ntuple.levels`` (difficulty -> games)."""
    return [difficulty_rows(name) for name, count in levels.items() for _ in range(count)]


def summary_writer(path: Path):
    """A TensorBoard writer (tensorboardX's, else torch's), or None when neither is here."""
    import importlib

    for module in ("tensorboardX", "torch.utils.tensorboard"):
        try:
            return importlib.import_module(module).SummaryWriter(str(path))
        except ImportError:
            continue
    return None


class NTupleTrainer:
    """TD(lambda) self-play as a ``run_folder.Chunked`` trainer (module docstring)."""

    def __init__(self, config: TrainConfig, log: Callable[[str], None] | None = None):
        from castle_envs.agents.learned import castle_siege_ntuple_kernel as M

        self.config, self.nt, self._M = config, config.ntuple, M
        self.log = log or (lambda line: print(line, flush=True))
        self.cycle = level_cycle(self.nt.levels)
        self.writer = None

    def schedule(self) -> Schedule:
        return Schedule(
            total=self.nt.games,
            eval_every=self.nt.eval_every,
            checkpoint_every=self.nt.chunk_games,
            unit="games",
            column="games",
            summary_keys=("decisions", "cpu_seconds"),
        )

    def initial_progress(self) -> dict:
        return {"decisions": 0, "cpu_seconds": 0.0}

    def build(self, folder: RunFolder, progress: dict) -> None:
        from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
        from castle_envs.agents.options import shipped_models_dir
        from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch

        self.folder = folder
        self.value = NTupleValue(prune=self.nt.prune, shaped=self.nt.shaped)
        if not folder.resumed and self.nt.init:
            from castle_envs.agents.learned.saved import read_card

            card = read_card(self.nt.init)
            if card["kind"] != "ntuple_value":
                raise ValueError(f"ntuple.init: {self.nt.init} is a {card['kind']} model")
            self.value.weights = NTupleValue.load(self.nt.init, card).weights
        if folder.resumed:
            latest = folder.latest_checkpoint(marker=WEIGHTS)
            with np.load(latest / WEIGHTS, allow_pickle=False) as f:
                self.value.weights = check_weights(f["weights"], self._M.N_WEIGHTS, "checkpoint")
        guide = Path(shipped_models_dir()) / GUIDE_MODEL / "policy.json"
        self.guide_weights = LinearPolicy.load(guide).vector()
        self.scratch = new_scratch()
        self.writer = summary_writer(folder / "tb")

    def guide_now(self, games: int) -> float:
        """The chance a decision follows the scorer after ``games`` games (falls to 0)."""
        until = self.nt.guide_until
        return self.nt.guide * max(0.0, 1.0 - games / until) if until > 0 else 0.0

    def lr_now(self, games: int) -> float:
        """The step after ``games`` games: ``lr`` falling geometrically to ``lr_end`` at the
        last game (constant when ``lr_end`` is 0). A large step learns fast from zero tables
        but leaves them as noisy as its last games; a falling one averages more of them."""
        nt = self.nt
        if nt.lr_end <= 0:
            return nt.lr
        return nt.lr * (nt.lr_end / nt.lr) ** (games / nt.games)

    def train_chunk(self, progress: dict) -> int:
        nt, done = self.nt, progress["games"]
        n = min(nt.chunk_games, nt.games - done)
        decks = deals(self.config.seed + done, n)
        rows = np.array([self.cycle[(done + i) % len(self.cycle)] for i in range(n)], np.int64)
        won = np.zeros(n, np.bool_)
        stats = np.zeros(3)
        guide = self.guide_now(done)
        lr = self.lr_now(done)
        cpu = time.process_time()
        self._M.play_games(
            decks, rows, self.value.weights, True, lr, nt.lam, nt.eps, nt.shaped,
            nt.prune, self.config.seed + done, guide, self.guide_weights, self.scratch,
            won, stats,
        )  # fmt: skip
        cpu = time.process_time() - cpu
        progress["games"] = done + n
        progress["decisions"] += int(stats[0])
        progress["cpu_seconds"] += cpu
        td = float(stats[1] / max(stats[2], 1.0))
        self.log(
            f"games {done + n}: won {won.mean():.3f} of the chunk's, guide {guide:.2f}, lr {lr:.3g}, "
            f"TD error {td:.4f}, {cpu / n * 1000:.2f} CPU-ms a game"
        )
        if self.writer is not None:
            for key, value in (("train/won", won.mean()), ("train/td_error", td)):
                self.writer.add_scalar(key, float(value), done + n)
            self.writer.add_scalar("train/guide", guide, done + n)
            self.writer.add_scalar("train/lr", lr, done + n)
        return n

    def evaluate(self, progress: dict, write_row: Callable[[dict], None]) -> dict:
        nt, rates = self.nt, []
        for level in nt.eval_levels:
            won = self.play(nt.eval_seed, nt.eval_games, level)
            record = win_record(int(won.sum()), len(won), "ci95")
            write_row({"difficulty": level, **record, "ci95": " ".join(map(str, record["ci95"]))})
            rates.append(record["win_rate"])
            if self.writer is not None:
                self.writer.add_scalar(f"eval/{level}", record["win_rate"], progress["games"])
            self.log(f"eval {level}: {record['wins']} / {len(won)}")
        return {"win_rate": float(np.mean(rates))}

    def play(self, first_seed: int, n: int, level: str) -> np.ndarray:
        """Which of ``n`` deals from ``first_seed`` the greedy policy wins (no learning)."""
        won = np.zeros(n, np.bool_)
        self._M.play_games(
            deals(first_seed, n), np.full(n, difficulty_rows(level), np.int64),
            self.value.weights, False, 0.0, 0.0, 0.0, self.nt.shaped, self.nt.prune, 0,
            0.0, self.guide_weights, self.scratch, won, np.zeros(3),
        )  # fmt: skip
        return won

    def write_checkpoint(self, folder: Path) -> None:
        np.savez_compressed(folder / WEIGHTS, weights=self.value.weights)

    def save_model(self, target: Path) -> None:
        nt = self.nt
        self.value.save(
            target,
            {
                "training": {
                    "algo": "ntuple_value",
                    "seed": self.config.seed,
                    "games": nt.games,
                    "levels": dict(nt.levels),
                    "lr": nt.lr,
                    "lr_end": nt.lr_end,
                    "lam": nt.lam,
                    "eps": nt.eps,
                    "guide": nt.guide,
                    "guide_until": nt.guide_until,
                    "init": nt.init,
                }
            },
        )

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def run_training(
    config: TrainConfig | None = None,
    run_dir=None,
    resume=None,
    stop_after: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Run (or ``resume`` a run folder); ``stop_after`` ends this session after that many
    games (whole chunks), checkpointed."""
    if resume:
        folder = RunFolder.open(resume, "ntuple_value")
    elif config is None:
        raise ValueError("give a config, or a run folder to resume")
    else:
        folder = RunFolder.create(config, run_dir)
    trainer = NTupleTrainer(folder.config, log)
    return run_chunked(trainer, folder, stop_after, trainer.schedule())


def run_training_args(config: TrainConfig, args) -> dict:
    """``ALGORITHMS``' entry: ``castle-envs train`` (``--resume``, ``--run-dir``)."""
    return run_training(None if args.resume else config, run_dir=args.run_dir, resume=args.resume)
