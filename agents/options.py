"""What the agent modules share below the registry: reading ``key=value`` options and finding
the shipped ``models/`` folder (``registry`` re-exports them)."""

from __future__ import annotations

from pathlib import Path


def shipped_models_dir() -> Path:
    """The shipped ``models/`` folder: beside ``agents/`` in a checkout, and installed as
    ``castle_envs/models`` beside ``castle_envs/agents`` in a wheel."""
    return Path(__file__).resolve().parents[1] / "models"


def locate_shipped(path: str, shipped: Path, folder: str) -> str:
    """``path`` itself when it exists; else, when it starts with ``folder/`` (``models/...``,
    ``configs/...``, as the docs write them), the shipped copy of it (an installed wheel, or
    a run from another working folder); else ``path`` unchanged, for the caller's error."""
    given = Path(path)
    if given.exists() or given.is_absolute() or not given.parts or given.parts[0] != folder:
        return path
    candidate = shipped.joinpath(*given.parts[1:])
    return str(candidate) if candidate.exists() else path


def parse_options(text: str, types: dict, what: str) -> dict:
    options = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(
                f"malformed {what} option {item!r}: write key=value (keys: {', '.join(types)})"
            )
        if key not in types:
            raise ValueError(f"unknown {what} option {key!r}; known: {', '.join(types)}")
        try:
            options[key] = types[key](value.strip())
        except ValueError:
            raise ValueError(
                f"{what} option {key} needs a {types[key].__name__}, got {value.strip()!r}"
            ) from None
    return options
