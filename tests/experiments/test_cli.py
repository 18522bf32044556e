"""The command line: --help imports no subcommand; a missing extra is named, not a traceback."""

import subprocess
import sys

from castle_envs.experiments.cli import COMMANDS, main


def test_help_lists_every_command_without_importing_them():
    code = (
        "import sys; from castle_envs.experiments.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('castle_envs.experiments.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    for name in COMMANDS:
        assert name in out
    assert out.strip().splitlines()[-1] == "['castle_envs.experiments.cli']"


def test_a_missing_extra_is_named(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    monkeypatch.delitem(sys.modules, "castle_envs.experiments.train", raising=False)
    monkeypatch.delitem(sys.modules, "castle_envs.experiments.config", raising=False)
    assert main(["train", "--config", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "castle-envs[train]"' in err and "Traceback" not in err
    # the other commands are unaffected
    assert main(["demo", "--episodes", "1", "--agent", "random"]) == 0
