"""``castle_envs.core.files``: the readers every file a user hands us goes through."""

import json
import os

import pytest

from castle_envs.core.files import (
    NotJson,
    UnreadableFile,
    json_depth,
    kind,
    parse_json,
    read_bytes,
    read_json,
)

DEEP = 100_000


def test_the_json_reader_measures_depth_without_recursion(tmp_path):
    deep: list = []
    node = deep
    for _ in range(50_000):  # deeper than Python's recursion limit
        node.append([])
        node = node[0]
    assert json_depth(deep) == 50_001
    assert json_depth({"a": [1, {"b": []}]}) == 4 and json_depth(7) == 0
    with pytest.raises(UnreadableFile, match="nested 65 deep, more than the 64"):
        parse_json("[" * 65 + "]" * 65, "x.json")
    assert parse_json("[" * 64 + "]" * 64, "x.json") is not None
    with pytest.raises(UnreadableFile, match="NaN is not a number"):
        parse_json("[NaN]", "x.json")
    assert parse_json("[NaN]", "x.json", allow_nan=True)[0] != 0


def test_the_byte_reader_refuses_large_and_special_files(tmp_path):
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 100 + "0]")
    with pytest.raises(UnreadableFile, match="more than the 10 allowed"):
        read_json(big, max_bytes=10)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "missing")
    with pytest.raises(UnreadableFile, match="a directory"):
        read_bytes(tmp_path)


@pytest.mark.parametrize(
    "text",
    ["[" * DEEP + "]" * DEEP, '{"a":' * DEEP + "1" + "}" * DEEP, "[" * 70 + "]" * 70],
    ids=["arrays", "objects", "past-the-limit"],
)
def test_deep_json_is_refused_naming_where_and_is_no_cut_line(text):
    with pytest.raises(UnreadableFile, match="^where: JSON nested ") as caught:
        parse_json(text, "where")
    # journal.read drops a cut last line (NotJson) but refuses one nested too deep
    assert not isinstance(caught.value, NotJson) and "\n" not in str(caught.value)


def test_json_within_the_limits_reads_as_json_does():
    value = {"a": [1, 2.5, {"b": [None, True, "x"]}], "c": "[[[{{{"}
    assert parse_json(json.dumps(value), "w") == value
    assert parse_json(json.dumps(value).encode(), "w") == value
    assert json_depth(value) == 4


@pytest.mark.parametrize(
    "text",
    ["NaN", "[Infinity]", '{"a": -Infinity}', "{not json", "", b'["\xff"]', '{"a": [1,'],
)
def test_what_is_not_json_is_refused_with_the_parsers_words(text):
    with pytest.raises(NotJson, match="^w: not valid JSON \\(") as caught:
        parse_json(text, "w")
    assert caught.value.reason and caught.value.reason in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_fifo_is_refused_before_reading_and_the_default_size_reads(tmp_path):
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 1000 + "0]")
    assert len(read_json(big)) == 1001
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # with no writer, a plain open would wait forever
    with pytest.raises(UnreadableFile, match="a FIFO, not a regular file"):
        read_json(fifo)


def test_kind_words_a_json_value_for_a_message():
    assert [kind(v) for v in (None, True, False, {}, [], "x", 3, 2.5)] == [
        "null",
        "true",
        "false",
        "an object",
        "a list",
        "a string ('x')",
        "a number (3)",
        "a number (2.5)",
    ]
