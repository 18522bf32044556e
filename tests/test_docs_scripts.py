"""The studies' scripts (experiments/studies/, their "Reproduce" commands) and the scripts
under docs/ still import.

A module moved in a refactor leaves a study's reproduction command broken without any
test noticing, since nothing runs those scripts in CI (they take hours). This reads each
script's imports of ``castle_envs`` and checks every module and name still exists.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "docs").rglob("*.py")) + sorted(
    (ROOT / "experiments" / "studies").rglob("*.py")
)


def _missing(path: Path) -> list[str]:
    missing = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "castle_envs"
        ):
            try:
                module = importlib.import_module(node.module)
            except ImportError as e:
                missing.append(f"line {node.lineno}: {node.module} ({e})")
                continue
            for alias in node.names:
                if hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"line {node.lineno}: {alias.name} from {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "castle_envs":
                    try:
                        importlib.import_module(alias.name)
                    except ImportError as e:
                        missing.append(f"line {node.lineno}: {alias.name} ({e})")
    return missing


def test_there_are_scripts():
    assert len(SCRIPTS) > 10


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_script_imports_resolve(path):
    assert _missing(path) == []


def test_a_moved_module_is_caught(tmp_path):
    script = tmp_path / "old.py"
    script.write_text(
        "from castle_envs.castellion.solver import deal\n"
        "from castle_envs.agents.solvers.castellion import no_such_name\n"
    )
    found = _missing(script)
    assert len(found) == 2 and "castellion.solver" in found[0] and "no_such_name" in found[1]
