"""Reading JSON that a user hands us (a game record, a results line, a settings file) with
limits, so that no file can crash or stall the reader: nesting deeper than ``max_depth``
is refused (the parser's own ``RecursionError``, at about a thousand levels, included), so
that code walking the value recursively never meets a deeper one; a file larger than
``max_bytes`` is refused before it is read, and a path that is not a regular file (a
folder, a FIFO that would block the read forever, a device) before it is read from.
``NaN`` and ``Infinity``, which JSON does not allow, are refused too.

Every refusal is a ``JsonLimitError`` (a ``ValueError``) whose message names ``where`` (the
file, or the file and line) and what is wrong, in one line.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

#: deeper than anything this project writes (a game record nests about six levels)
MAX_DEPTH = 64
#: larger than any file this project writes for one game or one settings file
MAX_BYTES = 256 * 2**20


class JsonLimitError(ValueError):
    """JSON refused: not JSON, nested too deep, too large, or not a regular file."""


class NotJsonError(JsonLimitError):
    """Text that is not JSON at all (as a file cut mid-write is); ``reason``: the parser's
    words."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where} is not JSON ({reason})")
        self.reason = reason


def kind(value: Any) -> str:
    """What a JSON value is, in words, for a message: "a list", "a number", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    for types, words in (
        (dict, "an object"),
        (list, "a list"),
        (str, "a string"),
        ((int, float), "a number"),
    ):
        if isinstance(value, types):
            return f"{words} ({value!r})" if isinstance(value, (str, int, float)) else words
    return type(value).__name__


def nesting_depth(value: Any) -> int:
    """How deep the lists and dicts of a parsed JSON ``value`` nest (a scalar: 0), walked
    without recursion so that any depth is measured safely."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, depth)
            todo.extend((child, depth + 1) for child in node if isinstance(child, (list, dict)))
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def loads(data: bytes | str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in ``data``; ``JsonLimitError`` naming ``where`` when it is not JSON
    or nests deeper than ``max_depth``."""
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except RecursionError:  # the parser's own guard, at about a thousand levels
        value, depth = None, None
    except (ValueError, UnicodeDecodeError) as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise NotJsonError(where, text) from None
    else:
        depth = nesting_depth(value)
    if depth is None or depth > max_depth:
        deep = "over a thousand" if depth is None else str(depth)
        raise JsonLimitError(
            f"{where}: JSON nested {deep} levels deep; at most {max_depth} are read"
        )
    return value


def read_bytes(
    path: str | os.PathLike, where: str | None = None, max_bytes: int = MAX_BYTES
) -> bytes:
    """The bytes of regular file ``path``, at most ``max_bytes`` of them; a folder, a FIFO,
    a device or a larger file is refused (``JsonLimitError``) before it is read."""
    where = where or str(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait for one
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise JsonLimitError(f"{where}: cannot be read ({err.strerror or err})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise JsonLimitError(f"{where}: a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise JsonLimitError(f"{where}: not a regular file (a pipe or a device)")
        if info.st_size > max_bytes:
            raise JsonLimitError(f"{where}: {info.st_size:,} bytes; at most {max_bytes:,} are read")
        chunks, total = [], 0
        with os.fdopen(fd, "rb", closefd=False) as f:
            while total <= max_bytes:
                chunk = f.read(min(2**24, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    finally:
        os.close(fd)
    if total > max_bytes:  # it grew while being read
        raise JsonLimitError(f"{where}: more than {max_bytes:,} bytes; at most that are read")
    return b"".join(chunks)


def load_file(
    path: str | os.PathLike,
    where: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
) -> Any:
    """The JSON value in file ``path`` (``read_bytes`` then ``loads``)."""
    where = where or str(path)
    return loads(read_bytes(path, where, max_bytes), where, max_depth)
