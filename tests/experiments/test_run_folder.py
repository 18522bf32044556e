"""The training harness (experiments/run_folder.py): the run folder's files, resume after an
interrupt, refusing foreign or damaged folders, driven by a toy trainer (no torch)."""

import csv
import json
import os
import signal

import pytest
from castle_envs.experiments.config import resolve
from castle_envs.experiments.run_folder import Interruptible, RunFolder, Schedule, run_chunked


def _config(**extra):
    return resolve(
        {
            "name": "toy",
            "total_timesteps": 12,
            "eval": {"every_steps": 4, "episodes": 1},
            "checkpoint": {"every_steps": 2},
            **extra,
        }
    )


class Toy:
    """Counts: each chunk adds 2 steps and its number to a sum; ``stop_at`` interrupts."""

    def __init__(self, stop_at=None, sig=None):
        self.stop_at, self.sig = stop_at, sig
        self.total, self.closed = 0, False

    def initial_progress(self):
        return {"updates": 0}

    def build(self, folder, progress):
        if folder.resumed:
            ckpt = folder.latest_checkpoint("state.json")
            self.total = json.loads((ckpt / "state.json").read_text())["total"]

    def train_chunk(self, progress):
        if progress["num_timesteps"] == self.stop_at:
            if self.sig:
                os.kill(os.getpid(), self.sig)
            raise KeyboardInterrupt
        progress["updates"] += 1
        self.total += progress["updates"]
        progress["num_timesteps"] += 2
        return 2

    def evaluate(self, progress, write_row):
        rate = min(1.0, progress["num_timesteps"] / 12)
        write_row({"episodes": 1, "win_rate": rate})
        return {"win_rate": rate}

    def write_checkpoint(self, folder):
        (folder / "state.json").write_text(json.dumps({"total": self.total}))

    def save_model(self, target):
        target.mkdir(exist_ok=True)
        (target / "model.json").write_text(json.dumps({"total": self.total}))

    def close(self):
        self.closed = True


def _files(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_a_run_writes_config_progress_eval_checkpoint_models_and_summary(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    toy = Toy()
    summary = run_chunked(toy, folder)
    assert toy.closed and summary["num_timesteps"] == 12 and "interrupted" not in summary
    assert _files(tmp_path / "run") == [
        "best_model/model.json",
        "checkpoints/latest/progress.json",
        "checkpoints/latest/state.json",
        "config.yaml",
        "eval.csv",
        "final_model/model.json",
        "progress.json",
        "summary.json",
    ]
    progress = json.loads((tmp_path / "run" / "progress.json").read_text())
    assert progress["num_timesteps"] == 12 and progress["updates"] == 6
    assert progress["checkpoints"] == 6 and progress["evals_done"] == 3
    rows = list(csv.DictReader(open(tmp_path / "run" / "eval.csv")))
    assert [r["steps"] for r in rows] == ["0", "4", "8", "12"]  # the origin, then every 4
    assert list(rows[0]) == ["steps", "wall_seconds", "episodes", "win_rate"]
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["final_eval"] == {
        "win_rate": 1.0
    }


@pytest.mark.parametrize("sig", [None, signal.SIGTERM], ids=["ctrl-c", "SIGTERM"])
def test_resume_after_an_interrupt_ends_as_an_uninterrupted_run(tmp_path, sig):
    whole = Toy()
    run_chunked(whole, RunFolder.create(_config(), tmp_path / "whole"))
    previous = signal.getsignal(signal.SIGTERM)
    cut = Toy(stop_at=6, sig=sig)
    summary = run_chunked(cut, RunFolder.create(_config(), tmp_path / "part"))
    assert signal.getsignal(signal.SIGTERM) is previous  # the handler given back
    assert summary["interrupted"] and summary["stopped"] and summary["num_timesteps"] == 6
    assert cut.closed and not (tmp_path / "part" / "summary.json").exists()
    assert json.loads((tmp_path / "part" / "progress.json").read_text())["num_timesteps"] == 6
    resumed = Toy()
    summary = run_chunked(resumed, RunFolder.open(tmp_path / "part"))
    assert summary["num_timesteps"] == 12 and resumed.total == whole.total
    steps = [r["steps"] for r in csv.DictReader(open(tmp_path / "part" / "eval.csv"))]
    assert steps == ["0", "4", "8", "12"]  # none twice, none missing
    progress = json.loads((tmp_path / "part" / "progress.json").read_text())
    assert progress["updates"] == 6 and progress["wall_seconds"] > 0


def test_stop_after_ends_the_session_after_whole_chunks(tmp_path):
    summary = run_chunked(Toy(), RunFolder.create(_config(), tmp_path / "run"), stop_after=3)
    assert summary == {**summary, "num_timesteps": 4, "interrupted": False, "stopped": True}


class Rounds(Toy):
    """The toy counting rounds (CEM's generations, expert iteration's rounds): a chunk is one."""

    def train_chunk(self, progress):
        progress["updates"] += 1
        self.total += progress["updates"]
        if progress["rounds"] == self.stop_at:
            raise KeyboardInterrupt  # in the middle of a round: its state has moved
        progress["rounds"] += 1
        return 1

    def evaluate(self, progress, write_row):
        # which rounds were checkpointed when it ran: the last is evaluated before its own
        write_row({"checkpointed": progress["checkpoints"]})
        return {"win_rate": progress["rounds"] / 5}


def test_a_schedule_counts_its_own_unit_and_may_evaluate_the_last_chunk_first(tmp_path):
    plan = Schedule(
        total=5,
        eval_every=2,
        checkpoint_every=1,
        unit="rounds",
        column="round",
        eval_at_start=False,
        eval_last=True,
        summary_keys=("updates",),
    )
    summary = run_chunked(Rounds(), RunFolder.create(_config(), tmp_path / "run"), schedule=plan)
    assert {k: summary[k] for k in ("rounds", "updates", "final_eval")} == {
        "rounds": 5,
        "updates": 5,
        "final_eval": {"win_rate": 1.0},
    }
    rows = list(csv.DictReader(open(tmp_path / "run" / "eval.csv")))
    assert [(r["round"], r["checkpointed"]) for r in rows] == [("2", "1"), ("4", "3"), ("5", "4")]
    part = run_chunked(
        Rounds(), RunFolder.create(_config(), tmp_path / "part"), stop_after=2, schedule=plan
    )
    assert part["rounds"] == 2 and part["stopped"]
    resumed = run_chunked(Rounds(), RunFolder.open(tmp_path / "part"), schedule=plan)
    assert resumed["rounds"] == 5

    def untimed(path):  # the rows, less the clock (two runs never take the same time)
        return [
            {k: v for k, v in r.items() if k != "wall_seconds"} for r in csv.DictReader(open(path))
        ]

    assert untimed(tmp_path / "part" / "eval.csv") == untimed(tmp_path / "run" / "eval.csv")


def test_an_interrupt_of_whole_chunks_leaves_the_latest_checkpoint(tmp_path):
    plan = Schedule(
        total=5, eval_every=0, checkpoint_every=1, unit="rounds", column="round", whole_chunks=True
    )
    whole = Rounds()
    run_chunked(whole, RunFolder.create(_config(), tmp_path / "whole"), schedule=plan)
    cut = run_chunked(
        Rounds(stop_at=3), RunFolder.create(_config(), tmp_path / "part"), schedule=plan
    )
    assert cut["interrupted"] and cut["rounds"] == 3
    progress = json.loads((tmp_path / "part" / "progress.json").read_text())
    assert (progress["rounds"], progress["updates"]) == (3, 3)  # round 4's start not kept
    resumed = Rounds()
    assert run_chunked(resumed, RunFolder.open(tmp_path / "part"), schedule=plan)["rounds"] == 5
    assert resumed.total == whole.total


def test_a_schedule_without_evaluations_writes_no_eval_csv_nor_best_model(tmp_path):
    plan = Schedule(total=3, eval_every=0, checkpoint_every=1, unit="rounds", column="round")
    summary = run_chunked(Rounds(), RunFolder.create(_config(), tmp_path / "run"), schedule=plan)
    assert summary["rounds"] == 3 and summary["final_eval"] is None
    assert _files(tmp_path / "run") == [
        "checkpoints/latest/progress.json",
        "checkpoints/latest/state.json",
        "config.yaml",
        "final_model/model.json",
        "progress.json",
        "summary.json",
    ]


def test_a_folder_without_config_is_not_a_run_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="has no config.yaml: not a run folder"):
        RunFolder.open(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a CEM run folder"):
        RunFolder.open(tmp_path, what="CEM")


def test_a_foreign_run_folder_is_refused(tmp_path):
    RunFolder.create(_config(algo="cem"), tmp_path / "cem")
    with pytest.raises(ValueError, match="algo 'cem', not 'maskable_ppo'"):
        RunFolder.open(tmp_path / "cem", algo="maskable_ppo")


def test_a_damaged_config_or_progress_is_refused(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    for text in (
        "",
        "[1, 2]",
        '{"num_timesteps": "many", "wall_seconds": 0}',
        '{"wall_seconds": 1}',
    ):
        (tmp_path / "run" / "progress.json").write_text(text)
        with pytest.raises(ValueError, match="progress.json is missing or damaged"):
            run_chunked(Toy(), RunFolder.open(folder.path))
    (tmp_path / "run" / "config.yaml").write_text("ppo: {n_stepz: 3}\n")
    with pytest.raises(ValueError, match="ppo.n_stepz: unknown key"):
        RunFolder.open(folder.path)


def test_a_missing_checkpoint_is_named(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    with pytest.raises(FileNotFoundError, match="no checkpoints/latest/policy.pt to resume"):
        folder.latest_checkpoint()


def test_a_checkpoint_is_replaced_whole(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    folder.save_checkpoint(lambda d: (d / "a").write_text("1"))

    def fails(d):
        (d / "a").write_text("2")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        folder.save_checkpoint(fails)
    assert (folder.latest / "a").read_text() == "1"  # the old one stands
    folder.save_checkpoint(lambda d: (d / "b").write_text("3"))
    assert _files(folder.path / "checkpoints") == ["latest/b"]


def test_a_kill_between_the_checkpoint_renames_leaves_the_old_one(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    folder.save_checkpoint(lambda d: (d / "a").write_text("1"))
    folder.latest.rename(folder.path / "checkpoints" / "latest.old")  # killed right here
    resumed = RunFolder.open(folder.path)
    assert (resumed.latest / "a").read_text() == "1"
    resumed.save_checkpoint(lambda d: (d / "a").write_text("2"))
    assert _files(folder.path / "checkpoints") == ["latest/a"]


def test_progress_leaves_out_private_keys_and_is_replaced_whole(tmp_path):
    folder = RunFolder.create(_config(), tmp_path / "run")
    folder.write_progress({"num_timesteps": 3, "_streams": [1]})
    assert json.loads((folder / "progress.json").read_text()) == {"num_timesteps": 3}
    assert not (folder / "progress.json.tmp").exists()


def test_interruptible_lets_other_errors_through():
    with pytest.raises(RuntimeError), Interruptible():
        raise RuntimeError("boom")
    with Interruptible() as guard:
        pass
    assert not guard.interrupted


def test_the_trainers_refuse_another_algorithms_run_folder(tmp_path):
    from castle_envs.experiments.train import train
    from castle_envs.experiments.train_cem import run_training

    RunFolder.create(_config(algo="cem"), tmp_path / "cem")
    RunFolder.create(_config(), tmp_path / "ppo")
    with pytest.raises(ValueError, match="algo 'cem', not 'maskable_ppo'"):
        train(resume=str(tmp_path / "cem"), progress_bar=False)
    with pytest.raises(ValueError, match="algo 'maskable_ppo', not 'cem'"):
        run_training(None, resume=str(tmp_path / "ppo"), progress_bar=False)
