"""``castle-envs solve --resume`` reads back only what a solve run wrote, under the same
settings: a results file with a line that is not a record, or whose records were solved
under another game, variant, rules or budget, is refused (exit 2, one line naming the file,
the line and what is wrong) and left as it was; every argument is checked before the file
is opened for writing. Nothing here solves a deal: each file is built by hand."""

from __future__ import annotations

import json

import pytest
from castle_envs.agents.solvers.castellion import LOSS_NODES
from castle_envs.experiments.cli import main

from castle_envs.castellion.rules import RULE_CHOICES as CASTELLION_RULES
from castle_envs.castle_siege.rules import RULE_CHOICES as SIEGE_RULES

from .test_cli_errors import fails_cleanly

SIEGE = ["solve", "--difficulty", "easy", "--budget", "100", "--random-games", "0"]
CASTELLION = ["solve", "--game", "castellion", "--level", "school", "--budget", "100"]
CASTELLION += ["--probe-policy", "planner", "--random-games", "0"]


def siege_record(seed: int, **settings) -> dict:
    """A won Castle Siege deal as ``solve --difficulty easy --budget 100`` writes it."""
    return {
        "seed": seed,
        "verdict": "winnable",
        "nodes": 40,
        "seconds": 0.01,
        "pruned": 0,
        "line": [88, 114],
        "events": {k: 1 for k in ("royal_assaults", "precision_strikes", "flush_sieges")}
        | {"regroups": 0, "castles_captured": 4, "turns": 4, "actions": 2},
        "random_wins": 0,
        "random_games": 0,
        "settings": {
            "game": "castle-siege",
            "variant": {"difficulty": "easy"},
            "rules": {name: values[0] for name, values in SIEGE_RULES.items()},
            "budget": "100",
            "probe_policy": "linear",
            "nested": None,
        }
        | settings,
    }


def castellion_record(seed: int, **settings) -> dict:
    """A won Castellion deal as ``solve --game castellion --level school --budget 100
    --probe-policy planner`` writes it."""
    return {
        "seed": seed,
        "level": "school",
        "verdict": "winnable",
        "line": [3, 5],
        "nodes": 40,
        "seconds": 0.01,
        "pruned": 0,
        "found_by": "probe:planner",
        "reached": 3,
        "proof": "",
        "loss_nodes": 0,
        "random_wins": 0,
        "random_games": 0,
        "settings": {
            "game": "castellion",
            "variant": {"level": "school"},
            "rules": {name: values[0] for name, values in CASTELLION_RULES.items()},
            "budget": "100",
            "probe_policy": "planner",
            "loss_budget": LOSS_NODES,
        }
        | settings,
    }


GAMES = {"castle-siege": (SIEGE, siege_record), "castellion": (CASTELLION, castellion_record)}


def results_file(tmp_path, lines: list[str], end: str = "\n"):
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines) + end)
    return path


@pytest.mark.parametrize("game", GAMES)
def test_a_file_of_this_runs_settings_resumes_with_its_verdicts(tmp_path, capsys, game):
    command, record = GAMES[game]
    path = results_file(tmp_path, [json.dumps(record(0)), json.dumps(record(1))])
    before = path.read_bytes()
    code = main(command + ["--deals", "2", "--out", str(path), "--resume", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out)["winnable"] == 2  # both deals kept, none solved again
    assert path.read_bytes() == before


BAD_LINES = [
    ('{"seed": 3}', ["'verdict'"]),
    ("[1, 2]", ["expected a JSON object", "a list"]),
    ('"text"', ["expected a JSON object", "a string"]),
    ("42", ["expected a JSON object", "a number"]),
    ("null", ["expected a JSON object", "null"]),
    ('{"verdict": "winnable"}', ["'seed'"]),
    ("[" * 100_000 + "]" * 100_000, ["nested"]),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, ["nested"]),
    ("not json", ["not JSON"]),
]


@pytest.mark.parametrize("retry", [False, True], ids=["resume", "retry-unknown"])
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("line, words", BAD_LINES, ids=[w[0] for _, w in BAD_LINES])
def test_a_line_that_is_no_record_is_refused_naming_its_line(
    tmp_path, capsys, game, retry, line, words
):
    command, record = GAMES[game]
    path = results_file(tmp_path, [json.dumps(record(0)), line, json.dumps(record(1))])
    before = path.read_bytes()
    argv = command + ["--deals", "3", "--out", str(path), "--resume"]
    fails_cleanly(capsys, argv + ["--retry-unknown"] * retry, str(path), "line 2", *words)
    assert path.read_bytes() == before


def bad_fields(record: dict) -> list[tuple[dict, list[str]]]:
    """Records with one field broken, and what the refusal must name."""
    no_settings = {k: v for k, v in record.items() if k != "settings"}
    return [
        (record | {"verdict": "maybe"}, ["'verdict'", "maybe"]),
        (record | {"verdict": None}, ["'verdict'", "null"]),
        (record | {"seed": "7"}, ["'seed'"]),
        (record | {"seed": True}, ["'seed'"]),
        (record | {"seed": -1}, ["'seed'"]),
        (record | {"nodes": "many"}, ["'nodes'"]),
        (record | {"seconds": None}, ["'seconds'"]),
        (record | {"random_wins": 5}, ["'random_wins'"]),
        (record | {"line": "88 114"}, ["'line'"]),
        (record | {"line": []}, ["'line'"]),
        (no_settings, ["no settings"]),
        (record | {"settings": [1]}, ["'settings'"]),
    ]


@pytest.mark.parametrize("game", GAMES)
def test_a_record_with_a_field_of_the_wrong_kind_is_refused(tmp_path, capsys, game):
    command, record = GAMES[game]
    extra = (
        [({k: v for k, v in record(0).items() if k != "events"}, ["'events'"])]
        if game == "castle-siege"
        else [
            (record(0) | {"level": "castle"}, ["'level'"]),
            (record(0) | {"reached": 9}, ["'reached'"]),
            (record(0) | {"found_by": 3}, ["'found_by'"]),
        ]
    )
    for broken, words in bad_fields(record(0)) + extra:
        path = results_file(tmp_path, [json.dumps(record(1)), json.dumps(broken)])
        before = path.read_bytes()
        argv = command + ["--deals", "2", "--out", str(path), "--resume"]
        fails_cleanly(capsys, argv, str(path), "line 2", *words)
        assert path.read_bytes() == before


@pytest.mark.parametrize(
    "game, flags, changed, words",
    [
        ("castle-siege", ["--difficulty", "very_hard"], {}, ["difficulty 'easy'", "'very_hard'"]),
        ("castle-siege", ["--attack", "most_recent"], {}, ["attack 'any'", "'most_recent'"]),
        ("castle-siege", ["--defeated", "leave_game"], {}, ["defeated", "'leave_game'"]),
        ("castle-siege", ["--victory", "deck_left"], {}, ["victory", "'deck_left'"]),
        ("castle-siege", ["--budget", "5000"], {}, ["budget '100'", "'5000'", "retry-unknown"]),
        ("castle-siege", ["--budget", "2s"], {}, ["budget '100'", "'2s'"]),
        ("castle-siege", ["--probe-policy", "none"], {}, ["probe_policy 'linear'", "'none'"]),
        ("castle-siege", [], {"game": "castellion"}, ["game 'castellion'", "'castle-siege'"]),
        ("castellion", ["--early-encounter", "turn_start"], {}, ["early_encounter", "turn_start"]),
        ("castellion", ["--loss-budget", "5"], {}, ["loss_budget", "5"]),
        ("castellion", ["--budget", "300"], {}, ["budget '100'", "'300'"]),
        ("castellion", ["--probe-policy", "none"], {}, ["probe_policy 'planner'", "'none'"]),
        ("castellion", [], {"variant": {"level": "academy"}}, ["level 'academy'", "'school'"]),
    ],
)
def test_a_file_solved_under_other_settings_is_refused(
    tmp_path, capsys, game, flags, changed, words
):
    command, record = GAMES[game]
    lines = [json.dumps(record(0)), json.dumps(record(1, **changed))]
    path = results_file(tmp_path, lines)
    before = path.read_bytes()
    argv = command + ["--deals", "3", "--out", str(path), "--resume"] + flags
    fails_cleanly(capsys, argv, str(path), "line 1" if flags else "line 2", *words)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "game, flags",
    [
        ("castle-siege", ["--difficulty", "very_hard"]),
        ("castle-siege", ["--attack", "most_recent"]),
        ("castellion", ["--early-encounter", "turn_start"]),
    ],
)
def test_retry_unknown_still_refuses_another_game_variant_or_rules(tmp_path, capsys, game, flags):
    command, record = GAMES[game]
    path = results_file(tmp_path, [json.dumps(record(0)), json.dumps(record(1))])
    argv = command + ["--deals", "2", "--out", str(path), "--resume", "--retry-unknown"]
    fails_cleanly(capsys, argv + flags, str(path), "line 1", "new --out file")


@pytest.mark.parametrize("game", GAMES)
def test_retry_unknown_takes_a_file_of_another_budget(tmp_path, capsys, game):
    """A second pass with a larger budget is what --retry-unknown is for: the won deals of
    the first pass are kept (here every deal, so nothing is solved)."""
    command, record = GAMES[game]
    path = results_file(tmp_path, [json.dumps(record(0)), json.dumps(record(1))])
    argv = command + ["--deals", "2", "--out", str(path), "--resume", "--retry-unknown"]
    assert main(argv + ["--budget", "5000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winnable"] == 2


@pytest.mark.parametrize(
    "game, flags, words",
    [
        ("castellion", ["--probe-policy", "BAD"], ["--probe-policy", "BAD"]),
        ("castellion", ["--loss-budget", "-1"], ["--loss-budget"]),
        ("castellion", ["--budget", "nonsense"], ["--budget"]),
        ("castle-siege", ["--probe-policy", "BAD"], ["--probe-policy", "BAD"]),
        ("castle-siege", ["--nested-width", "0", "--nested", "1"], ["width"]),
        ("castle-siege", ["--budget", "-5"], ["--budget"]),
    ],
)
@pytest.mark.parametrize("resume", [True, False], ids=["resume", "new"])
def test_bad_arguments_leave_the_results_file_as_it_was(
    tmp_path, capsys, game, flags, words, resume
):
    command, record = GAMES[game]
    # no newline at the end: a resume would drop that line as cut by a crash, but only
    # once every argument is known to be good
    path = results_file(tmp_path, [json.dumps(record(0))], end="")
    before = path.read_bytes()
    argv = command + ["--deals", "2", "--out", str(path)] + ["--resume"] * resume + flags
    fails_cleanly(capsys, argv, *words)
    assert path.read_bytes() == before


@pytest.mark.parametrize("flag", ["--retry-unknown", "--assume-settings"])
@pytest.mark.parametrize("game", GAMES)
def test_retry_unknown_and_assume_settings_need_resume(tmp_path, capsys, game, flag):
    command, record = GAMES[game]
    path = results_file(tmp_path, [json.dumps(record(0))])
    before = path.read_bytes()
    fails_cleanly(capsys, command + ["--out", str(path), flag], flag, "--resume")
    assert path.read_bytes() == before


@pytest.mark.parametrize("game", GAMES)
def test_a_file_from_before_settings_resumes_only_when_vouched_for(tmp_path, capsys, game):
    """Records written before they carried their settings cannot show them: refused,
    unless --assume-settings takes them as solved under the command's settings."""
    command, record = GAMES[game]
    old = [{k: v for k, v in record(seed).items() if k != "settings"} for seed in (0, 1)]
    path = results_file(tmp_path, [json.dumps(r) for r in old])
    before = path.read_bytes()
    argv = command + ["--deals", "2", "--out", str(path), "--resume"]
    fails_cleanly(capsys, argv, "line 1", "no settings", "--assume-settings")
    assert main(argv + ["--assume-settings", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winnable"] == 2
    assert path.read_bytes() == before


@pytest.mark.parametrize("game", GAMES)
def test_check_lines_and_summaries_nested_100000_deep_are_one_line_errors(tmp_path, capsys, game):
    deep = "[" * 100_000 + "]" * 100_000
    path = results_file(tmp_path, [deep])
    if game == "castle-siege":
        fails_cleanly(capsys, ["solve", "--check-lines", str(path)], str(path), "nested")
    argv = ["solve", "--game", game, "--plot", str(tmp_path / "p.svg"), "--summaries", str(path)]
    fails_cleanly(capsys, argv, str(path), "nested")


@pytest.mark.parametrize("game", GAMES)
def test_a_deal_solved_again_counts_with_the_settings_of_its_last_record(tmp_path, capsys, game):
    """Deal 0 first left unknown under budget 50, then won under 100 by --retry-unknown: a
    plain resume under 100 keeps it (the earlier line is history); under 50 it is refused,
    naming the line that counts."""
    command, record = GAMES[game]
    unknown = record(0, budget="50") | {"verdict": "unknown", "line": []}
    lines = [json.dumps(unknown), json.dumps(record(1)), json.dumps(record(0))]
    path = results_file(tmp_path, lines)
    argv = command + ["--deals", "2", "--out", str(path), "--resume"]  # budget 100
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winnable"] == 2
    fails_cleanly(capsys, argv + ["--budget", "50"], "line 2", "budget '100'", "'50'")


NOT_RESULTS = {
    "notes": b"my notes on deal 12\n",
    "evaluate log": b'{"settings": {"game": "castle-siege"}}\n{"episode": {"index": 0}}\n',
    "a JSON object": b'{"seed": 3, "comment": "not a verdict"}\n',
    "a list": b"[1, 2]\n",
    "binary": bytes(range(256)),
    "deep": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("content", NOT_RESULTS.values(), ids=list(NOT_RESULTS))
def test_out_without_resume_never_empties_a_file_solve_did_not_write(
    tmp_path, capsys, game, content
):
    command, _ = GAMES[game]
    path = tmp_path / "results.jsonl"
    path.write_bytes(content)
    argv = command + ["--deals", "1", "--out", str(path)]
    fails_cleanly(capsys, argv, "--out", str(path), "not a castle-envs solve results file")
    assert path.read_bytes() == content


@pytest.mark.parametrize("game", GAMES)
def test_out_without_resume_refuses_a_fifo_without_blocking(tmp_path, game):
    # in a process of its own: opening a FIFO to write waits for a reader forever
    import os
    import subprocess
    import sys

    command, _ = GAMES[game]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "castle_envs.experiments.cli"]
    argv += command + ["--deals", "1", "--out", str(fifo)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        f"castle-envs solve: error: --out {str(fifo)!r} exists and is not a regular file"
    ]


@pytest.mark.parametrize("game", GAMES)
def test_out_starts_over_a_results_file_of_solves_own_or_an_empty_file(tmp_path, game):
    from castle_envs.experiments.solve_results import check_out_file

    _, record = GAMES[game]
    ours = results_file(tmp_path, [json.dumps(record(0)), json.dumps(record(1))])
    check_out_file(str(ours), resume=False)  # the documented way to start over
    old = results_file(
        tmp_path, [json.dumps({k: v for k, v in record(0).items() if k != "settings"})]
    )
    check_out_file(str(old), resume=False)  # written before records carried settings
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    check_out_file(str(empty), resume=False)
    check_out_file(str(tmp_path / "new.jsonl"), resume=False)
