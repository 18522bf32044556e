"""What the study scripts share: opening a study's record files, gzipped or not, and
checking the files they are told to write before they start."""

from __future__ import annotations

import gzip
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, NoReturn


def open_record(path: str | Path) -> IO[str]:
    """``path`` opened for reading text, or its gzipped copy ``path.gz`` where only that one
    exists (the repository keeps large records gzipped)."""
    path = record_path(path)
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)  # noqa: SIM115


def record_path(path: str | Path) -> Path:
    """The file ``open_record`` opens for ``path``: itself, or its gzipped copy."""
    path = Path(path)
    if path.suffix != ".gz" and not path.exists() and path.with_name(path.name + ".gz").exists():
        path = path.with_name(path.name + ".gz")
    return path


def refuse(err: Exception | str) -> NoReturn:
    """A study script's one-line refusal of a file it was handed: exit 2, as the CLI does."""
    print(f"{Path(sys.argv[0]).name}: error: {err}", file=sys.stderr)
    raise SystemExit(2)


def csv_with(*columns: str) -> Callable[[bytes], bool]:
    """A recogniser (for ``out_file``) of a CSV table whose header starts with ``columns``."""
    header = ",".join(columns).encode()

    def ours(head: bytes) -> bool:
        return head.startswith(header)

    return ours


def jsonl_with(*keys: str) -> Callable[[bytes], bool]:
    """A recogniser (for ``out_file``) of JSON Lines whose first line is an object holding
    ``keys``."""
    from castle_envs.core.files import parse_json

    def ours(head: bytes) -> bool:
        try:
            first = parse_json(head.split(b"\n", 1)[0].decode("utf-8"), "line")
        except (UnicodeDecodeError, ValueError):
            return False
        return isinstance(first, dict) and all(k in first for k in keys)

    return ours


def out_file(path: str | Path, flag: str, ours: Callable[[bytes], bool], what: str) -> Path:
    """``path``, once it is known that writing it loses nothing this script did not write
    (``experiments.common.check_overwrite``: absent, empty, or ``what`` as ``ours`` knows
    it), checked before any work starts; otherwise the script exits 2 with one line."""
    from castle_envs.experiments.common import check_overwrite

    try:
        check_overwrite(path, flag, ours, what)
    except ValueError as err:
        refuse(err)
    return Path(path)


def read_records(path: str | Path, flag: str, keys: tuple[str, ...] = ()) -> list[dict]:
    """The records of JSON Lines file ``path`` (or its gzipped copy: ``open_record``), each
    an object holding ``keys``; a file that cannot be read, a line that is not JSON (or
    nested too deep: ``core.files.parse_json``) or a record without ``keys`` makes the
    script exit 2 with one line naming the file and the line."""
    import stat

    from castle_envs.core.files import parse_json

    where = f"{flag} {str(path)!r}"
    records = []
    try:
        # a FIFO or device would hang the read or never end
        if not stat.S_ISREG(record_path(path).stat().st_mode):
            raise ValueError(f"{where}: not a regular file")
        with open_record(path) as f:
            for number, text in enumerate(f, 1):
                if not text.strip():
                    continue
                record = parse_json(text, f"{where} line {number}")
                if not isinstance(record, dict) or any(k not in record for k in keys):
                    raise ValueError(
                        f"{where} line {number}: expected a JSON object with {', '.join(keys)}"
                    )
                records.append(record)
    except (OSError, EOFError) as err:
        refuse(ValueError(f"{where}: cannot be read ({getattr(err, 'strerror', None) or err})"))
    except UnicodeDecodeError:
        refuse(ValueError(f"{where}: not a text file"))
    except ValueError as err:
        refuse(err)
    return records


def journal(path: str | Path, flag: str, keys: tuple[str, ...]) -> list[dict]:
    """The records of journal ``path`` (JSON Lines a resumable sweep appends to, each an
    object holding ``keys``; none when absent or empty), checked before any work starts: a
    file that is not such a journal, or a line that is not such a record, makes the script
    exit 2 with one line naming it, so a sweep never appends to a file it did not write. A
    last line cut mid-write (a killed sweep) is dropped and cut off the file
    (``experiments.journal.read``), so that deal is searched again."""
    from castle_envs.experiments import journal as journal_file
    from castle_envs.experiments.common import check_overwrite

    def check(number: int, record: dict) -> None:
        if any(k not in record for k in keys):
            raise ValueError(
                f"{flag} {str(path)!r} line {number}: expected a JSON object with "
                + ", ".join(keys)
            )

    try:
        check_overwrite(path, flag, jsonl_with(*keys), "a journal of this script")
        if not Path(path).exists():
            return []
        return journal_file.read(str(path), check=check)
    except (OSError, ValueError) as err:
        refuse(err)
