"""What the study scripts share: opening a study's record files, gzipped or not."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO


def open_record(path: str | Path) -> IO[str]:
    """``path`` opened for reading text, or its gzipped copy ``path.gz`` where only that one
    exists (the repository keeps large records gzipped)."""
    path = Path(path)
    if path.suffix != ".gz" and not path.exists() and path.with_name(path.name + ".gz").exists():
        path = path.with_name(path.name + ".gz")
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)  # noqa: SIM115
