"""The labelled deal sets: for each solitaire game, variant and split, every deal's verdict
(can it be won with every card known?), how that was proven, a winning line where one is
known, and the shipped reference agents' result on it.

    from castle_envs.experiments.deals import load_deals

    deals = load_deals("castle-siege", "very_hard", "heldout")
    deals.seeds                       # range(1000000, 1002000)
    row = deals.rows[0]
    row.verdict, row.found_by, row.line, row.results["best"]

Splits: ``study`` (the seeds the winnability studies solved, from 0) and ``heldout`` (the
seeds the agents were measured on, from 1,000,000). Deal ``D`` is the position
``env.reset(seed=D)`` deals, the deal ``castle-envs evaluate --seed D`` plays first.

Each set is one gzipped CSV in this package's ``deal_sets/`` folder, described by
``deal_sets/index.json`` (its seeds, counts, each reference agent's spec and where its
results were measured). The columns, in order:

- ``seed``: the deal;
- ``verdict``: ``won`` (some line wins it: the ``line`` column, replayed to a win by
  ``castle-envs benchmark --check``), ``lost`` (proven unwinnable: ``proof`` says why) or
  ``unknown`` (neither proven);
- ``found_by``: what proved it (``nested``, ``solver``, ``probe:planner``, ``beam:1024``,
  ``win-search``, ``agent:SPEC`` (a won game of that agent), ``bound``, ...; empty when
  unknown);
- ``line``: the winning line's action ids, two characters each in the URL-safe base64
  alphabet (``A``-``Z``, ``a``-``z``, ``0``-``9``, ``-``, ``_``), high digit first:
  ``decode_line``; empty unless won;
- ``proof``: a lost deal's reason (the ordeal that cannot be met); empty otherwise;
- one column per reference agent (``index.json`` names its spec): ``1`` won, ``0`` lost,
  empty where that agent was not played on the deal.

``castle-envs benchmark`` compares an agent with these results without playing the
references again; ``castle-envs benchmark --check`` replays every stored line.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

#: the folder holding the sets and their index
DATA_DIR = Path(__file__).resolve().parent / "deal_sets"
#: the schema this module reads and writes; a set of another schema is refused
SCHEMA = 1
WON, LOST, UNKNOWN = "won", "lost", "unknown"
VERDICTS = (WON, LOST, UNKNOWN)
SPLITS = ("study", "heldout")
FIXED_COLUMNS = ("seed", "verdict", "found_by", "line", "proof")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_DIGIT = {c: i for i, c in enumerate(_ALPHABET)}
#: the largest action id a line can hold (two base-64 digits)
MAX_ACTION = 64 * 64 - 1


def encode_line(actions) -> str:
    """Action ids as two base-64 characters each (``decode_line`` reverses it)."""
    out = []
    for a in actions:
        a = int(a)
        if not 0 <= a <= MAX_ACTION:
            raise ValueError(f"action id {a} cannot be encoded (0..{MAX_ACTION})")
        out.append(_ALPHABET[a // 64] + _ALPHABET[a % 64])
    return "".join(out)


def decode_line(text: str) -> tuple[int, ...]:
    """The action ids of an encoded line."""
    if len(text) % 2:
        raise ValueError(f"an encoded line has an even length, not {len(text)}")
    try:
        return tuple(_DIGIT[text[i]] * 64 + _DIGIT[text[i + 1]] for i in range(0, len(text), 2))
    except KeyError as err:
        raise ValueError(f"an encoded line holds {err.args[0]!r}, not a base-64 digit") from None


@dataclass(frozen=True)
class Deal:
    """One deal of a set: its seed, verdict, what proved it, a winning line (action ids;
    empty unless won), a lost deal's proof, and each reference agent's result (1 won, 0
    lost, None not played)."""

    seed: int
    verdict: str
    found_by: str
    line: tuple[int, ...]
    proof: str
    results: Mapping[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Reference:
    """A reference agent of a set: its column name, the ``--agent`` spec that plays it, and
    where its per-deal results come from."""

    name: str
    spec: str
    source: str


@dataclass(frozen=True)
class DealSet:
    """One labelled set: ``rows`` in seed order, covering ``seeds`` without a gap."""

    name: str
    game: str
    variant_arg: str
    variant: str
    split: str
    seeds: range
    references: tuple[Reference, ...]
    rows: tuple[Deal, ...]
    notes: str = ""

    def reference(self, name: str) -> Reference:
        for ref in self.references:
            if ref.name == name:
                return ref
        raise ValueError(
            f"{self.name} has no reference {name!r}; it has "
            f"{', '.join(r.name for r in self.references)}"
        )

    def verdicts(self) -> np.ndarray:
        """The verdicts, one string a deal."""
        return np.array([r.verdict for r in self.rows])

    def results(self, name: str, count: int | None = None) -> np.ndarray | None:
        """Reference ``name``'s 0/1 results on the first ``count`` deals (all by default),
        or None where it was not played on every one of them."""
        self.reference(name)
        rows = self.rows[: len(self.rows) if count is None else count]
        values = [r.results.get(name) for r in rows]
        if any(v is None for v in values):
            return None
        return np.array(values, dtype=np.int8)

    def counts(self) -> dict[str, int]:
        """Deals by verdict."""
        v = self.verdicts()
        return {k: int((v == k).sum()) for k in VERDICTS}


def index(data_dir: Path | None = None) -> dict:
    """``index.json``: the schema and every set's description."""
    path = (data_dir or DATA_DIR) / "index.json"
    with open(path) as f:
        data = json.load(f)
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: deal-set schema {data.get('schema')!r}, this reads {SCHEMA}")
    return data


def set_name(game: str, variant: str, split: str) -> str:
    """A set's name: ``castle-siege-very_hard-heldout``."""
    return f"{game}-{variant}-{split}"


def available(data_dir: Path | None = None) -> list[dict]:
    """Every set's entry of ``index.json`` (name, game, variant, split, seeds, counts,
    references)."""
    return list(index(data_dir)["sets"].values())


def load_deals(
    game: str, variant: str, split: str = "heldout", data_dir: Path | None = None
) -> DealSet:
    """The labelled deals of ``game`` (its registry slug) at ``variant`` (a difficulty or
    level), ``split`` ``study`` or ``heldout``. The file is checked against its index entry
    (checksum, columns, seeds without a gap, verdicts) before any row is returned."""
    from castle_envs.registry import get_game

    slug = get_game(game).slug
    if split not in SPLITS:
        raise ValueError(f"unknown deal split {split!r}; choose from {list(SPLITS)}")
    meta = index(data_dir)
    name = set_name(slug, variant, split)
    entry = meta["sets"].get(name)
    if entry is None:
        choices = sorted(s["variant"] for s in meta["sets"].values() if s["game"] == slug)
        raise ValueError(
            f"no {split} deal set for {slug} {variant!r}"
            + (f"; {slug} has sets for {sorted(set(choices))}" if choices else "")
        )
    path = (data_dir or DATA_DIR) / entry["file"]
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
        raise ValueError(f"{path}: its checksum differs from index.json's (a changed file)")
    refs = tuple(Reference(r["name"], r["spec"], r["source"]) for r in entry["references"])
    rows = parse_rows(gzip.decompress(raw).decode(), [r.name for r in refs], str(path))
    seeds = range(entry["seeds"][0], entry["seeds"][1] + 1)
    if [r.seed for r in rows] != list(seeds):
        raise ValueError(f"{path}: its seeds are not {seeds.start}..{seeds.stop - 1} in order")
    return DealSet(
        name,
        slug,
        entry["variant_arg"],
        variant,
        split,
        seeds,
        refs,
        tuple(rows),
        entry.get("notes", ""),
    )


def parse_rows(text: str, references: list[str], where: str) -> list[Deal]:
    """The rows of a set's CSV text, each field checked."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    expected = [*FIXED_COLUMNS, *references]
    if header != expected:
        raise ValueError(f"{where}: columns {header}, expected {expected}")
    rows = []
    for number, fields in enumerate(reader, 2):
        if len(fields) != len(expected):
            raise ValueError(f"{where} line {number}: {len(fields)} fields, not {len(expected)}")
        seed, verdict, found_by, line, proof, *results = fields
        if verdict not in VERDICTS:
            raise ValueError(f"{where} line {number}: verdict {verdict!r}")
        if (verdict == WON) != bool(line):
            raise ValueError(f"{where} line {number}: a won deal has a line, no other does")
        if any(v not in ("", "0", "1") for v in results):
            raise ValueError(f"{where} line {number}: a result is 1, 0 or empty")
        rows.append(
            Deal(
                int(seed),
                verdict,
                found_by,
                decode_line(line),
                proof,
                MappingProxyType(
                    {n: (None if v == "" else int(v)) for n, v in zip(references, results)}
                ),
            )
        )
    return rows


def write_set(rows: list[Deal], references: list[str]) -> bytes:
    """A set's rows as gzipped CSV bytes (``mtime`` 0, so the same rows give the same
    bytes)."""
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow([*FIXED_COLUMNS, *references])
    for r in rows:
        values = [r.results.get(n) for n in references]
        w.writerow(
            [
                r.seed,
                r.verdict,
                r.found_by,
                encode_line(r.line),
                r.proof,
                *("" if v is None else int(v) for v in values),
            ]
        )
    return gzip.compress(text.getvalue().encode(), mtime=0)


# --- checking: every stored line replayed ----------------------------------------------------
def replays_to_win(deals: DealSet, row: Deal) -> bool:
    """Does ``row``'s line, played in the game's Gymnasium env from ``reset(seed=row.seed)``,
    end in a win with its last move?"""
    if deals.game == "castle-siege":
        from castle_envs.agents.solvers.castle_siege import deal_deck
        from castle_envs.agents.solvers.castle_siege import replay_wins as siege_replay

        return siege_replay(deal_deck(row.seed), deals.variant, row.line)
    from castle_envs.agents.solvers.castellion import replay_wins as castellion_replay

    return castellion_replay(row.seed, deals.variant, row.line)


def check_set(deals: DealSet, sample: int | None = None, progress=None) -> list[str]:
    """What is wrong with a set: every won deal's line (or ``sample`` of them, spread over
    the set) replayed to a win, and no reference agent winning a deal not proven won (an
    agent's won game is a proof). The empty list when all holds."""
    problems = []
    for r in deals.rows:
        for name, value in r.results.items():
            if value == 1 and r.verdict != WON:
                problems.append(f"{deals.name} deal {r.seed}: {name} won it, verdict {r.verdict}")
    won = [r for r in deals.rows if r.verdict == WON]
    if sample is not None and sample < len(won):
        won = [won[i] for i in np.linspace(0, len(won) - 1, sample).round().astype(int)]
    from castle_envs.core.errors import IllegalActionError

    for r in won:
        try:
            wins = replays_to_win(deals, r)
        except IllegalActionError as err:
            problems.append(f"{deals.name} deal {r.seed}: its line plays an illegal move: {err}")
            continue
        if not wins:
            problems.append(f"{deals.name} deal {r.seed}: its line does not replay to a win")
        if progress is not None:
            progress(1)
    return problems


__all__ = [
    "DATA_DIR",
    "Deal",
    "DealSet",
    "LOST",
    "Reference",
    "SCHEMA",
    "UNKNOWN",
    "WON",
    "available",
    "check_set",
    "decode_line",
    "encode_line",
    "load_deals",
    "replays_to_win",
    "set_name",
    "write_set",
]
