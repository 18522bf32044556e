"""One training harness: the run folder's life, written once for every trainer.

``RunFolder`` owns a run directory's layout and the files every trainer writes there:

* ``config.yaml``: the resolved config (``RunFolder.create``), read back on ``--resume``
  (``RunFolder.open``, which refuses a folder without one, or one of another algorithm);
* ``progress.json``: the counters, replaced whole (``write_progress``; keys starting with
  ``_`` are in-memory only), read back with the keys a trainer needs checked
  (``read_progress``);
* ``eval.csv``: one row per held-out evaluation, appended (``append_eval``);
* ``checkpoints/latest/``: written to ``latest.tmp`` with its own ``progress.json``,
  flushed to disk and renamed into place (the old one kept as ``latest.old`` until then),
  so a kill never leaves half a checkpoint, nor a checkpoint with another's counters
  (``save_checkpoint``; ``latest_checkpoint`` finds it);
* ``summary.json`` at the end (``write_summary``);
* interrupts: ``interruptible()`` turns SIGTERM (``timeout``, Docker, Kubernetes) into
  Ctrl-C and catches both, so the trainer checkpoints and exits cleanly.

``run_chunked`` is the training loop of every trainer but MaskablePPO: a ``Chunked`` plug-in
builds its model, trains one chunk, evaluates and saves or loads its weights; the harness
counts the chunks' work against a ``Schedule`` (env steps to ``total_timesteps`` for the PPO
trainers, ``train_moves`` and ``train_moves_aec``; generations for ``train_cem``; rounds for
``exit_siege``), decides when to evaluate and checkpoint, keeps the wall clock, the best model
and the summary. ``train.py`` (MaskablePPO, whose loop is Stable-Baselines3's: ARCHITECTURE.md
says why it stays so) uses the folder without the loop. ``folder.config`` is the run's typed
``TrainConfig`` (``experiments/config.py``).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from castle_envs.core.files import read_json

from .config import TrainConfig, load_config, new_run_dir


class RunFolder:
    """A training run's directory; see the module's docstring for its files."""

    CONFIG = "config.yaml"
    PROGRESS = "progress.json"
    EVAL = "eval.csv"
    SUMMARY = "summary.json"
    CHECKPOINTS = "checkpoints"

    def __init__(self, path: str | Path, config: TrainConfig | None = None, resumed: bool = False):
        """The folder at ``path`` as it stands (``create`` and ``open`` make and check one)."""
        self.path = Path(path)
        # (a folder opened only to read its files gets the defaults)
        self.config: TrainConfig = config if config is not None else TrainConfig()
        self.resumed = resumed

    # --- making and opening -------------------------------------------------------------
    @classmethod
    def create(cls, config: TrainConfig | dict, run_dir: str | Path | None = None) -> RunFolder:
        """Resolve ``config``, create the folder (default ``run_dir/NAME_TIMESTAMP``) and
        write the resolved config as ``config.yaml``."""
        config, path = new_run_dir(config, run_dir)
        return cls(path, config, resumed=False)

    @classmethod
    def open(cls, path: str | Path, algo: str | None = None, what: str = "") -> RunFolder:
        """A run folder to resume: its own ``config.yaml`` (a missing one: FileNotFoundError
        '... not a run folder'; ``what`` names the kind, e.g. 'CEM'); with ``algo``, a folder
        of another algorithm is refused (ValueError naming both)."""
        path = Path(path)
        if not (path / cls.CONFIG).is_file():
            kind = f"{what} " if what else ""
            raise FileNotFoundError(f"{path} has no {cls.CONFIG}: not a {kind}run folder")
        config = load_config(path / cls.CONFIG)
        if algo is not None and config.algo != algo:
            raise ValueError(
                f"{path} is a run of algo {config.algo!r}, not {algo!r}: "
                f"resume it with its own trainer"
            )
        folder = cls(path, config, resumed=True)
        folder._recover_checkpoint()
        return folder

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    # --- progress.json --------------------------------------------------------------------
    def read_progress(self, required: dict[str, Callable] | None = None) -> dict:
        """``progress.json``; each key of ``required`` must be there and convert with its
        function (``int``, ``float``), else ValueError '... missing or damaged'. The copy in
        the latest checkpoint is read when there is one: it is the progress of that very
        checkpoint, while the run folder's own may be older (a kill between putting a
        checkpoint in place and writing ``progress.json`` beside it)."""
        path = self.latest / self.PROGRESS
        if not path.is_file():
            path = self.path / self.PROGRESS
        try:
            progress = read_json(path, "progress file", allow_nan=True)
            if not isinstance(progress, dict):
                raise TypeError(f"expected a JSON object, got {type(progress).__name__}")
            for key, kind in (required or {}).items():
                kind(progress[key])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path} is missing or damaged: {err}") from None
        return progress

    @property
    def has_progress(self) -> bool:
        """Whether the run wrote its counters (in its latest checkpoint or beside it)."""
        return (self.latest / self.PROGRESS).is_file() or (self.path / self.PROGRESS).is_file()

    def write_progress(self, progress: dict) -> None:
        """Replaced whole (a temporary file renamed over it); ``_`` keys are left out. The
        latest checkpoint's copy (``save_checkpoint``) is replaced first: whatever a
        trainer writes after a checkpoint (the final evaluation, the wall clock) is still
        that checkpoint's progress."""
        data = {k: v for k, v in progress.items() if not str(k).startswith("_")}
        text = json.dumps(data, indent=2)
        if (self.latest / self.PROGRESS).is_file():
            replace_file(self.latest / self.PROGRESS, text)
        replace_file(self.path / self.PROGRESS, text)

    # --- eval.csv -------------------------------------------------------------------------
    def append_eval(self, row: dict) -> None:
        """One row of ``eval.csv`` (the header with the first)."""
        path = self.path / self.EVAL
        new = not path.exists()
        with open(path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)

    def drop_evals_after(self, column: str, counter: int, evaluated: bool) -> None:
        """Rows of ``eval.csv`` the run being resumed will write again: those past ``counter``
        (its checkpoint's ``column``), and those at it unless that checkpoint counts the
        evaluation there (``evaluated``): a kill after an evaluation and before the next
        checkpoint would otherwise leave its rows twice in the curve. A file whose first
        column is not ``column``, or not whole numbers, is left as it is."""
        path = self.path / self.EVAL
        if not path.is_file():
            return
        lines = path.read_text().splitlines(keepends=True)
        if not lines or lines[0].split(",", 1)[0] != column:
            return
        keep = lines[:1]
        for line in lines[1:]:
            first = line.split(",", 1)[0]
            if not first.isdigit():
                return
            if int(first) < counter or (int(first) == counter and evaluated):
                keep.append(line)
        if len(keep) < len(lines):
            replace_file(path, "".join(keep))

    # --- checkpoints ----------------------------------------------------------------------
    @property
    def latest(self) -> Path:
        return self.path / self.CHECKPOINTS / "latest"

    def save_checkpoint(self, write: Callable[[Path], None], progress: dict | None = None) -> Path:
        """``write(folder)`` fills a fresh ``checkpoints/latest.tmp`` (with ``progress``, its
        ``progress.json``: ``read_progress`` reads that copy), whose files are flushed to
        disk before it replaces ``checkpoints/latest`` (the old one renamed ``latest.old``
        first, deleted after): a kill, or a crash of the machine, leaves the old checkpoint
        or the new one, never half (``open`` puts back a ``latest.old`` that a kill left
        without a ``latest``; a ``latest.tmp`` is never read)."""
        root = self.path / self.CHECKPOINTS
        root.mkdir(exist_ok=True)
        tmp, old = root / "latest.tmp", root / "latest.old"
        for stale in (tmp, old):
            if stale.exists():
                shutil.rmtree(stale)
        tmp.mkdir()
        write(tmp)
        if progress is not None:
            data = {k: v for k, v in progress.items() if not str(k).startswith("_")}
            (tmp / self.PROGRESS).write_text(json.dumps(data, indent=2))
        sync_tree(tmp)
        if self.latest.exists():
            self.latest.rename(old)
        tmp.rename(self.latest)
        sync_tree(root, files=False)
        if old.exists():
            shutil.rmtree(old)
        return self.latest

    def _recover_checkpoint(self) -> None:
        """A kill between ``save_checkpoint``'s two renames left the previous checkpoint as
        ``latest.old`` and no ``latest``: it is the latest again (``progress.json`` is
        written after a checkpoint, so it still matches that one)."""
        old = self.path / self.CHECKPOINTS / "latest.old"
        if old.is_dir() and not self.latest.exists():
            old.rename(self.latest)

    def latest_checkpoint(self, marker: str = "policy.pt") -> Path:
        """``checkpoints/latest`` when it holds ``marker``, else FileNotFoundError."""
        if not (self.latest / marker).is_file():
            raise FileNotFoundError(
                f"{self.path} has no {self.CHECKPOINTS}/latest/{marker} to resume from"
            )
        return self.latest

    # --- the end --------------------------------------------------------------------------
    def write_summary(self, summary: dict) -> None:
        (self.path / self.SUMMARY).write_text(json.dumps(summary, indent=2))

    def interruptible(self) -> Interruptible:
        return Interruptible()


def replace_file(path: Path, text: str) -> None:
    """``path`` replaced whole by ``text``: a temporary file beside it, flushed to disk,
    renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    sync_tree(path.parent, files=False)


def sync_tree(folder: Path, files: bool = True) -> None:
    """Flush ``folder`` (and with ``files`` every file and folder under it) to disk, so
    that a rename publishing it never reaches the disk before what it publishes."""
    paths = [*sorted(folder.rglob("*"), reverse=True), folder] if files else [folder]
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # a folder some systems will not open: nothing to flush there
            continue
        with contextlib.suppress(OSError):
            os.fsync(fd)
        os.close(fd)


class Interruptible:
    """``with Interruptible() as guard:`` SIGTERM interrupts like Ctrl-C inside the block, and
    either one ends the block quietly with ``guard.interrupted`` set (the previous SIGTERM
    handler comes back afterwards). Outside the main thread signals are left alone."""

    def __init__(self):
        self.interrupted = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> Interruptible:
        def handler(signum, frame):
            raise KeyboardInterrupt(f"signal {signum}")

        try:
            self._previous = signal.signal(signal.SIGTERM, handler)
            self._installed = True
        except ValueError:  # not the main thread
            self._installed = False
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            self.interrupted = True
            return True
        return False


# --- the loop of the chunked trainers -------------------------------------------------------
class Chunked(Protocol):
    """What an algorithm plugs into ``run_chunked``: its model and its chunks."""

    def initial_progress(self) -> dict:
        """A fresh run's ``progress.json`` counters (beyond those the harness keeps)."""

    def build(self, folder: RunFolder, progress: dict) -> None:
        """Build the model; load the latest checkpoint when ``folder.resumed``, else start
        it (warm starts may add to ``progress``)."""

    def train_chunk(self, progress: dict) -> int:
        """Train one chunk (a rollout and its update; a CEM generation; an expert-iteration
        round), adding what it did to the schedule's counter (``progress["num_timesteps"]``,
        before logging them); return that amount."""

    def evaluate(self, progress: dict, write_row: Callable[[dict], None]) -> dict:
        """Held-out evaluation: ``write_row`` each ``eval.csv`` row (less the schedule's
        ``column`` and ``wall_seconds``, which the harness puts first); return the result
        (its ``win_rate`` picks the best model). Never called when ``eval_every`` is 0."""

    def write_checkpoint(self, folder: Path) -> None:
        """Write the model's checkpoint files into ``folder``."""

    def save_model(self, target: Path) -> None:
        """The model as a model directory (``--agent model:DIR``)."""

    def close(self) -> None:
        """Release envs and writers."""


#: the counters ``run_chunked`` keeps in ``progress.json`` (with the schedule's ``unit``)
HARNESS_PROGRESS = {"wall_seconds": 0.0, "evals_done": 0, "checkpoints": 0, "best_win_rate": -1.0}


@dataclass(frozen=True)
class Schedule:
    """What ``run_chunked`` counts and when it evaluates and checkpoints. The PPO trainers'
    (``Schedule.steps(config)``) counts env steps to ``total_timesteps``; CEM counts
    generations and expert iteration rounds, each its own chunk."""

    total: int  # the run is done when the counter reaches it
    eval_every: int  # held-out evaluation every so many; 0: none at all
    checkpoint_every: int
    unit: str = "num_timesteps"  # the ``progress.json`` counter chunks add to
    column: str = "steps"  # its name in ``eval.csv``'s first column
    eval_at_start: bool = True  # a fresh run's starting policy evaluated (the curve's origin)
    eval_last: bool = False  # the last chunk evaluated before its checkpoint, not after
    # an interrupt leaves the latest checkpoint as it is (the chunk it cut short is redone on
    # resume) instead of checkpointing the middle of a chunk: for trainers whose state moves
    # during a chunk in ways a checkpoint must not catch (CEM's generator, a round's scorer)
    whole_chunks: bool = False
    summary_keys: tuple = ()  # ``progress`` counters also copied into the summary

    @classmethod
    def steps(cls, config: TrainConfig) -> Schedule:
        return cls(config.total_timesteps, config.eval.every_steps, config.checkpoint.every_steps)


def run_chunked(
    trainer: Chunked,
    folder: RunFolder,
    stop_after: int | None = None,
    schedule: Schedule | None = None,
) -> dict:
    """Train ``trainer`` in ``folder`` to the schedule's total (``Schedule.steps``:
    ``total_timesteps`` env steps): the starting policy evaluated (a fresh run's curve starts
    there), chunks until done, ``stop_after`` units this session (whole chunks) or an
    interrupt, evaluations and checkpoints when due, a checkpoint at the end of every
    session (but one interrupted under ``whole_chunks``: the latest checkpoint stands); a
    finished run gets its final evaluation, ``final_model/`` and ``summary.json``. Returns
    the summary (``interrupted``/``stopped`` when cut short)."""
    plan = schedule or Schedule.steps(folder.config)
    unit = plan.unit
    if folder.resumed:
        progress = folder.read_progress({unit: int, "wall_seconds": float})
    else:
        progress = {unit: 0, **HARNESS_PROGRESS, **trainer.initial_progress()}
    trainer.build(folder, progress)
    clock = {"start": time.perf_counter()}
    last_eval = f"last_eval_{plan.column}"
    if folder.resumed:
        evaluated = progress.get(last_eval) == progress[unit]
        folder.drop_evals_after(plan.column, progress[unit], evaluated)

    def lap() -> None:
        """Fold this session's time so far into ``progress["wall_seconds"]``."""
        progress["wall_seconds"] += time.perf_counter() - clock["start"]
        clock["start"] = time.perf_counter()

    # what the latest checkpoint holds, for an interrupt of a ``whole_chunks`` schedule
    checkpointed = copy.deepcopy(progress)

    def checkpoint() -> None:
        folder.save_checkpoint(trainer.write_checkpoint, progress)
        folder.write_progress(progress)
        checkpointed.clear()
        checkpointed.update(copy.deepcopy(progress))

    def maybe_eval(final: bool = False) -> None:
        every = plan.eval_every
        if not every:
            return
        due = progress[unit] // every > progress["evals_done"]
        if not (due or final) or progress.get(last_eval) == progress[unit]:
            return
        progress[last_eval] = progress[unit]
        progress["evals_done"] = progress[unit] // every

        def write_row(row: dict) -> None:
            wall = progress["wall_seconds"] + time.perf_counter() - clock["start"]
            folder.append_eval({plan.column: progress[unit], "wall_seconds": round(wall, 1), **row})

        result = trainer.evaluate(progress, write_row)
        if result["win_rate"] > progress["best_win_rate"]:
            progress["best_win_rate"] = result["win_rate"]
            trainer.save_model(folder / "best_model")
        progress["last_eval"] = result

    session = 0
    if not folder.resumed and plan.eval_at_start:
        maybe_eval(final=True)  # the starting policy's held-out win rate: the curve's origin
    with folder.interruptible() as guard:
        while progress[unit] < plan.total and (stop_after is None or session < stop_after):
            session += trainer.train_chunk(progress)
            maybe_eval(final=plan.eval_last and progress[unit] >= plan.total)
            every = plan.checkpoint_every
            if progress[unit] // every > progress["checkpoints"]:
                progress["checkpoints"] = progress[unit] // every
                lap()
                checkpoint()
    lap()
    if guard.interrupted and plan.whole_chunks:
        progress.clear()  # the latest checkpoint stands: the run resumes from it
        progress.update(checkpointed)
    else:
        checkpoint()  # an interrupted or stopped run resumes from here
    summary: dict = {
        "run_dir": str(folder.path),
        unit: progress[unit],
        **{k: progress[k] for k in plan.summary_keys},
        "wall_seconds": round(progress["wall_seconds"], 1),
    }
    if guard.interrupted or progress[unit] < plan.total:
        trainer.close()
        return {**summary, "interrupted": guard.interrupted, "stopped": True}
    maybe_eval(final=True)
    lap()
    folder.write_progress(progress)
    trainer.save_model(folder / "final_model")
    trainer.close()
    summary["final_eval"] = progress.get("last_eval")
    folder.write_summary(summary)
    return summary


def open_or_create(
    config: TrainConfig | dict | None, run_dir=None, resume=None, algo: str | None = None
) -> RunFolder:
    """``RunFolder.open(resume)`` when resuming, else ``RunFolder.create(config, run_dir)``."""
    if resume:
        return RunFolder.open(resume, algo)
    if config is None:
        raise ValueError("give a config, or a run folder to resume")
    return RunFolder.create(config, run_dir)
