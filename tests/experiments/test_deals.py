"""The labelled deal sets: the loader's schema and checks, the line encoding, and a sample of
every shipped set's winning lines replayed to a win (``castle-envs benchmark --check``
replays them all)."""

from __future__ import annotations

import gzip
import hashlib
import json

import numpy as np
import pytest
from castle_envs.experiments import deals as D

SETS = D.available()


def test_lines_round_trip_through_the_encoding():
    rng = np.random.default_rng(0)
    for _ in range(50):
        line = tuple(int(a) for a in rng.integers(0, D.MAX_ACTION + 1, rng.integers(0, 80)))
        text = D.encode_line(line)
        assert len(text) == 2 * len(line)
        assert D.decode_line(text) == line
    assert D.encode_line([0, 63, 64, 1669]) == "AAA_BAaF"
    with pytest.raises(ValueError, match="cannot be encoded"):
        D.encode_line([D.MAX_ACTION + 1])
    with pytest.raises(ValueError, match="even length"):
        D.decode_line("AAA")
    with pytest.raises(ValueError, match="not a base-64 digit"):
        D.decode_line("A*")


def test_every_game_variant_and_split_of_the_studies_has_a_set():
    names = {s["name"] for s in SETS}
    for v in ("easy", "medium", "hard", "very_hard"):
        assert f"castle-siege-{v}-study" in names
    for v in ("hard", "very_hard"):
        assert f"castle-siege-{v}-heldout" in names
    for v in ("school", "academy", "menace"):
        assert {f"castellion-{v}-study", f"castellion-{v}-heldout"} <= names


@pytest.mark.parametrize("entry", SETS, ids=[s["name"] for s in SETS])
def test_each_set_loads_with_typed_rows_matching_its_index(entry):
    deals = D.load_deals(entry["game"], entry["variant"], entry["split"])
    assert deals.seeds == range(entry["seeds"][0], entry["seeds"][1] + 1)
    assert [r.seed for r in deals.rows] == list(deals.seeds)
    assert deals.counts() == entry["counts"]
    names = [r["name"] for r in entry["references"]]
    assert [r.name for r in deals.references] == names
    for row in deals.rows[:50]:
        assert isinstance(row, D.Deal) and isinstance(row.seed, int)
        assert row.verdict in D.VERDICTS
        assert isinstance(row.line, tuple) and all(isinstance(a, int) for a in row.line)
        assert (row.verdict == D.WON) == bool(row.line)
        assert set(row.results) == set(names)
        assert all(v in (None, 0, 1) for v in row.results.values())
        with pytest.raises(TypeError):
            row.results["best"] = 1  # a read-only mapping
    for ref in entry["references"]:
        column = [r.results[ref["name"]] for r in deals.rows]
        assert sum(v is not None for v in column) == ref["deals"]
        assert sum(v == 1 for v in column) == ref["wins"]
        full = deals.results(ref["name"])
        assert (full is None) == (ref["deals"] < len(deals.rows))


def test_the_headline_counts_of_the_studies():
    """The figures the winnability pages quote, from the sets."""
    vh = D.load_deals("castle-siege", "very_hard", "study")
    assert vh.counts()["won"] == 998 and {r.seed for r in vh.rows if r.verdict != "won"} == {
        53,
        62,
    }
    assert D.load_deals("castle-siege", "hard", "study").counts()["won"] == 1000
    held = D.load_deals("castle-siege", "very_hard", "heldout")
    assert held.counts()["won"] >= 1970
    assert int(held.results("best").sum()) == 802  # 40.10% of the 2,000 held-out deals
    school = D.load_deals("castellion", "school", "study").counts()
    assert school == {"won": 494, "lost": 6, "unknown": 0}
    assert D.load_deals("castellion", "academy", "study").counts()["won"] == 500
    assert D.load_deals("castellion", "menace", "study").counts()["won"] >= 287


def played_result(deals, spec: str, seed: int) -> int:
    """``spec``'s result on deal ``seed`` of the set, played as ``castle-envs evaluate``
    plays it (``reset(seed=seed)``, the agent reset with ``[0, seed, 0]``)."""
    from castle_envs.experiments.episodes import play_episode

    variant = ((deals.variant_arg, deals.variant),)
    return int(play_episode(deals.game, variant, (), (spec,), seed, 0)["returns"][0] > 0)


def column_sample(deals, name: str, each: int) -> list:
    """Up to ``each`` deals the reference won and ``each`` it lost, spread over the set."""
    out = []
    for value in (1, 0):
        rows = [r for r in deals.rows if r.results[name] == value]
        if rows:
            out += [rows[i] for i in np.linspace(0, len(rows) - 1, each).round().astype(int)]
    return list({r.seed: r for r in out}.values())


#: the references played for the sets that cost a fraction of a second a game (``best``
#: costs seconds: its columns come from the studies' games)
CHEAP = ("random", "heuristic", "linear", "network", "value", "planner")


@pytest.mark.parametrize("entry", SETS, ids=[s["name"] for s in SETS])
def test_a_sample_of_each_reference_column_is_what_its_spec_plays(entry):
    """A stored result is the game the reference's ``--agent`` spec plays on that deal today
    (the paired differences of ``castle-envs benchmark`` rest on it)."""
    deals = D.load_deals(entry["game"], entry["variant"], entry["split"])
    for ref in deals.references:
        if ref.name not in CHEAP or deals.results(ref.name) is None:
            continue
        for row in column_sample(deals, ref.name, 1):
            got = played_result(deals, ref.spec, row.seed)
            assert got == row.results[ref.name], (deals.name, ref.name, row.seed)


@pytest.mark.parametrize("variant", ["hard", "very_hard"])
def test_the_value_column_is_what_the_ntuple_value_plays(variant):
    """The shipped n-tuple value (``value``, its model directory's spec) on a sample of the
    held-out deals, won and lost, through the agent path a user's ``--agent`` takes."""
    deals = D.load_deals("castle-siege", variant, "heldout")
    ref = deals.reference("value")
    assert ref.spec == "model:models/castle_siege_ntuple_value"
    column = deals.results("value")
    assert column is not None and int(column.sum()) == {"hard": 841, "very_hard": 46}[variant]
    sample = column_sample(deals, "value", 6)
    assert len(sample) == 12
    assert [played_result(deals, ref.spec, r.seed) for r in sample] == [
        r.results["value"] for r in sample
    ]


@pytest.mark.parametrize("entry", SETS, ids=[s["name"] for s in SETS])
def test_a_sample_of_each_sets_lines_replays_to_a_win(entry):
    deals = D.load_deals(entry["game"], entry["variant"], entry["split"])
    assert D.check_set(deals, sample=4) == []


def tiny_set(tmp_path, rows, refs=("random", "heuristic")):
    """A set written as the builder writes one, in its own data folder."""
    data = D.write_set(rows, list(refs))
    name = "castle-siege-easy-study"
    (tmp_path / f"{name}.csv.gz").write_bytes(data)
    entry = {
        "name": name,
        "game": "castle-siege",
        "variant_arg": "difficulty",
        "variant": "easy",
        "split": "study",
        "seeds": [rows[0].seed, rows[-1].seed],
        "file": f"{name}.csv.gz",
        "sha256": hashlib.sha256(data).hexdigest(),
        "counts": {},
        "references": [{"name": r, "spec": r, "source": "test"} for r in refs],
    }
    (tmp_path / "index.json").write_text(json.dumps({"schema": D.SCHEMA, "sets": {name: entry}}))
    return tmp_path


def shipped_rows(count):
    return list(D.load_deals("castle-siege", "easy", "study").rows[:count])


def test_check_names_a_line_that_does_not_win_and_an_agent_win_on_an_unproven_deal(tmp_path):
    rows = shipped_rows(6)
    other_deals_line = D.Deal(rows[1].seed, "won", "solver", rows[2].line, "", {"random": 0})
    unproven = D.Deal(rows[3].seed, "unknown", "", (), "", {"random": 1})
    cut_short = D.Deal(rows[4].seed, "won", "solver", rows[4].line[:-2], "", {"random": 0})
    rows = [D.Deal(r.seed, r.verdict, r.found_by, r.line, "", {"random": 0}) for r in rows]
    rows[1], rows[3], rows[4] = other_deals_line, unproven, cut_short
    folder = tiny_set(tmp_path, rows, ["random"])
    problems = D.check_set(D.load_deals("castle-siege", "easy", "study", data_dir=folder))
    assert len(problems) == 3
    assert f"deal {rows[3].seed}: random won it, verdict unknown" in problems[0]
    assert f"deal {rows[1].seed}: its line plays an illegal move" in problems[1]
    assert f"deal {rows[4].seed}: its line does not replay to a win" in problems[2]
    assert D.check_set(D.load_deals("castle-siege", "easy", "study", data_dir=folder), 2) == [
        problems[0]
    ]  # the first and the last lines of the sample replay


def test_a_changed_or_malformed_file_is_refused_by_name(tmp_path):
    rows = shipped_rows(3)
    folder = tiny_set(tmp_path, rows)
    path = folder / "castle-siege-easy-study.csv.gz"
    text = gzip.decompress(path.read_bytes()).decode()
    path.write_bytes(gzip.compress(text.replace(",won,", ",lost,", 1).encode()))
    with pytest.raises(ValueError, match="checksum"):
        D.load_deals("castle-siege", "easy", "study", data_dir=folder)
    for bad, message in (
        (text.replace(",won,", ",maybe,", 1), "verdict 'maybe'"),
        (text.replace("seed,verdict", "deal,verdict"), "columns"),
        (text.replace(f"\n{rows[1].seed},", "\n99999,", 1), "seeds are not"),
    ):
        data = gzip.compress(bad.encode())
        path.write_bytes(data)
        index = json.loads((folder / "index.json").read_text())
        index["sets"]["castle-siege-easy-study"]["sha256"] = hashlib.sha256(data).hexdigest()
        (folder / "index.json").write_text(json.dumps(index))
        with pytest.raises(ValueError, match=message):
            D.load_deals("castle-siege", "easy", "study", data_dir=folder)
    with pytest.raises(ValueError, match="no heldout deal set for castle-siege 'easy'"):
        D.load_deals("castle-siege", "easy", "heldout", data_dir=folder)
    with pytest.raises(ValueError, match="unknown deal split"):
        D.load_deals("castle-siege", "easy", "train", data_dir=folder)
