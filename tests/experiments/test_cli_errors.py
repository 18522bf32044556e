"""Every bad input to ``castle-envs`` exits 2 with one line and no traceback.

(``castle-envs play``'s prompt is tested with play, in test_play.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from castle_envs.experiments.cli import main
from hypothesis import given, settings
from hypothesis import strategies as st

yaml = pytest.importorskip("yaml")

LINEAR = Path(__file__).resolve().parents[2] / "models" / "castle_siege_very_hard_linear"


def fails_cleanly(capsys, argv, *words) -> str:
    """``castle-envs argv`` exits 2 with one line on stderr naming ``words``."""
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert code == 2, (argv, err)
    assert "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("castle-envs"), err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# --- train: configs ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, words",
    [
        ("name: x\n\tseed: 1\n", ["not valid YAML", "line 2"]),
        ("seed: !!python/object/apply:os.system ['echo ran']\n", ["not valid YAML", "python"]),
        ("{{{ garbage: [", ["not valid YAML"]),
        ("- just\n- a list\n", ["expected a mapping"]),
        ("eval:\n  every_steps: 0\n", ["eval.every_steps", "at least 1"]),
        ("checkpoint:\n  every_steps: 0\n", ["checkpoint.every_steps", "at least 1"]),
        ("policy:\n  net_arch: [64, x]\n", ["policy.net_arch"]),
        ("policy:\n  net_arch: [0]\n", ["policy.net_arch"]),
        ("policy:\n  net_arch: [-3, 64]\n", ["policy.net_arch"]),
        ("policy:\n  net_arch: 5\n", ["policy.net_arch"]),
        ("ppo:\n  learning_rate: .nan\n", ["ppo.learning_rate"]),
        ("ppo:\n  gamma: 1.5\n", ["ppo.gamma"]),
    ],
)
def test_bad_configs_exit_2_naming_the_problem(tmp_path, capsys, text, words):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    fails_cleanly(capsys, ["train", "--config", str(path)], *words)
    # the same file under --resume (a run folder whose config.yaml is garbage)
    fails_cleanly(capsys, ["train", "--resume", str(tmp_path)], *words)


@pytest.mark.parametrize(
    "override, words",
    [
        ("seed=[x", ["override", "not valid YAML"]),
        ("seed", ["override", "key.sub=value"]),
        ("eval.every_steps=0", ["eval.every_steps"]),
        ("ppo.n_stepz=3", ["ppo.n_stepz", "unknown key"]),
    ],
)
def test_bad_overrides_exit_2(tmp_path, capsys, override, words):
    path = tmp_path / "config.yaml"
    path.write_text("seed: 1\n")
    fails_cleanly(capsys, ["train", "--config", str(path), "--set", override], *words)


def test_a_config_that_is_a_folder_or_binary_exits_2(tmp_path, capsys):
    fails_cleanly(capsys, ["train", "--config", str(tmp_path)], "no config file")
    binary = tmp_path / "config.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    fails_cleanly(capsys, ["train", "--config", str(binary)])


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200))
def test_any_config_text_loads_or_is_a_value_error(tmp_path_factory, text):
    from castle_envs.experiments.config import TrainConfig, load_config

    path = tmp_path_factory.mktemp("config") / "config.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path)
    except ValueError as err:
        assert str(err) and "\n" not in str(err).strip()
    else:
        assert isinstance(config, TrainConfig) and config.eval.every_steps >= 1


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from(
        [
            "seed",
            "n_envs",
            "ppo.n_steps",
            "ppo.gamma",
            "policy.net_arch",
            "eval.every_steps",
            "checkpoint.every_steps",
            "curriculum",
        ]
    ),
    value=st.text(max_size=30),
)
def test_any_override_resolves_or_is_a_value_error(key, value):
    from castle_envs.experiments.config import resolve

    try:
        resolve({}, [f"{key}={value}"])
    except ValueError as err:
        assert str(err)


# --- linear policy files ------------------------------------------------------------------------
def linear_file(tmp_path, change) -> str:
    data = json.loads((LINEAR / "policy.json").read_text())
    path = tmp_path / "policy.json"
    text = json.dumps(change(data))
    path.write_text(text.replace('"NAN"', "NaN").replace('"INF"', "Infinity"))
    return str(path)


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda d: [1, 2, 3], ["not a Castle Siege linear policy file"]),
        (lambda d: {**d, "weights": None}, ["not a Castle Siege linear policy file"]),
        (lambda d: {**d, "weights": {**d["weights"], "battle": None}}, ["weight block"]),
        (lambda d: {**d, "weights": {**d["weights"], "battle": {"capture": None}}}, ["capture"]),
        (lambda d: {**d, "weights": {**d["weights"], "battle": {"capture": "NAN"}}}, ["capture"]),
        (lambda d: {**d, "weights": {**d["weights"], "battle": {"capture": "INF"}}}, ["capture"]),
        (lambda d: {**d, "weights": {**d["weights"], "battle": {"capture": True}}}, ["capture"]),
    ],
)
def test_bad_linear_policy_files_exit_2(tmp_path, capsys, change, words):
    path = linear_file(tmp_path, change)
    fails_cleanly(
        capsys,
        [
            "evaluate",
            "--game",
            "castle-siege",
            "--agent",
            f"linear:{path}",
            "--episodes",
            "1",
            "--out",
            str(tmp_path / "out"),
        ],
        *words,
    )


def test_a_linear_policy_that_is_a_folder_exits_2(tmp_path, capsys):
    fails_cleanly(
        capsys,
        ["evaluate", "--game", "castle-siege", "--agent", f"linear:{tmp_path}", "--episodes", "1"],
        "a directory",
    )


# --- numbers and paths -----------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    threads=st.integers(max_value=0),
    seconds=st.one_of(st.floats(max_value=0), st.just(float("nan")), st.just(float("inf"))),
)
def test_bench_refuses_non_positive_threads_and_seconds(threads, seconds):
    for argv, flag in (
        (["bench", "castle-siege", "--threads", str(threads)], "--threads"),
        (["bench", "castle-siege", "--seconds", str(seconds)], "--seconds"),
        (["bench", "castle-siege", "--batch-sizes", f"64,{threads}"], "--batch-sizes"),
    ):
        assert main(argv) == 2, (argv, flag)


def test_bench_errors_are_one_line(capsys):
    fails_cleanly(capsys, ["bench", "castle-siege", "--threads", "0"], "--threads")
    fails_cleanly(capsys, ["bench", "castle-siege", "--seconds", "-1"], "--seconds")


def test_unwritable_outputs_are_refused_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    fails_cleanly(
        capsys,
        [
            "evaluate",
            "--game",
            "castle-siege",
            "--agent",
            "random",
            "--episodes",
            "1",
            "--out",
            str(blocker / "sub"),
        ],
        "--out",
    )
    fails_cleanly(
        capsys,
        [
            "tournament",
            "--game",
            "castle-rooms",
            "--agent",
            "random,heuristic",
            "--games",
            "1",
            "--out",
            str(blocker / "sub"),
        ],
        "--out",
    )
    fails_cleanly(capsys, ["solve", "--deals", "1", "--out", str(blocker / "x.jsonl")], "--out")
    fails_cleanly(capsys, ["solve", "--deals", "1", "--out", str(tmp_path)], "--out", "folder")
    fails_cleanly(
        capsys, ["solve", "--plot", str(blocker / "x.svg"), "--summaries", "x.json"], "--plot"
    )


@pytest.mark.parametrize(
    "content, words",
    [
        ("not json\n", ["line 1", "not valid JSON"]),
        ("[1, 2]\n", ["line 1", "seed, verdict, line"]),
        ('{"seed": "x", "verdict": "winnable", "line": []}\n', ["integer seed"]),
        ('{"seed": 1, "verdict": "winnable", "line": [99999]}\n', ["out of range"]),
        ('{"seed": 1, "verdict": "winnable", "line": []}\n', ["does not win"]),
    ],
)
def test_malformed_check_lines_exit_2(tmp_path, capsys, content, words):
    path = tmp_path / "lines.jsonl"
    path.write_text(content)
    fails_cleanly(capsys, ["solve", "--difficulty", "easy", "--check-lines", str(path)], *words)
    fails_cleanly(capsys, ["solve", "--check-lines", str(tmp_path)], "a folder")


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        "null",
        '{"difficulty": "easy"}',
        '{"difficulty": "easy", "deals": 3, "budget": 1, '
        '"winnable_fraction": 7, "winnable_interval_95": [0, 1], '
        '"random": {"win_rate": 0, "interval_95": [0, 1]}}',
    ],
)
def test_malformed_plot_inputs_exit_2(tmp_path, capsys, content):
    path = tmp_path / "summary.json"
    path.write_text(content)
    fails_cleanly(
        capsys,
        ["solve", "--plot", str(tmp_path / "w.svg"), "--summaries", str(path)],
        "--summaries",
    )
    csv = tmp_path / "agents.csv"
    csv.write_text("a,b\n1,2\n")
    good = Path(__file__).resolve().parents[2] / "docs/data/castle_siege_winnability/hard_5000.json"
    fails_cleanly(
        capsys,
        [
            "solve",
            "--plot",
            str(tmp_path / "w.svg"),
            "--summaries",
            str(good),
            "--agents-csv",
            str(csv),
        ],
        "--agents-csv",
    )
