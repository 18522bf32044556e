"""Every Python block of the project's Markdown runs as written.

Blocks are found in every ``.md`` file of the repository (``README.md``, the vector README,
the rules, model cards, docs), so a section added later is tested too. Each block runs on
its own, in a fresh interpreter and an empty folder: imports and all, exactly as a reader
would paste it. A block may opt out only visibly, with a first line

    # not run by the tests: <the reason>

A block that imports an optional extra that is not installed is skipped, naming it; one
that trains (it imports ``sb3_contrib``, ``torch`` or ``ray``) is marked slow.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".venv", ".git", "build", "dist", "runs", "results", "node_modules", "tests"}
FENCE = re.compile(r"^```(python|py)\s*$")
NOT_RUN = re.compile(r"^#\s*not run by the tests:\s*(\S.*)$")
EXTRAS = {
    "sb3_contrib": "train",
    "stable_baselines3": "train",
    "torch": "train",
    "yaml": "train",
    "tensorboard": "train",
    "ray": "distributed",
    "numba": "fast",
    "matplotlib": "notebooks",
    "torchrl": "torchrl",
    "tensordict": "torchrl",
}
SLOW_IMPORTS = {"sb3_contrib", "stable_baselines3", "torch", "ray", "torchrl"}


def markdown_files() -> list[Path]:
    return sorted(
        p for p in ROOT.rglob("*.md") if not SKIP_DIRS & set(p.relative_to(ROOT).parts[:-1])
    )


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(first line number, code) of every ```python block of ``path``."""
    blocks, code, start = [], None, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if code is None:
            if FENCE.match(line.strip()):
                code, start = [], number + 1
        elif line.strip() == "```":
            blocks.append((start, "\n".join(code) + "\n"))
            code = None
        else:
            code.append(line)
    assert code is None, f"{path}: a ```python block opened at line {start - 1} never closes"
    return blocks


def imported_modules(code: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def cases():
    for path in markdown_files():
        for line, code in python_blocks(path):
            name = f"{path.relative_to(ROOT)}:{line}"
            slow = imported_modules(code) & SLOW_IMPORTS
            yield pytest.param(code, id=name, marks=[pytest.mark.slow] if slow else [])


BLOCKS = list(cases())


def test_the_readmes_have_python_blocks():
    names = {param.id.rsplit(":", 1)[0] for param in BLOCKS}
    assert {"README.md", str(Path("docs/batched.md"))} <= names


@pytest.mark.parametrize("code", BLOCKS)
def test_python_block_runs_as_written(code, tmp_path):
    first = code.splitlines()[0] if code.strip() else ""
    if first.lstrip().startswith("#") and "not run" in first:
        reason = NOT_RUN.match(first.strip())
        assert reason, f"write the opt-out as '# not run by the tests: <reason>', got {first!r}"
        pytest.skip(reason.group(1))
    missing = sorted(
        m for m in imported_modules(code) & set(EXTRAS) if importlib.util.find_spec(m) is None
    )
    if missing:
        pytest.skip(f"needs the {EXTRAS[missing[0]]!r} extra ({', '.join(missing)})")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"the block fails:\n{code}\n{done.stderr[-3000:]}"
