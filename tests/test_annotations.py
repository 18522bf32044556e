"""The environment library's functions say what they return, read from the source.

Every function and method under ``castle_envs/`` (the compiled kernels and nested helpers
too) has a return annotation: mypy's ``disallow_untyped_defs`` and
``disallow_incomplete_defs`` (pyproject.toml) also want every parameter annotated, so the
modules whose kernels still take unannotated rows are exempted there; this test holds the
return types of every module, exempted or not. ``agents/`` and ``experiments/`` are not
the library and are not read.
"""

import ast
from pathlib import Path

import pytest

LIBRARY = Path(__file__).resolve().parents[1] / "castle_envs"


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _missing_returns(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"
        for path in sorted(root.rglob("*.py"))
        for node in _functions(path)
        if node.returns is None
    ]


def test_every_library_function_has_a_return_annotation():
    assert _missing_returns(LIBRARY) == []


def test_the_check_sees_a_missing_return_annotation(tmp_path):
    package = tmp_path / "castle_envs"
    package.mkdir()
    (package / "m.py").write_text(
        "def typed() -> int:\n    return 1\n\n"
        "class C:\n    def method(self):\n        def nested():\n            pass\n",
        encoding="utf-8",
    )
    assert _missing_returns(package) == ["castle_envs/m.py:5 method", "castle_envs/m.py:6 nested"]


def test_the_library_is_read():
    functions = sum(1 for path in LIBRARY.rglob("*.py") for _ in _functions(path))
    if functions < 500:
        pytest.fail(f"only {functions} functions found under {LIBRARY}: the walk missed files")
