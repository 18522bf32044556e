"""Model directories and policy files edited, damaged or replaced: ``--agent model:DIR`` and
``linear:PATH`` refuse each with one line naming the file and what is wrong (exit 2), never
a traceback, a hang or an agent that plays from NaN weights."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from castle_envs.experiments.cli import main

torch = pytest.importorskip("torch")

MODELS = Path(__file__).resolve().parents[2] / "models"
MOVE_POLICY = "castle_siege_hard_move_ppo"
MASKABLE_PPO = "castle_siege_very_hard"
LINEAR = "castle_siege_very_hard_linear"
KINDS = [MOVE_POLICY, MASKABLE_PPO]


@pytest.fixture(autouse=True)
def no_hang():
    """A load that blocks (a FIFO opened for reading waits for a writer) fails the test
    instead of hanging the suite."""

    def stop(signum, frame):
        raise TimeoutError("the load hung")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _copy(tmp_path, name: str) -> Path:
    if name == MASKABLE_PPO:
        pytest.importorskip("sb3_contrib")
    target = tmp_path / "model"
    shutil.copytree(MODELS / name, target)
    return target


def _edit_card(directory: Path, change) -> None:
    card = json.loads((directory / "model.json").read_text())
    change(card)
    (directory / "model.json").write_text(json.dumps(card))


def refused(capsys, tmp_path, spec: str, *words) -> str:
    """``castle-envs evaluate --agent spec`` exits 2 with one line naming ``words``."""
    argv = ["evaluate", "--game", "castle-siege", "--agent", spec, "--episodes", "1"]
    code = main([*argv, "--workers", "1", "--no-plot", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback" not in err and len(lines) == 1, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# --- damaged weights ---------------------------------------------------------------------------
PICKLES = {
    "empty stack": b"\x80\x02.",  # STOP with nothing on the stack
    "mark then stop": b"\x80\x02(.",
    "binget of a missing memo": b"\x80\x02h\x05.",
    "truncated": b"\x80\x02}q\x00",
    "not a zip": b"PK\x03\x04garbage",
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("damage", list(PICKLES))
def test_a_damaged_weights_pickle_is_refused(capsys, tmp_path, kind, damage):
    model = _copy(tmp_path, kind)
    (model / "weights.pt").write_bytes(PICKLES[damage])
    refused(
        capsys, tmp_path, f"model:{model}", "weights.pt", "not a plain file of tensors", "model"
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("special", ["fifo", "directory", "device"])
def test_weights_that_are_no_regular_file_are_refused_without_opening(
    capsys, tmp_path, kind, special
):
    model = _copy(tmp_path, kind)
    weights = model / "weights.pt"
    weights.unlink()
    if special == "fifo":
        os.mkfifo(weights)  # opening it to read would wait for a writer forever
    elif special == "directory":
        weights.mkdir()
    else:
        weights.symlink_to("/dev/zero")  # reading it would never end
    word = {"fifo": "a FIFO", "directory": "a directory", "device": "a character device"}
    refused(capsys, tmp_path, f"model:{model}", "weights.pt", word[special])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_network_weights_are_refused(capsys, tmp_path, kind, value):
    model = _copy(tmp_path, kind)
    tensors = torch.load(model / "weights.pt", weights_only=True)
    name = sorted(k for k, v in tensors.items() if v.is_floating_point())[-1]
    tensors[name].view(-1)[0] = value
    torch.save(tensors, model / "weights.pt")
    refused(capsys, tmp_path, f"model:{model}", "weights.pt", name, "NaN or infinite")


# --- model.json ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bracket", ["[]", '{"a":}'])
def test_a_model_card_nested_100000_deep_is_refused(capsys, tmp_path, kind, bracket):
    model = _copy(tmp_path, kind)
    if bracket == "[]":
        text = "[" * 100_000 + "]" * 100_000
    else:
        text = '{"a":' * 100_000 + "1" + "}" * 100_000
    (model / "model.json").write_text(text)
    refused(capsys, tmp_path, f"model:{model}", "model.json", "nested too deeply")


@pytest.mark.parametrize(
    "kind, policy, words",
    [
        (MOVE_POLICY, {"hidden": 1 << 20}, ["parameters"]),
        (MOVE_POLICY, {"hidden": 50_000}, ["parameters"]),
        (MOVE_POLICY, {"obs_size": 1 << 20}, ["parameters"]),
        (MOVE_POLICY, {"capacity": 1 << 20}, ["policy.capacity"]),
        (MOVE_POLICY, {"linear_offset": 200}, ["policy.linear_offset", "past"]),
        (MOVE_POLICY, {"hidden": 10**400}, ["policy.hidden"]),
        (MASKABLE_PPO, {"net_arch": [65536, 65536]}, ["policy.net_arch", "parameters"]),
        (MASKABLE_PPO, {"net_arch": [4096] * 400}, ["policy.net_arch", "list of 400"]),
        (MASKABLE_PPO, {"net_arch": [4096] * 64}, ["policy.net_arch", "parameters"]),
    ],
)
def test_a_model_card_asking_for_a_huge_network_is_refused_before_building_it(
    capsys, tmp_path, kind, policy, words
):
    model = _copy(tmp_path, kind)
    _edit_card(model, lambda card: card["policy"].update(policy))
    line = refused(capsys, tmp_path, f"model:{model}", str(model), *words)
    assert len(line) < 400


def test_a_model_card_that_is_a_fifo_is_refused(capsys, tmp_path):
    model = _copy(tmp_path, MOVE_POLICY)
    (model / "model.json").unlink()
    os.mkfifo(model / "model.json")
    refused(capsys, tmp_path, f"model:{model}", "model.json", "a FIFO")


# --- linear policies -----------------------------------------------------------------------------
def _linear_texts() -> dict:
    weights = json.loads((MODELS / LINEAR / "policy.json").read_text())
    weights["weights"]["battle"]["capture"] = 10**400
    return {
        "a huge integer weight": (json.dumps(weights), ["capture", "finite number"]),
        "100,000-deep arrays": ("[" * 100_000 + "]" * 100_000, ["nested too deeply"]),
        "100,000-deep objects": ('{"a":' * 100_000 + "0" + "}" * 100_000, ["nested too deeply"]),
        "a 400-digit literal": (json.dumps(weights).replace("1" + "0" * 400, "9" * 5000), ["JSON"]),
    }


@pytest.mark.parametrize("how", ["model", "linear"])
@pytest.mark.parametrize("case", list(_linear_texts()))
def test_a_hostile_linear_policy_is_refused(capsys, tmp_path, how, case):
    model = _copy(tmp_path, LINEAR)
    text, words = _linear_texts()[case]
    (model / "policy.json").write_text(text)
    spec = f"model:{model}" if how == "model" else f"linear:{model / 'policy.json'}"
    refused(capsys, tmp_path, spec, "policy.json", *words)


def test_a_linear_policy_that_is_a_fifo_is_refused(capsys, tmp_path):
    fifo = tmp_path / "policy.json"
    os.mkfifo(fifo)
    refused(capsys, tmp_path, f"linear:{fifo}", "policy.json", "a FIFO")
