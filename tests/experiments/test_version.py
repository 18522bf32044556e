"""The project's version is one number: ``castle-envs --version`` prints the version in
pyproject.toml, which is CHANGELOG.md's newest released version."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import tomllib
from castle_envs.experiments.cli import main

import castle_envs

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def newest_release() -> str:
    """The first ``## [X.Y.Z] - YYYY-MM-DD`` heading of the changelog ([Unreleased] aside)."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    found = re.search(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)
    assert found, "CHANGELOG.md has no released version heading"
    return found.group(1)


def test_the_changelog_newest_release_is_the_version():
    assert newest_release() == VERSION


def test_the_package_version_is_the_pyproject_version():
    # a stale editable install (pyproject.toml changed since) reinstalls with make
    assert castle_envs.__version__ == VERSION, "reinstall: pip install -e ."


def test_main_prints_the_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"castle-envs {VERSION}"


def test_the_command_prints_the_version():
    done = subprocess.run(
        [sys.executable, "-m", "castle_envs.experiments.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"castle-envs {VERSION}"
