"""Reading a file a user hands us without hanging, crashing or running anything.

``read_bytes`` opens the path without blocking and reads it only when it is a regular file
of at most ``max_bytes`` (a FIFO would block ``open`` forever, ``/dev/zero`` never ends, a
directory or socket is no file of data). ``parse_json`` reads JSON as plain data: ``NaN``
and ``Infinity`` are refused, and so is nesting deeper than ``max_depth`` (a 100,000-deep
array exhausts the parser's recursion, and a merely deep one would exhaust the recursion
of whatever walks it next). ``read_json`` is both. Every refusal but a missing file (the
``FileNotFoundError`` of ``open``) is an ``UnreadableFile`` (a ``ValueError``) whose message
names the file and what is wrong with it in one line; text that is not JSON at all (as a
line cut mid-write is) is its subclass ``NotJson``, told apart from JSON nested too deep.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

#: the default size limit of a file read whole (model cards, policies, records, results)
MAX_BYTES = 64 << 20
#: the default nesting limit of JSON: the files written here nest a few levels
MAX_DEPTH = 64


class UnreadableFile(ValueError):
    """A file that is missing, not a regular file, too large, or not what it should be."""


class NotJson(UnreadableFile):
    """Text that is not JSON at all (not UTF-8, or not parsed); ``reason``: the parser's
    words."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: not valid JSON ({reason})")
        self.reason = reason


def read_bytes(path: str | os.PathLike, what: str = "file", max_bytes: int = MAX_BYTES) -> bytes:
    """The contents of regular file ``path`` (``what`` it should be names it in errors); a
    missing file is the ``FileNotFoundError`` of ``open``."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise  # as it comes (callers tell a missing file from a bad one)
    except OSError as err:
        raise UnreadableFile(f"{path}: cannot open the {what} ({err.strerror or err})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(
                f"{path}: the {what} is {_file_kind(info.st_mode)}, not a regular file"
            )
        if info.st_size > max_bytes:
            raise UnreadableFile(
                f"{path}: the {what} is {info.st_size:,} bytes, more than the {max_bytes:,} allowed"
            )
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > max_bytes:  # it grew while being read
                raise UnreadableFile(f"{path}: the {what} is more than {max_bytes:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as err:
        raise UnreadableFile(f"{path}: cannot read the {what} ({err.strerror or err})") from None
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a special file"


def parse_json(
    text: str | bytes, where: str, max_depth: int = MAX_DEPTH, allow_nan: bool = False
) -> Any:
    """The JSON document ``text`` as plain data; ``where`` (the file) names it in errors.
    ``allow_nan``: ``NaN`` and ``Infinity`` read as floats, for a caller that checks its
    numbers itself and names the one that is not finite."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = json.loads(text, parse_constant=float if allow_nan else _no_constant)
    except RecursionError:
        raise UnreadableFile(f"{where}: JSON nested too deeply") from None
    except UnicodeDecodeError:
        raise NotJson(where, "not UTF-8 text") from None
    except ValueError as err:
        raise NotJson(where, str(err).splitlines()[0] if str(err) else type(err).__name__) from None
    depth = json_depth(value)
    if depth > max_depth:
        raise UnreadableFile(
            f"{where}: JSON nested {depth} deep, more than the {max_depth} allowed"
        )
    return value


def json_depth(value: Any) -> int:
    """How deep lists and dicts nest in ``value`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node if isinstance(child, (list, dict)))
    return deepest


def kind(value: Any) -> str:
    """What a JSON value is, in words, for a message: "a list", "a number (3)", ..."""
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


def read_json(
    path: str | os.PathLike,
    what: str = "JSON file",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    allow_nan: bool = False,
) -> Any:
    """The JSON document in regular file ``path`` (``read_bytes``, then ``parse_json``)."""
    return parse_json(read_bytes(path, what, max_bytes), str(path), max_depth, allow_nan)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")
