"""Where a result came from: what ``castle-envs evaluate`` (and other commands) record beside
their numbers so that a figure quoted in a doc can be traced and rerun.

``provenance(agents, game)`` gives the package version, the git revision of the checkout
the code was run from (``None`` outside one, or without git), whether that checkout had
uncommitted changes, the Python and NumPy versions, the command line, and for every agent
spec the files it reads (a model directory's files, a linear scorer's weights, the search
agent's policy) with each file's sha256.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

import castle_envs

#: files of a model directory that are not the model (notes, logs)
_NOT_MODEL = {"README.md", "eval.csv", "history.csv", "progress.json"}


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_revision(where: str | Path | None = None) -> dict:
    """``{"revision": sha or None, "dirty": bool or None}`` for the checkout holding the
    package (``where``: another folder); ``None`` values outside a checkout or without git."""
    folder = Path(where) if where else Path(castle_envs.__file__).resolve().parents[1]
    out: dict[str, Any] = {"revision": None, "dirty": None}
    try:
        rev = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if rev.returncode != 0:
            return out
        out["revision"] = rev.stdout.strip() or None
        status = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if status.returncode == 0:
            out["dirty"] = bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def agent_files(spec: str, game: str) -> list[str]:
    """The files an agent spec reads (empty for the rule-based agents)."""
    from castle_envs.agents.registry import (
        locate_shipped,
        parse_spec,
        resolve_spec,
        shipped_models_dir,
    )

    spec = resolve_spec(spec, game)
    name, rest = parse_spec(spec)
    models = shipped_models_dir()
    if name in ("model", "ppo"):
        path = Path(locate_shipped(rest.split(",")[0].strip(), models, "models"))
        if path.is_dir():
            return sorted(
                str(p) for p in path.iterdir() if p.is_file() and p.name not in _NOT_MODEL
            )
        return [str(path)] if path.is_file() else []
    if name == "linear":
        path = Path(locate_shipped(rest.split(",")[0].strip(), models, "models"))
        return [str(path)] if path.is_file() else []
    if name == "search":
        policy = next(
            (
                item.split("=", 1)[1].strip()
                for item in rest.split(",")
                if item.strip().startswith("policy=")
            ),
            None,
        )
        path = (
            Path(locate_shipped(policy, models, "models"))
            if policy
            else models / "castle_siege_very_hard_linear" / "policy.json"
        )
        return [str(path)] if path.is_file() else []
    return []


def agent_provenance(spec: str, game: str) -> dict:
    from castle_envs.agents.registry import resolve_spec

    files = agent_files(spec, game)
    return {
        "spec": spec,
        "resolved": resolve_spec(spec, game),
        "files": [
            {"path": _shown(p), "sha256": sha256_file(p), "bytes": os.path.getsize(p)}
            for p in files
        ],
    }


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def provenance(agents: list[str], game: str) -> dict:
    git = git_revision()
    return {
        "castle_envs_version": castle_envs.__version__,
        "git_revision": git["revision"],
        "git_dirty": git["dirty"],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "command": ["castle-envs"] + sys.argv[1:]
        if sys.argv and os.path.basename(sys.argv[0]).startswith("castle-envs")
        else list(sys.argv),
        "agents": [agent_provenance(a, game) for a in dict.fromkeys(agents)],
    }
