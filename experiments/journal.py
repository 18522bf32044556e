"""Append-only JSON Lines files that survive a crash: what ``solve --out``, ``evaluate``
(``<name>-episodes.jsonl``) and training logs write one finished unit of work at a time, so
a run killed at any moment (SIGTERM, SIGKILL, a power cut) resumes with nothing lost and
nothing counted twice.

- ``append(f, record)`` writes one whole line and flushes it (and ``fsync``s), so at most the
  line being written when the process died is cut.
- ``read(path)`` reads the records back. A last line cut mid-way (no newline at the end, or
  not JSON) is dropped with a warning and cut off the file, so the unit of work it held is
  redone and the next line starts cleanly; a bad line anywhere else (not JSON, nested too
  deep, not a JSON object) is corruption, refused with its line number (``JournalError``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os

from castle_envs.core.files import NotJson, UnreadableFile, kind, parse_json, read_bytes

log = logging.getLogger(__name__)
#: a journal holds one line per unit of work: far larger than one JSON document may be
MAX_BYTES = 2**36


class JournalError(ValueError):
    """A JSON Lines file with a damaged line before its last."""


def read(path: str, repair: bool = True, check=None, check_all=None) -> list[dict]:
    """The whole lines of ``path`` as records; a cut last line is dropped (and, with
    ``repair``, cut off the file). ``check(number, record)``, when given, sees each record
    with its line number, and ``check_all()`` is called once they are all read, both before
    anything is cut (they raise to refuse the file)."""
    data = read_bytes(path, "journal", max_bytes=MAX_BYTES)
    records, good_end, lines = [], 0, data.split(b"\n")
    cut = None
    for number, raw in enumerate(lines, 1):
        last = number == len(lines)
        end = good_end + len(raw) + (0 if last else 1)
        if not raw.strip():
            good_end = end
            continue
        tail = last or (number == len(lines) - 1 and not lines[-1].strip())
        record = _line(path, number, raw, tail, whole=not last)
        if record is None:
            cut = len(raw)
            break
        if check is not None:
            check(number, record)
        records.append(record)
        good_end = end
    if check_all is not None:
        check_all()
    if cut is not None:
        log.warning(
            "%s: the last line was cut off (%d bytes, a crash mid-write?): "
            "dropped, its work will be redone",
            path,
            cut,
        )
        if repair:
            with open(path, "r+b") as f:
                f.truncate(good_end)
    return records


def _line(path: str, number: int, raw: bytes, tail: bool, whole: bool) -> dict | None:
    """Line ``number`` as a record. None when it is the file's last line (``tail``) and
    was cut mid-way (not JSON, or not ended by a newline: not ``whole``); ``JournalError``
    when it is damaged elsewhere, nested too deep or not a JSON object."""
    where = f"{path}: line {number}"
    try:
        record = parse_json(raw, where)
    except NotJson:
        if tail:
            return None
        raise JournalError(
            f"{where} is not JSON ({raw[:60]!r}...); the file is damaged before its last line"
        ) from None
    except UnreadableFile as err:
        raise JournalError(str(err)) from None
    if not whole:  # whole JSON but no newline: written up to its last byte, then stopped
        return None
    if not isinstance(record, dict):
        raise JournalError(f"{where}: expected a JSON object, got {kind(record)}")
    return record


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
