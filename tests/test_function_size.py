"""No function of the product (``castle_envs/``, ``agents/``, ``experiments/``; not the study
scripts of ``experiments/studies/``) is longer than 100 lines, so each reads top to bottom in
one screenful or two; a longer one is split into named steps. ``ALLOWED`` lists the ones
left, each with its reason; it may only shrink."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("castle_envs", "agents", "experiments")
MAX_LINES = 100

#: (path, function name) -> why it is longer than MAX_LINES
ALLOWED: dict[tuple[str, str], str] = {}


def _product_files():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.parts[:2] == ("experiments", "studies") or "__pycache__" in rel.parts:
                continue
            yield rel


def long_functions() -> dict[tuple[str, str], int]:
    """(path, name) -> lines, for every function or method over MAX_LINES."""
    out = {}
    for rel in _product_files():
        for node in ast.walk(ast.parse((ROOT / rel).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    out[(rel.as_posix(), node.name)] = lines
    return out


def test_no_function_is_longer_than_100_lines():
    found = long_functions()
    new = {k: v for k, v in found.items() if k not in ALLOWED}
    listed = ", ".join(f"{p}:{name} ({n} lines)" for (p, name), n in sorted(new.items()))
    assert not new, f"functions over {MAX_LINES} lines (split them into named steps): {listed}"


def test_the_allow_list_holds_only_long_functions():
    # a function split since (or renamed) leaves the list
    gone = sorted(set(ALLOWED) - set(long_functions()))
    assert not gone, f"no longer over {MAX_LINES} lines, remove from ALLOWED: {gone}"
