"""Append-only JSON Lines files that survive a crash: what ``solve --out``, ``evaluate``
(``<name>-episodes.jsonl``) and training logs write one finished unit of work at a time, so
a run killed at any moment (SIGTERM, SIGKILL, a power cut) resumes with nothing lost and
nothing counted twice.

- ``append(f, record)`` writes one whole line and flushes it (and ``fsync``s), so at most the
  line being written when the process died is cut.
- ``read(path)`` reads the records back. A last line cut mid-way (no newline at the end, or
  not JSON) is dropped with a warning and cut off the file, so the unit of work it held is
  redone and the next line starts cleanly; a bad line anywhere else is corruption, refused
  with its line number (``JournalError``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os

log = logging.getLogger(__name__)


class JournalError(ValueError):
    """A JSON Lines file with a damaged line before its last."""


def read(path: str, repair: bool = True) -> list[dict]:
    """The whole lines of ``path`` as records; a cut last line is dropped (and, with
    ``repair``, cut off the file)."""
    with open(path, "rb") as f:
        data = f.read()
    records, good_end, lines = [], 0, data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        last = number == len(lines)
        end = good_end + len(raw) + (0 if last else 1)
        if not raw.strip():
            good_end = end
            continue
        try:
            record = json.loads(raw)
            if last:  # whole JSON but no newline: written up to its last byte
                raise ValueError("no newline")
        except ValueError:
            tail_only = last or (number == len(lines) - 1 and not lines[-1].strip())
            if not tail_only:
                raise JournalError(
                    f"{path}: line {number} is not JSON ({raw[:60]!r}...); "
                    "the file is damaged before its last line"
                ) from None
            log.warning(
                "%s: the last line was cut off (%d bytes, a crash mid-write?): "
                "dropped, its work will be redone",
                path,
                len(raw),
            )
            if repair:
                with open(path, "r+b") as f:
                    f.truncate(good_end)
            break
        records.append(record)
        good_end = end
    return records


def append(f, *records: dict) -> None:
    """Write each record as one line and push them to the disk."""
    f.write("".join(json.dumps(r) + "\n" for r in records))
    f.flush()
    with contextlib.suppress(OSError, AttributeError, ValueError):
        os.fsync(f.fileno())


def write_atomic(path: str, text: str) -> None:
    """Write a whole file so that a reader (or a crash) sees the old file or the new one,
    never half of it."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
