"""The results files of ``castle-envs solve --out`` (both games): one JSON line per deal,
each carrying the settings it was solved under, and their checked reading for ``--resume``.

A record's ``settings`` holds the game, its variant (``{"difficulty": ...}`` or
``{"level": ...}``), the rules options, the budget and the search's own settings (the
probes' policy, the nested search or the loss search's budget). ``--resume`` refuses a file
with a line that is not a record (not an object, a field missing or of the wrong type), a
line written before records carried their settings, or a line solved under another game,
variant or rules. Without ``--retry-unknown`` each deal's last record, the one a resume
keeps, must also have been solved under the run's budget and search (the summary states
one); with it the search may differ: that is how unknown deals get a second, larger try.
A file written before records carried their settings resumes only with
``--assume-settings``: the person running it vouches that it was solved under the
command's settings, which no line can show.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from castle_envs.core.files import kind

VERDICTS = ("winnable", "unwinnable", "unknown")
#: what a deal is and what its verdict means: every resumed line must match the run in these
DEAL_SETTINGS = ("game", "variant", "rules")


def budget_text(nodes: int | None, seconds: float | None) -> str:
    """The budget as a record's settings write it: ``"20000"`` (nodes) or ``"10s"``, so
    that ``20000`` and ``20000n`` are the same budget."""
    return str(nodes) if nodes is not None else f"{seconds:g}s"


def _where(path: str, number: int) -> str:
    return f"--resume {path}: line {number}"


def _count(record: dict, key: str, where: str, required: bool = True) -> None:
    value = record.get(key)
    if value is None and not required and key not in record:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        got = "nothing" if key not in record else kind(value)
        raise ValueError(f"{where}: {key!r} must be a whole number >= 0, got {got}")


def _amount(record: dict, key: str, where: str, required: bool = True) -> None:
    if not required and key not in record:
        return
    value = record.get(key)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        got = "nothing" if key not in record else kind(value)
        raise ValueError(f"{where}: {key!r} must be a number >= 0, got {got}")


def check_common(record: dict, where: str, assume_settings: bool = False) -> None:
    """What every solve record holds: the deal's seed, the verdict, the search's nodes and
    seconds, the random games, the winning line (a list of action ids) and the settings
    (which a record written before they were recorded may lack with ``assume_settings``)."""
    for key in ("seed", "verdict"):
        if key not in record:
            raise ValueError(f"{where}: no {key!r}; not a castle-envs solve record")
    _count(record, "seed", where)
    if record["verdict"] not in VERDICTS:
        raise ValueError(
            f"{where}: 'verdict' must be one of {', '.join(VERDICTS)}, got "
            f"{kind(record['verdict'])}"
        )
    _count(record, "nodes", where)
    _amount(record, "seconds", where)
    _count(record, "random_games", where)
    _count(record, "random_wins", where)
    if record["random_wins"] > record["random_games"]:
        raise ValueError(f"{where}: 'random_wins' is more than 'random_games'")
    line = record.get("line", [])
    if not isinstance(line, list) or any(
        isinstance(a, bool) or not isinstance(a, int) or a < 0 for a in line
    ):
        raise ValueError(f"{where}: 'line' must be a list of action ids")
    if record["verdict"] == "winnable" and not line:
        raise ValueError(f"{where}: a winnable deal with no winning 'line'")
    if "settings" not in record:
        if assume_settings:
            return
        raise ValueError(
            f"{where}: the record holds no settings (written before solve records carried "
            "them), so a resume cannot tell whether it was solved under this run's game, "
            "rules and budget; solve into a new --out file, or add --assume-settings if it "
            "was solved under this command's settings"
        )
    if not isinstance(record["settings"], dict):
        raise ValueError(f"{where}: 'settings' must be an object, got {kind(record['settings'])}")


def is_results_head(head: bytes) -> bool:
    """Do a file's first bytes begin with a solve record (either game's, with settings or
    written before records carried them) as a whole first line? What ``--out`` may start
    over without ``--resume``."""
    from castle_envs.core.files import UnreadableFile, parse_json

    try:
        record = parse_json(head.split(b"\n", 1)[0], "the first line")
    except UnreadableFile:
        return False
    if not isinstance(record, dict):
        return False
    try:
        check_common(record, "the first line", assume_settings=True)
    except (ValueError, TypeError):
        return False
    return True


def check_out_file(path: str, resume: bool) -> None:
    """``--out`` (both games) can be written, and without ``resume`` starts over nothing
    but a results file: an existing file that is not one is refused, never emptied."""
    from .common import check_overwrite, writable_file

    if resume:
        writable_file(path, "--out")  # what is there is read back and checked
        return
    check_overwrite(
        path,
        "--out",
        is_results_head,
        "a castle-envs solve results file (to add to one, give --resume)",
    )


_MISSING = object()


def _first_difference(theirs: dict, ours: dict, keys: tuple) -> tuple | None:
    """(the setting, its name, the record's value, this run's) for the first of ``keys``
    that differs; a variant or the rules are compared option by option, named by the
    option (``difficulty``, ``attack``)."""
    for key in keys:
        mine, other = ours[key], theirs.get(key, _MISSING)
        if mine == other:
            continue
        if isinstance(mine, dict) and isinstance(other, dict):
            for name in [*mine, *(k for k in other if k not in mine)]:
                if mine.get(name, _MISSING) != other.get(name, _MISSING):
                    return key, name, other.get(name, _MISSING), mine.get(name, _MISSING)
        return key, key, other, mine
    return None


def _first(numbered: tuple) -> int:
    return numbered[0]


def _said(value: Any) -> str:
    return "nothing" if value is _MISSING else repr(value)


def check_settings(record: dict, settings: dict, keys: tuple, where: str) -> None:
    """``record`` was solved under ``settings`` in each of ``keys``, or ``ValueError``
    naming the first setting that differs."""
    differ = _first_difference(record["settings"], settings, keys)
    if differ is None:
        return
    key, name, theirs, ours = differ
    hint = (
        "solve into a new --out file"
        if key in DEAL_SETTINGS
        else "give the file's settings, or add --retry-unknown to solve its unknown deals "
        "again under these"
    )
    raise ValueError(
        f"{where}: solved with {name} {_said(theirs)}, but this run asks for {name} "
        f"{_said(ours)}; {hint}"
    )


def read_results(
    path: str,
    settings_for: Callable[[dict], dict | None],
    check_game: Callable[[dict, str], None],
    key: Callable[[dict], Any],
    retry_unknown: bool = False,
    assume_settings: bool = False,
) -> dict:
    """The deals results file ``path`` holds for ``--resume``, by ``key(record)``: the last
    record of each deal (with ``retry_unknown``, not those left unknown: they are solved
    again). Every line is checked (``check_common``, the game's own ``check_game(record,
    where)``, the game, variant and rules of ``settings_for(record)``: the settings this
    run gives the record's deal, None for a deal it does not solve, another Castellion
    level, which is left alone); without ``retry_unknown`` each deal's last record must also
    have been solved under this run's budget and search. ``assume_settings``: a record
    with no settings is taken as solved under this run's. All before anything is cut off
    the file (a last line cut by a crash is dropped with a warning: ``journal.read``)."""
    from .journal import JournalError, read

    last: dict = {}  # key -> (line number, record)

    def check(number: int, record: dict) -> None:
        where = _where(path, number)
        check_common(record, where, assume_settings)
        check_game(record, where)
        settings = settings_for(record)
        if settings is not None and "settings" in record:
            check_settings(record, settings, DEAL_SETTINGS, where)
        last[key(record)] = (number, record)

    def check_kept() -> None:
        for number, record in [] if retry_unknown else sorted(last.values(), key=_first):
            settings = settings_for(record)
            if settings is not None and "settings" in record:
                check_settings(record, settings, tuple(settings), _where(path, number))

    try:
        read(path, check=check, check_all=check_kept)
    except JournalError as err:
        raise ValueError(f"--resume {err}") from None
    return {k: r for k, (_, r) in last.items() if not (retry_unknown and r["verdict"] == "unknown")}
