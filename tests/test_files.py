"""``castle_envs.core.files``: the readers every file a user hands us goes through."""

import pytest

from castle_envs.core.files import UnreadableFile, json_depth, parse_json, read_bytes, read_json


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
