"""Helpers the subcommands share: picking a game and its variant from the command line."""

from __future__ import annotations

import argparse
import re

from castle_envs.registry import GAMES, GameSpec, get_game


def add_game_arguments(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    if positional:
        parser.add_argument("game", help=f"one of {', '.join(GAMES)}")
    else:
        parser.add_argument("--game", required=True, help=f"one of {', '.join(GAMES)}")
    parser.add_argument("--difficulty", help="Castle Siege: easy, medium, hard, very_hard")
    parser.add_argument("--level", help="Castellion: school, academy, menace")
    parser.add_argument("--players", type=int, help="Castle Rooms / Castell: 2-4 players")


def game_and_variant(args) -> tuple[GameSpec, dict]:
    """The game spec and the env keyword naming its variant (the default when not given)."""
    spec = get_game(args.game)
    given = {"difficulty": args.difficulty, "level": args.level, "num_players": args.players}
    for key, value in given.items():
        if value is not None and key != spec.variant_arg:
            flag = "--players" if key == "num_players" else f"--{key}"
            raise ValueError(
                f"{flag} does not apply to {spec.slug}; it takes "
                f"--{'players' if spec.variant_arg == 'num_players' else spec.variant_arg}"
            )
    value = given[spec.variant_arg]
    if value is None:
        value = spec.variants[0]
    if value not in spec.variants:
        raise ValueError(
            f"unknown {spec.variant_arg} {value!r} for {spec.slug}; "
            f"choose one of {list(spec.variants)}"
        )
    return spec, {spec.variant_arg: value}


def describer(game: str):
    """``(state, action) -> words`` as the player may read them: the game's render module's
    ``describe`` where it hides something (Castellion's face-down Ordeals), else the state's
    own ``describe_action``."""
    render = get_game(game).load_renderer()
    return getattr(render, "describe", lambda state, action: state.describe_action(action))


_PATH = re.compile(r"[^\s:,=]*[/\\][^\s:,=]*")


def _short_path(match: re.Match) -> str:
    parts = [p for p in re.split(r"[/\\]", match.group(0)) if p and p != "."]
    if not parts:
        return match.group(0)
    # a file (policy.json, model.zip) is named with its folder: the model it belongs to
    return "/".join(parts[-2:]) if "." in parts[-1] and len(parts) > 1 else parts[-1]


def display_name(spec: str) -> str:
    """An agent spec as a chart names it: each path in it by its last folder (a file with
    its folder), so ``model:/home/me/runs/castle_rooms_2p_ppo`` is
    ``model:castle_rooms_2p_ppo``."""
    return _PATH.sub(_short_path, spec)


def display_names(specs: list[str]) -> list[str]:
    """``display_name`` of each spec, the full spec where two would read the same."""
    short = [display_name(s) for s in specs]
    return [d if short.count(d) == 1 else s for s, d in zip(specs, short)]


def read_evaluate_csv(paths: list[str], variant: str, command: str) -> dict:
    """``castle-envs evaluate`` CSVs -> {variant: {agent: (rate, low, high, episodes)}}, the
    variant read from column ``variant``, an agent named without its options; ``command``
    names the writer in the error for a file it did not write."""
    import csv

    out: dict = {}
    for path in paths:
        with open(path, newline="") as f:
            try:
                for row in csv.DictReader(f):
                    out.setdefault(row[variant], {})[row["agent"].split(":")[0]] = (
                        float(row["win_rate"]),
                        float(row["win_low"]),
                        float(row["win_high"]),
                        int(row["episodes"]),
                    )
            except (KeyError, TypeError, ValueError, AttributeError, csv.Error) as err:
                raise ValueError(
                    f"--agents-csv {path!r}: not a CSV written by {command} ({err!r})"
                ) from None
    return out


# --- checking command-line input (every bad value: exit 2, one line, no traceback) ---------
def _int_at_least(text: str, least: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an int of at least 1."""
    return _int_at_least(text, 1, "an integer of at least 1")


def non_negative_int(text: str) -> int:
    """An argparse type: an int of at least 0."""
    return _int_at_least(text, 0, "an integer >= 0")


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (not NaN, not inf)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def positive_int_list(text: str) -> list[int]:
    """An argparse type: comma-separated positive ints ('' for none)."""
    return [positive_int(part.strip()) for part in text.split(",") if part.strip()]


def writable_dir(path, flag: str):
    """Create folder ``path`` (and its parents) now, before any long run writes into it, or
    raise ValueError naming ``flag`` and why."""
    import os
    from pathlib import Path

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(
            f"{flag} {str(path)!r}: cannot create the folder ({err.strerror or err})"
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {str(path)!r}: the folder is not writable")
    return path


def writable_file(path, flag: str):
    """Check now that file ``path`` can be written (its folder is created), before a long
    run ends by failing to save, or raise ValueError naming ``flag`` and why."""
    import os
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a folder; give a file name")
    writable_dir(path.parent if str(path.parent) else ".", flag)
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{flag} {str(path)!r}: the file is not writable")
    return path


#: how much of an existing file ``check_overwrite`` reads to tell what it is
HEAD_BYTES = 2**20


def check_overwrite(path, flag: str, ours, what: str) -> None:
    """Check now, before any file is opened for writing, that writing ``path`` loses nothing
    castle-envs did not write: nothing is there, an empty file, or a regular file whose first
    ``HEAD_BYTES`` ``ours(head)`` takes for ``what`` (the kind of file the command writes);
    anything else (another kind of file, a folder, a FIFO or device) is refused with a
    ValueError naming ``flag``. ``writable_file``'s checks come first."""
    import os
    import stat

    writable_file(path, flag)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{flag} {str(path)!r} exists and is not a regular file")
    if info.st_size == 0:
        return
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if not ours(head):
        raise ValueError(
            f"{flag} {str(path)!r} exists and is not {what}; give another file name, or move "
            "that file away"
        )


def json_starting_with(*keys: str):
    """A recogniser (for ``check_overwrite``) of the JSON objects a command writes with one
    of ``keys`` first."""
    import re

    pattern = re.compile(rb'\{\s*"(' + "|".join(map(re.escape, keys)).encode() + rb')"\s*:')

    def ours(head: bytes) -> bool:
        return pattern.match(head) is not None

    return ours


def new_folder(path, flag: str, hint: str = "give a new or empty folder") -> None:
    """Check now that a new run may fill folder ``path`` (files of fixed names: config,
    progress, summary, checkpoints): it is absent or empty, else ValueError naming
    ``flag`` and ``hint``."""
    from pathlib import Path

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a file; give a folder")
    if path.is_dir() and any(path.iterdir()):
        raise ValueError(f"{flag} {str(path)!r} is not empty; {hint}")


# --- what the result files of evaluate, tournament and benchmark begin with ---------------------
#: a summary as they write it (``json.dumps(indent=...)`` of a dict whose first key is the
#: game, or a benchmark's deal set)
is_results_json = json_starting_with("game", "set")


def is_results_csv(head: bytes) -> bool:
    """A table as they write it: a header row of their first columns (an agent's rows, a
    variant's deals, or a benchmark's agent and references)."""
    import re

    return re.match(rb"(agent|difficulty|level|num_players|name,role),", head) is not None


def is_plot_png(head: bytes) -> bool:
    """A PNG that matplotlib wrote (it names itself in a text chunk near the start)."""
    return head.startswith(b"\x89PNG\r\n\x1a\n") and b"Matplotlib" in head[:4096]


def is_svg_chart(head: bytes) -> bool:
    """An SVG chart begun by ``svg_open``."""
    return head.startswith(b'<svg xmlns="http://www.w3.org/2000/svg" ')


#: a run's result files, by how their names end: what each must already be to be written over
RESULT_FILES = {
    ".json": (is_results_json, "a castle-envs results summary"),
    ".csv": (is_results_csv, "a castle-envs results table"),
    "-paired.csv": (is_results_csv, "a castle-envs results table"),
    "-deals.csv": (is_results_csv, "a castle-envs results table"),
    ".png": (is_plot_png, "a castle-envs plot"),
}


def check_outputs(folder, name: str, endings, flag: str, kinds: dict | None = None) -> None:
    """Check now, before a run, that writing its files ``name + ending`` in ``folder`` loses
    nothing castle-envs did not write (``check_overwrite``, with ``RESULT_FILES`` and
    ``kinds``' recognisers); an ending with no recogniser names a folder of game records,
    refused when something else holds its name."""
    import os

    known = {**RESULT_FILES, **(kinds or {})}
    for ending in endings:
        path = os.path.join(folder, name + ending)
        if ending in known:
            ours, what = known[ending]
            check_overwrite(path, flag, ours, what)
        elif os.path.lexists(path) and not os.path.isdir(path):
            raise ValueError(
                f"{flag}: {path!r} exists and is not a folder (the game records go there); "
                "give another --name, or move that file away"
            )


def check_file_names(folder, names, flag: str) -> None:
    """Check now that files named ``names`` fit in ``folder``'s file system (a name at most
    its ``NAME_MAX`` bytes, usually 255; a path at most ``PATH_MAX``), before a long run ends
    by failing to save; else ValueError naming ``flag``."""
    import os

    def limit(name: str, default: int) -> int:
        try:
            return os.pathconf(folder, name)
        except (OSError, ValueError):
            return default

    name_max, path_max = limit("PC_NAME_MAX", 255), limit("PC_PATH_MAX", 4096)
    for name in names:
        size = len(os.fsencode(name))
        if size > name_max:
            raise ValueError(
                f"{flag}: the file name {name[:40]!r}... is {size} bytes; the file "
                f"system of {str(folder)!r} takes at most {name_max}: give a shorter --name"
            )
        if len(os.fsencode(os.path.abspath(os.path.join(folder, name)))) >= path_max:
            raise ValueError(
                f"{flag}: the path of {name[:40]!r}... in {str(folder)!r} is longer than the "
                f"file system's {path_max} bytes: give a shorter --out or --name"
            )


def read_json(path, flag: str):
    """The JSON document in file ``path`` (``core.files``: a regular file, at most
    ``MAX_BYTES`` large and ``MAX_DEPTH`` deep); ValueError naming ``flag``, the file and
    why."""
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise ValueError(
            f"{flag} {str(path)!r}: "
            + (
                "a folder, not a file"
                if path.is_dir()
                else "not a regular file"
                if path.exists()
                else "no such file"
            )
        )
    from castle_envs.core.files import parse_json, read_bytes

    # UnreadableFile is a ValueError whose one line names the file (and the flag) already
    return parse_json(read_bytes(path, f"{flag} file"), f"{flag} {str(path)!r}")


def json_object(path) -> dict:
    """The JSON object in file ``path`` (a regular file, nested a few levels at most:
    ``core.files.read_json``); OSError, ValueError (not JSON) or TypeError (not an object)
    as they come, for the caller to word."""
    from castle_envs.core.files import read_json

    value = read_json(path, allow_nan=True)
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def read_json_lines(path, flag: str, keys=()):
    """The JSON objects, one a line, of file ``path``, each holding ``keys``; ValueError
    naming ``flag``, the file, the line and why (``core.files.parse_json``: nested at most
    its ``MAX_DEPTH``)."""
    from pathlib import Path

    from castle_envs.core.files import parse_json

    path = Path(path)
    if not path.is_file():
        raise ValueError(
            f"{flag} {str(path)!r}: "
            + (
                "a folder, not a file"
                if path.is_dir()
                else "not a regular file"
                if path.exists()
                else "no such file"
            )
        )
    records = []
    with open(path, encoding="utf-8", errors="strict") as f:
        try:
            for number, text in enumerate(f, 1):
                if not text.strip():
                    continue
                record = parse_json(text, f"{flag} {str(path)!r} line {number}")
                missing = [k for k in keys if not isinstance(record, dict) or k not in record]
                if missing:
                    raise ValueError(
                        f"{flag} {str(path)!r} line {number}: expected a JSON "
                        f"object with {', '.join(keys)}"
                    )
                records.append(record)
        except UnicodeDecodeError:
            raise ValueError(f"{flag} {str(path)!r}: not a text file") from None
    return records


# --- the studies' dependency-free SVG plots -------------------------------------------------
#: the advance of one character, in em, that the SVG plots lay text out with: DejaVu Sans'
#: widest common glyphs (the usual sans-serif on Linux; Helvetica and Arial are narrower), so
#: a label placed with it stays inside the picture whatever the viewer's font
SVG_ADVANCE = 0.64


def svg_open(w: float, h: float, title: str, title_y: float) -> list[str]:
    """An SVG chart's opening lines: the root element (``w`` by ``h``), a white background
    and ``title`` centred at height ``title_y``."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h}" '
        f'viewBox="0 0 {w:.0f} {h}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{w / 2:.1f}" y="{title_y}" text-anchor="middle" font-size="13">{title}</text>',
    ]


def svg_rate_grid(x0: float, x1: float, y) -> list[str]:
    """Grid lines from ``x0`` to ``x1`` at the rates 0, 25, 50, 75 and 100 %, labelled at
    the left (``y(rate)``: the height of a rate)."""
    out = []
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{x0}" x2="{x1:.0f}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:.0%}</text>')
    return out


def svg_text_width(text: str, size: float = 11) -> float:
    """The width a plot reserves for ``text`` at ``size`` px."""
    return len(text) * size * SVG_ADVANCE


def svg_legend(names: list[str], colours: dict, x: float, y: float, size: float = 11) -> list[str]:
    """A row of dot + name legend entries from ``x`` at baseline ``y``, each spaced by its
    name's width; returns the SVG elements."""
    out = []
    for name in names:
        colour = colours.get(name, "#636363")
        out.append(f'<circle cx="{x + 4:.1f}" cy="{y - 4:.1f}" r="3.5" fill="{colour}"/>')
        out.append(f'<text x="{x + 12:.1f}" y="{y:.1f}">{name}</text>')
        x += 12 + svg_text_width(name, size) + 18
    return out


def svg_legend_width(names: list[str], size: float = 11) -> float:
    return sum(12 + svg_text_width(n, size) + 18 for n in names)


def parse_budget(text: str) -> tuple[int | None, float | None]:
    """'20000' / '20000n' -> nodes; '10s' / '0.5s' -> seconds."""
    text = str(text).strip().lower()
    try:
        if text.endswith("s"):
            seconds = float(text[:-1])
            if seconds > 0:
                return None, seconds
        else:
            nodes = int(text[:-1] if text.endswith("n") else text)
            if nodes > 0:
                return nodes, None
    except ValueError:
        pass
    raise ValueError(
        f"--budget must be a positive node count (20000) or seconds (10s), got {text!r}"
    )


def rules_of(args, table: dict) -> dict:
    """The rules options a ``table`` (``RULE_CHOICES``) names, as the command line set them."""
    return {name: getattr(args, name) for name in table}
