"""Builds the labelled deal sets (``castle_envs.experiments.deals``, files in
``experiments/deal_sets/``) from the studies' records under ``docs/data/`` and the reference
agents' games. From the repository root:

    python experiments/studies/benchmark/build_deals.py play [--best] [--only NAME]
    python experiments/studies/benchmark/build_deals.py build [--no-play]
    python experiments/studies/benchmark/build_deals.py update NAME
    python experiments/studies/benchmark/build_deals.py add-reference NAME REF

``play`` plays, deal by deal and resumable (``play_refs.py``'s journals in ``runs/deals/``),
every reference agent but ``best`` on every deal of every set (a few hundredths of a second
a game: their results are then today's code's, and the won games are lines), and solves the
Easy and Medium study deals again for their lines (the study kept only their verdicts);
``--best`` also plays ``best`` where no study kept its per-deal results (seconds a game).
``build`` writes one gzipped CSV a set and ``index.json`` (``--no-play``: without playing
an agent again for a won deal's line, leaving such deals unknown), and prints, for every reference
with results both stored by a study and played again here, how many deals differ. ``update``
brings one study set up to date with the studies' verdicts (a deal it holds as
unknown that a record now decides), keeping its reference results as they are (nothing is
played). ``add-reference`` gives one set the column of reference ``REF`` (of ``REFERENCES``)
from its ``play_refs.py`` journal, which must hold every deal of the set, keeping the other
columns as they are; a deal it wins that no search proved becomes won with its game as the
line.

Verdicts and lines, per set (the last record of a deal counts, as ``solve --resume
--retry-unknown`` appends):

- Castle Siege Easy and Medium, deals 0-4,999: the study's verdicts
  (``castle_siege_deals.csv``: the deals not proven at 20,000 nodes) and lines from
  ``castle-envs solve`` at the same budget run again, the deals it leaves unknown solved
  again with the nested search (``--nested 2``, 100,000 nodes);
- Hard and Very Hard, deals 0-999: the nested-search study
  (``castle_siege_winnability/nested/*.jsonl.gz``); deals 1,000,000-1,001,999: the same
  search on the agents' deals (``castle_siege_search/nested_*.jsonl.gz``);
- Castellion, deals 0-499 a level: every source ``castellion_winnability/settled.py``
  credits (the solver and its planner probe, the win search, ``pimc``'s won games, the
  nested search, the seeing nested search of ``seeing_wins.jsonl``), each a line replayed
  to a win, and the proofs of loss
  (``loss_proofs_200k.jsonl.gz``);
- Castellion, the held-out deals: no study solved them; a deal a reference agent won is
  won, and ``runs/deals/solve-castellion-LEVEL-heldout.jsonl`` (``castle-envs solve --game
  castellion --level LEVEL --deals 1000 --seed 1000000 --out ...``), where it exists, adds
  its verdicts;
- everywhere: a deal a reference agent won is won (its game is the line), where nothing
  else proved it.

Reference results stored by the studies and used as they are (``best`` costs seconds a
game): Castle Siege ``best`` on the held-out deals (the wide ISMCTS agent's games,
``castle_siege_ismcts/{vh,hard}w12c2-*-deals.csv``, with the endgame agent's replays of its
lost deals, ``castle_siege_ismcts/endgame/budget/lost_*.json``: the agent wins every deal the
wide agent won and plays only the lost ones differently); Castellion ``best`` at the Menace
held out (``castellion_pimc/heldout/pimcs-menace-*-deals.csv``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from castle_envs.experiments import journal
from castle_envs.experiments.deals import (
    DATA_DIR,
    LOST,
    SCHEMA,
    UNKNOWN,
    WON,
    Deal,
    index,
    load_deals,
    set_name,
    write_set,
)
from castle_envs.experiments.studies.records import open_record

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "docs/data"
WORK = ROOT / "runs/deals"
PY = sys.executable

REFERENCES = {
    "castle-siege": [
        ("random", "random"),
        ("heuristic", "heuristic"),
        ("linear", "model:models/castle_siege_very_hard_linear"),
        ("network", "model:models/castle_siege_very_hard_exit_net"),
        ("value", "model:models/castle_siege_ntuple_value"),
        ("best", "model:models/castle_siege_very_hard_ismcts_endgame"),
    ],
    "castellion": [
        ("random", "random"),
        ("heuristic", "heuristic"),
        ("planner", "planner"),
        ("network", "model:models/castellion_move_ppo"),
        ("best", "pimc"),
    ],
}
SETS = [
    ("castle-siege", "difficulty", "easy", "study", 0, 5000),
    ("castle-siege", "difficulty", "medium", "study", 0, 5000),
    ("castle-siege", "difficulty", "hard", "study", 0, 1000),
    ("castle-siege", "difficulty", "very_hard", "study", 0, 1000),
    ("castle-siege", "difficulty", "hard", "heldout", 1000000, 2000),
    ("castle-siege", "difficulty", "very_hard", "heldout", 1000000, 2000),
    *(("castellion", "level", lv, "study", 0, 500) for lv in ("school", "academy", "menace")),
    *(
        ("castellion", "level", lv, "heldout", 1000000, 1000)
        for lv in ("school", "academy", "menace")
    ),
]
NOTES = {
    "castellion-menace-study": "No Menace deal is proven lost; the unknown ones are open.",
}


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in open_record(path) if line.strip()]


def journal_path(name: str, ref: str) -> Path:
    return WORK / f"{name}-{ref}.jsonl"


# --- reference results -----------------------------------------------------------------------
def stored_results(game: str, variant: str, split: str) -> dict[str, dict[int, int]]:
    """Per-deal results a study stored: {reference: {seed: 0/1}}."""
    out: dict[str, dict[int, int]] = {}
    if game == "castle-siege" and split == "heldout":
        out["best"] = siege_best(variant)
        out["linear"] = siege_linear_stored(variant)
        out["network"] = {
            int(r["seed"]): int(r["model_won"])
            for r in csv.DictReader(
                open(
                    DATA / "castle_siege_exit_net/planned_r0/heldout"
                    f"/per_deal_{variant}_seed1000000_n2000.csv"
                )
            )
        }
    if game == "castellion" and split == "heldout":
        both = DATA / (
            "castellion_move_ppo/evaluate-castellion-school-academy-menace-seed1000000-n1000"
            "-deals.csv"
        )
        for r in csv.DictReader(open(both)):
            if r["level"] == variant:
                seed = int(r["seed"])
                out.setdefault("heuristic", {})[seed] = int(float(r["heuristic"]) > 0)
                won = int(float(r["model:models/castellion_move_ppo"]) > 0)
                out.setdefault("network", {})[seed] = won
        if variant == "menace":
            out["best"] = {}
            for half in ("1000000", "1000500"):
                path = DATA / f"castellion_pimc/heldout/pimcs-menace-{half}-n500-deals.csv"
                for r in csv.DictReader(open(path)):
                    out["best"][int(r["seed"])] = int(float(r["pimc"]) > 0)
            path = DATA / "castellion_pimc/heldout/planner2-menace-1000000-n1000-deals.csv"
            out["planner"] = {
                int(r["seed"]): int(float(r["planner"]) > 0) for r in csv.DictReader(open(path))
            }
    if game == "castellion" and split == "study":
        for r in jsonl(DATA / "castellion_winnability/agents_0_499.jsonl.gz"):
            if r["level"] == variant and not (variant == "menace" and r["agent"] == "planner"):
                out.setdefault(r["agent"], {})[r["seed"]] = int(r["won"])
        if variant == "menace":
            rows = jsonl(DATA / "castellion_winnability/agents_0_499_menace_planner_scout.jsonl")
            out["planner"] = {r["seed"]: int(r["won"]) for r in rows}
    return out


def siege_best(variant: str) -> dict[int, int]:
    """``best`` on the held-out deals: the wide agent's games, its lost deals replayed by the
    endgame agent with its node budget."""
    prefix = {"very_hard": "vhw12c2", "hard": "hardw12c2"}[variant]
    spec = "ismcts:iterations=1000,width=12,temp=2,c=2,shaped=0.1,standing=0.2"
    wide: dict[int, int] = {}
    for start in range(1000000, 1002000, 200):
        path = DATA / f"castle_siege_ismcts/{prefix}-{start}-n200-deals.csv"
        for r in csv.DictReader(open(path)):
            wide[int(r["seed"])] = int(float(r[spec]) > 0)
    lost = json.load(
        open(
            DATA
            / f"castle_siege_ismcts/endgame/budget/lost_{'vh' if variant == 'very_hard' else 'hard'}.json"
        )
    )["wins"]
    best = dict(wide)
    for seed, won in lost.items():
        if wide[int(seed)]:
            raise SystemExit(f"{variant} {seed}: replayed as lost, but the wide agent won it")
        best[int(seed)] = int(won)
    if sorted(k for k, v in wide.items() if not v) != sorted(int(k) for k in lost):
        raise SystemExit(f"{variant}: the replays are not exactly the wide agent's lost deals")
    return best


def siege_linear_stored(variant: str) -> dict[int, int]:
    """The shipped linear scorer's stored per-deal results on the held-out deals (Hard
    1,000,300-1,001,999 only: the other runs kept no per-deal file)."""
    if variant != "hard":
        return {}
    path = DATA / "castle_siege_search/evaluate-castle-siege-hard-seed1000300-n1700-deals.csv"
    col = "model:models/castle_siege_very_hard_linear"
    return {int(r["seed"]): int(float(r[col]) > 0) for r in csv.DictReader(open(path))}


def played(name: str, ref: str) -> tuple[dict[int, int], dict[int, list[int]]]:
    """A reference's results and won lines from its ``play_refs.py`` journal."""
    path = journal_path(name, ref)
    if not path.exists():
        return {}, {}
    rows = journal.read(str(path), repair=False)
    return {r["seed"]: r["won"] for r in rows}, {r["seed"]: r["line"] for r in rows if r["won"]}


# --- verdicts ----------------------------------------------------------------------------------
def last_records(paths: list[Path], key=lambda r: r["seed"]) -> dict:
    out = {}
    for path in paths:
        if not path.exists() and not path.with_name(path.name + ".gz").exists():
            continue
        for r in jsonl(path):
            out[key(r)] = r
    return out


def siege_verdicts(variant: str, split: str, seeds: range) -> dict[int, tuple]:
    """{seed: (verdict, found_by, line, proof)} for Castle Siege."""
    out: dict[int, tuple] = {}
    if variant in ("easy", "medium"):
        unknown = {
            int(r["seed"])
            for r in csv.DictReader(open(DATA / "castle_siege_deals.csv"))
            if r["difficulty"] == variant and r["verdict"] != "winnable"
        }
        solved = last_records([WORK / f"solve-{variant}-study.jsonl"])
        for seed in seeds:
            r = solved.get(seed)
            if r is not None and r["verdict"] == "winnable":
                out[seed] = (WON, r.get("found_by") or "solver", r["line"], "")
            elif seed not in unknown:
                out[seed] = ("study-won", "solver", [], "")  # a line still to find
        return out
    if split == "study":
        paths = [DATA / f"castle_siege_winnability/nested/{variant}.jsonl.gz"]
        # the deals those passes left, won later (open_deals.py)
        paths.append(DATA / f"castle_siege_winnability/nested/{variant}_open.jsonl.gz")
    else:
        paths = [DATA / f"castle_siege_search/nested_{variant}.jsonl.gz"]
    for seed, r in last_records(paths).items():
        if r["verdict"] == "winnable":
            out[seed] = (WON, r.get("found_by") or "solver", r["line"], "")
        elif r["verdict"] == "unwinnable":
            out[seed] = (LOST, r.get("found_by") or "solver", [], "")
    return out


def castellion_verdicts(level: str, split: str) -> dict[int, tuple]:
    """{seed: (verdict, found_by, line, proof)} for Castellion's study deals: the first
    source with a line, in ``settled.py``'s order."""
    out: dict[int, tuple] = {}
    if split != "study":
        # the held-out deals were never solved by the study: where ``castle-envs solve --game
        # castellion --level L --deals 1000 --seed 1000000 --out`` wrote this file, its verdicts
        for seed, r in last_records([WORK / f"solve-castellion-{level}-{split}.jsonl"]).items():
            if r["verdict"] == "winnable":
                out[seed] = (WON, r["found_by"], r["line"], "")
            elif r["verdict"] == "unwinnable":
                out[seed] = (LOST, r["found_by"], [], r.get("proof", ""))
        return out
    here = DATA / "castellion_winnability"

    def credit(seed: int, found_by: str, line: list[int]) -> None:
        if line and seed not in out:
            out[seed] = (WON, found_by, line, "")

    for r in jsonl(here / "solve_500k_probe.jsonl.gz"):
        if r["level"] == level and r["verdict"] == "winnable":
            credit(r["seed"], r["found_by"], r["line"])
    for r in jsonl(here / "win_search_500k.jsonl.gz"):
        if r["level"] == level and r["verdict"] == "WON, replays":
            credit(r["seed"], "win-search", r["line"])
    for r in jsonl(here / "agent_wins.jsonl.gz"):
        if r["level"] == level and r["won"] and r["replays"]:
            credit(r["seed"], f"agent:{r['agent']}", r["line"])
    for r in jsonl(here / "nested_wins.jsonl.gz"):
        if r["level"] == level and r["won"] and r["replays"]:
            credit(r["seed"], f"nested:{r['settings'].get('level', 1)}", r["line"])
    for r in jsonl(here / "seeing_wins.jsonl"):
        if r["level"] == level and r["won"] and r["replays"]:
            credit(r["seed"], seeing_found_by(r["settings"]), r["line"])
    for r in jsonl(here / "loss_proofs_200k.jsonl.gz"):
        if r["level"] == level and r["proof"]:
            if r["seed"] in out:
                raise SystemExit(f"{level} {r['seed']}: proven both won and lost")
            out[r["seed"]] = (LOST, r["found_by"], [], r["proof"])
    return out


def seeing_found_by(settings: dict) -> str:
    """A seeing nested search's name, as the portfolio spells its stages: ``nested:1:see``,
    with ``:topN`` for other than 4 candidates, ``:value`` for its scoring and the playout
    planner's options."""
    name = f"nested:{settings.get('level', 1)}:see"
    if settings.get("top", 4) != 4:
        name += f":top{settings['top']}"
    if settings.get("score", "moves") != "moves":
        name += f":{settings['score']}"
    options = settings.get("planner") or {}
    if options:
        name += ":planner:" + ",".join(f"{k}={v}" for k, v in options.items())
    return name


def menace_planner_wins(name: str, verdicts: dict) -> dict[int, tuple]:
    """The study's planner wins at the Menace no other source has a line for, played again
    with the planner as it ran (``info=30`` before ``scout``, and today's), recorded."""
    here = DATA / "castellion_winnability"
    out = {}
    for file, spec in (
        ("agents_0_499_menace_planner_info30.jsonl", "planner:info=30,scout=0,grow=8"),
        ("agents_0_499_menace_planner_scout.jsonl", "planner"),
    ):
        todo = [r["seed"] for r in jsonl(here / file) if r["won"] and r["seed"] not in verdicts]
        todo = [s for s in todo if s not in out]
        for seed, line in lines_to_find(name, "castellion", "menace", todo, spec).items():
            out[seed] = (WON, f"agent:{spec}", line, "")
    return out


# --- the two stages ----------------------------------------------------------------------------
def play(best: bool, only: str | None) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    # the held-out sets (the benchmark's) first, then the smaller sets
    for game, _, variant, split, first, count in sorted(
        SETS, key=lambda s: (s[3] != "heldout", s[5])
    ):
        name = set_name(game, variant, split)
        if only not in (None, name):
            continue
        stored = stored_results(game, variant, split)
        for ref, spec in REFERENCES[game]:
            if ref == "best" and (ref in stored or not best):
                continue
            command = [PY, str(Path(__file__).with_name("play_refs.py")), game, variant, spec]
            command += [str(first), str(count), str(journal_path(name, ref))]
            print(" ".join(command[1:]), flush=True)
            subprocess.run(command, check=True)
    for variant in ("easy", "medium"):
        out = WORK / f"solve-{variant}-study.jsonl"
        command = [PY, "-m", "castle_envs.experiments.cli", "solve", "--difficulty", variant]
        command += ["--deals", "5000", "--seed", "0", "--budget", "20000", "--random-games", "0"]
        command += ["--workers", "1", "--out", str(out), "--resume"]
        if only in (None, set_name("castle-siege", variant, "study")):
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            # the deals left unknown (a few Medium ones), again with the nested search
            command += ["--retry-unknown", "--nested", "2", "--budget", "100000"]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def lines_to_find(name: str, game: str, variant: str, seeds: list[int], spec: str) -> dict:
    """Lines of won deals no record holds: the agent that won each played again as
    ``castle-envs evaluate`` plays it, recorded (kept in ``runs/deals/NAME-line-SPEC-SEED.jsonl``)."""
    from castle_envs.experiments.episodes import play_episode

    out = {}
    key = "difficulty" if game == "castle-siege" else "level"
    if "--no-play" in sys.argv:
        return out
    for seed in seeds:
        safe = "".join(c if c.isalnum() else "_" for c in spec)
        path = WORK / f"{name}-line-{safe}-{seed}.jsonl"
        if not path.exists():
            r = play_episode(game, ((key, variant),), (), (spec,), seed, 0, record=True)
            row = {"seed": seed, "won": int(r["returns"][0] > 0), "spec": spec}
            if row["won"]:
                row["line"] = r["record"]["actions"]
            with open(path, "w") as f:
                journal.append(f, row)
        rows = journal.read(str(path), repair=False)
        if rows and rows[0]["won"]:
            out[seed] = rows[0]["line"]
    return out


def build_set(
    game: str, variant_arg: str, variant: str, split: str, first: int, count: int
) -> dict:
    name = set_name(game, variant, split)
    seeds = range(first, first + count)
    verdicts = (
        siege_verdicts(variant, split, seeds)
        if game == "castle-siege"
        else castellion_verdicts(variant, split)
    )
    if game == "castellion" and split == "study" and variant == "menace":
        verdicts.update(menace_planner_wins(name, verdicts))
    stored = stored_results(game, variant, split)
    results: dict[str, dict[int, int]] = {}
    lines: dict[str, dict[int, list[int]]] = {}
    sources = {}
    for ref, _ in REFERENCES[game]:
        mine, won_lines = played(name, ref)
        lines[ref] = won_lines
        theirs = stored.get(ref, {})
        if mine and theirs:
            common = sorted(set(mine) & set(theirs))
            differ = [s for s in common if mine[s] != theirs[s]]
            print(
                f"  {name} {ref}: played here {sum(mine[s] for s in common)}, stored "
                f"{sum(theirs[s] for s in common)} wins on {len(common)} common deals; "
                f"{len(differ)} differ {differ[:8]}"
            )
        use_mine = len(mine) == count or not theirs
        results[ref] = mine if use_mine else theirs
        sources[ref] = (
            "played for this set (experiments/studies/benchmark/play_refs.py)"
            if use_mine and mine
            else (STORED_SOURCE.get((game, split, ref), "") if theirs else "")
        )
    rows = assemble(name, game, variant, seeds, verdicts, results, lines)
    refs = [r for r, _ in REFERENCES[game]]
    data = write_set(rows, refs)
    (DATA_DIR / f"{name}-v{SCHEMA}.csv.gz").write_bytes(data)
    counts = {k: sum(r.verdict == k for r in rows) for k in (WON, LOST, UNKNOWN)}
    found = {}
    for r in rows:
        if r.found_by:
            found[r.found_by] = found.get(r.found_by, 0) + 1
    entry = {
        "name": name,
        "game": game,
        "variant_arg": variant_arg,
        "variant": variant,
        "split": split,
        "seeds": [first, first + count - 1],
        "file": f"{name}-v{SCHEMA}.csv.gz",
        "sha256": hashlib.sha256(data).hexdigest(),
        "counts": counts,
        "found_by": dict(sorted(found.items())),
        "references": [
            {
                "name": ref,
                "spec": spec,
                "source": sources[ref],
                "deals": sum(r.results.get(ref) is not None for r in rows),
                "wins": sum(r.results.get(ref) == 1 for r in rows),
            }
            for ref, spec in REFERENCES[game]
        ],
        "notes": NOTES.get(name, ""),
    }
    print(f"{name}: {counts} {[(e['name'], e['wins'], e['deals']) for e in entry['references']]}")
    return entry


STORED_SOURCE = {
    ("castle-siege", "heldout", "best"): (
        "docs/data/castle_siege_ismcts: the wide agent's games ({vh,hard}w12c2-*-deals.csv) "
        "and the endgame agent's replays of its lost deals (endgame/budget/lost_*.json)"
    ),
    ("castle-siege", "heldout", "network"): (
        "docs/data/castle_siege_exit_net/planned_r0/heldout (experiments.eval_moves)"
    ),
    ("castle-siege", "heldout", "linear"): "docs/data/castle_siege_search",
    ("castellion", "heldout", "best"): "docs/data/castellion_pimc/heldout/pimcs-menace-*",
    ("castellion", "heldout", "planner"): "docs/data/castellion_pimc/heldout/planner2-menace-*",
    ("castellion", "heldout", "heuristic"): "docs/data/castellion_move_ppo",
    ("castellion", "heldout", "network"): "docs/data/castellion_move_ppo",
    ("castellion", "study", "random"): "docs/data/castellion_winnability/agents_0_499",
    ("castellion", "study", "heuristic"): "docs/data/castellion_winnability/agents_0_499",
    ("castellion", "study", "planner"): "docs/data/castellion_winnability/agents_0_499",
}


def assemble(name, game, variant, seeds, verdicts, results, lines) -> list[Deal]:
    """Each deal's row: its verdict, or a reference's won game where nothing else proved
    it (its line from the reference's journal, or the agent played again)."""
    order = [r for r, _ in REFERENCES[game]]
    missing: dict[str, list[int]] = {}
    for seed in seeds:
        verdict = verdicts.get(seed, (UNKNOWN, "", [], ""))
        if verdict[0] in (WON, LOST):
            continue
        for ref in order:
            if results[ref].get(seed) == 1:
                if seed not in lines[ref]:
                    missing.setdefault(ref, []).append(seed)
                break
    specs = dict(REFERENCES[game])
    for ref, todo in missing.items():
        lines[ref].update(lines_to_find(name, game, variant, todo, specs[ref]))
    rows = []
    for seed in seeds:
        verdict, found_by, line, proof = verdicts.get(seed, (UNKNOWN, "", [], ""))
        if verdict not in (WON, LOST):
            for ref in order:
                if results[ref].get(seed) == 1 and seed in lines[ref]:
                    verdict, found_by, line = WON, f"agent:{specs[ref]}", lines[ref][seed]
                    break
            else:
                if verdict == "study-won":
                    raise SystemExit(f"{name} {seed}: the study proved it, no line is found")
                verdict, found_by = UNKNOWN, ""
        rows.append(
            Deal(
                seed,
                verdict,
                found_by,
                tuple(line),
                proof,
                {ref: results[ref].get(seed) for ref in order},
            )
        )
    return rows


def build() -> None:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    entries = {}
    for spec in SETS:
        entry = build_set(*spec)
        entries[entry["name"]] = entry
    index = {
        "schema": SCHEMA,
        "line_encoding": "two URL-safe base-64 characters an action id, high digit first",
        "splits": {
            "study": "the seeds the winnability studies solved (from 0)",
            "heldout": "the seeds the agents were measured on (from 1,000,000)",
        },
        "sets": entries,
    }
    with open(DATA_DIR / "index.json", "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


def update(name: str) -> None:
    """``update NAME`` (module docstring): the set's unknown deals that a study record now
    decides take its verdict, found_by, line and proof; a decided deal a record contradicts
    stops the update."""
    meta = index()
    entry = meta["sets"].get(name)
    if entry is None or entry["split"] != "study":
        raise SystemExit(f"update: {name!r} is not a study set")
    deals = load_deals(entry["game"], entry["variant"], entry["split"])
    if entry["game"] == "castellion":
        verdicts = castellion_verdicts(entry["variant"], entry["split"])
    else:
        verdicts = siege_verdicts(entry["variant"], entry["split"], deals.seeds)
    rows = []
    for row in deals.rows:
        new = verdicts.get(row.seed)
        if new is not None and new[0] in (WON, LOST) and new[0] != row.verdict:
            if row.verdict != UNKNOWN:
                raise SystemExit(f"{name} {row.seed}: {row.verdict} in the set, {new[0]} now")
            row = Deal(row.seed, new[0], new[1], tuple(new[2]), new[3], row.results)
        rows.append(row)
    entry["notes"] = NOTES.get(name, "")
    save_set(meta, entry, rows, [r.name for r in deals.references])
    print(f"{name}: {entry['counts']}")


def save_set(meta: dict, entry: dict, rows: list, references: list[str]) -> None:
    """Write ``rows`` as the set file of ``entry`` and ``meta`` as the index, with the entry's
    checksum, verdict counts and proof methods made from them."""
    data = write_set(rows, references)
    (DATA_DIR / entry["file"]).write_bytes(data)
    found: dict[str, int] = {}
    for r in rows:
        if r.found_by:
            found[r.found_by] = found.get(r.found_by, 0) + 1
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    entry["counts"] = {k: sum(r.verdict == k for r in rows) for k in (WON, LOST, UNKNOWN)}
    entry["found_by"] = dict(sorted(found.items()))
    with open(DATA_DIR / "index.json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def add_reference(name: str, ref: str) -> None:
    """``add-reference NAME REF`` (module docstring)."""
    meta = index()
    entry = meta["sets"].get(name)
    if entry is None:
        raise SystemExit(f"add-reference: no set {name!r}")
    specs = dict(REFERENCES[entry["game"]])
    if ref not in specs:
        raise SystemExit(f"add-reference: {ref!r} is not a reference of {entry['game']}")
    deals = load_deals(entry["game"], entry["variant"], entry["split"])
    results, won_lines = played(name, ref)
    if sorted(results) != list(deals.seeds):
        raise SystemExit(f"add-reference: {journal_path(name, ref)} does not hold every deal")
    names = [r.name for r in deals.references]
    order = [r for r, _ in REFERENCES[entry["game"]] if r in names or r == ref]
    rows = []
    for row in deals.rows:
        verdict, found_by, line = row.verdict, row.found_by, row.line
        if verdict == UNKNOWN and results[row.seed]:
            verdict, found_by, line = WON, f"agent:{specs[ref]}", tuple(won_lines[row.seed])
        merged = {**row.results, ref: results[row.seed]}
        rows.append(
            Deal(row.seed, verdict, found_by, line, row.proof, {k: merged[k] for k in order})
        )
    old = {r["name"]: r for r in entry["references"]}
    old[ref] = {
        "name": ref,
        "spec": specs[ref],
        "source": "played for this set (experiments/studies/benchmark/play_refs.py)",
        "deals": len(rows),
        "wins": sum(r.results[ref] == 1 for r in rows),
    }
    entry["references"] = [old[k] for k in order]
    save_set(meta, entry, rows, order)
    print(f"{name}: {entry['counts']}, {ref} {old[ref]['wins']} of {len(rows)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["play"]:
        only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
        play("--best" in sys.argv, only)
    elif sys.argv[1:2] == ["build"]:
        build()
    elif sys.argv[1:2] == ["update"] and len(sys.argv) == 3:
        update(sys.argv[2])
    elif sys.argv[1:2] == ["add-reference"] and len(sys.argv) == 4:
        add_reference(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
