"""``castle-envs replay FILE``: watch a recorded game in the terminal and in a browser.

    castle-envs evaluate --game castle-siege --agent best --episodes 100 --record 3
    castle-envs replay results/evaluate-castle-siege-very_hard-seed0-n100-records/*seed0.json

The record (``records.py``) is replayed and checked move by move (a record whose actions are
illegal, whose positions or outcome differ from the replay's, is refused, naming the step).
The terminal shows every move in words with what it set off (``--boards``: the board before
each move; ``--delay S``: one move every S seconds). The HTML page (``--html``, by default
FILE with ``.html``) is self-contained: one picture per position (SVG), a slider, play and
step buttons, the arrow keys, each move in words and its events; it opens in any browser
without a server. It is never written over the record itself, nor over an existing file
that is not such a page.
"""

from __future__ import annotations

import html
import json
import os
import sys
import time

from castle_envs.registry import get_game

from .records import load, replay


def add_parser(sub):
    p = sub.add_parser("replay", help="replay a game record in the terminal and as an HTML page")
    p.add_argument(
        "file", help="a game record (JSON) written by evaluate/tournament --record or play --save"
    )
    p.add_argument(
        "--html",
        default=None,
        metavar="PATH",
        help="where to write the HTML viewer (default: FILE with .html); never the "
        "record itself, nor an existing file that is not a replay page",
    )
    p.add_argument("--no-html", action="store_true", help="write no HTML page")
    p.add_argument("--boards", action="store_true", help="print the board before every move")
    p.add_argument(
        "--delay",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds between moves in the terminal (implies --boards)",
    )
    p.add_argument("--quiet", action="store_true", help="check the record, print only a summary")
    p.set_defaults(run=run)


def _render(game: str):
    return get_game(game).load_renderer()


def replay_steps(record: dict) -> list:
    """Every step of the record, checked (``RecordError`` when it does not replay)."""
    return list(replay(record))


def _who(record: dict, state) -> str:
    agents = record["agents"]
    if len(agents) == 1:
        return ""
    seat = state.current_player
    return f"player_{seat} ({agents[seat]}): " if 0 <= seat < len(agents) else ""


def describe(record: dict) -> str:
    variant = ", ".join(f"{k} {v}" for k, v in record["variant"].items())
    options = "".join(f", {k}={v}" for k, v in record["env_options"].items())
    seed = "unseeded deal" if record.get("seed") is None else f"deal seed {record['seed']}"
    agents = (
        record["agents"][0]
        if len(record["agents"]) == 1
        else ", ".join(f"player_{i}: {a}" for i, a in enumerate(record["agents"]))
    )
    return (
        f"{get_game(record['game']).title} ({variant}{options}), {seed}; {agents}; "
        f"{len(record['actions'])} moves; from {record.get('source', '?')}"
    )


def outcome_text(record: dict, final) -> str:
    returns = record["outcome"]["returns"]
    if not final.is_terminal():
        return "unfinished game"
    if len(returns) == 1:
        return "won" if returns[0] > 0 else "lost"
    winners = [f"player_{i}" for i, r in enumerate(returns) if r == max(returns)]
    return (
        ("winner: " if len(winners) == 1 else "shared: ")
        + ", ".join(winners)
        + " (returns "
        + ", ".join(f"{r:+g}" for r in returns)
        + ")"
    )


def run(args) -> int:
    if args.delay < 0:
        raise ValueError(f"--delay must be >= 0, got {args.delay}")
    if not os.path.exists(args.file):
        raise FileNotFoundError(f"no such file: {args.file}")
    page = None if args.no_html else page_path(args.file, args.html)
    record = load(args.file)
    steps = replay_steps(record)
    render = _render(record["game"])
    start = steps[0].before if steps else _start(record)
    final = steps[-1].after if steps else start
    out = sys.stdout
    print(describe(record), file=out)
    if not args.quiet:
        boards = args.boards or args.delay > 0
        if not boards:
            print(render.render_ansi(start), file=out)
        for step in steps:
            if boards:
                print(render.render_ansi(step.before), file=out)
            notes = render.events(step.before, step.after)
            print(
                f"{step.index + 1:>4}. {_who(record, step.before)}{step.move}"
                + (f"  [{'; '.join(notes)}]" if notes else ""),
                file=out,
                flush=True,
            )
            if args.delay:
                time.sleep(args.delay)
        print(render.render_ansi(final), file=out)
    print(
        f"replayed {len(steps)} moves, every position as recorded: {outcome_text(record, final)}",
        file=out,
    )
    if page is not None:
        from .journal import write_atomic

        write_atomic(page, html_page(record, steps))
        print(
            f"wrote {page} ({os.path.getsize(page) / 1e6:.1f} MB): open it in a browser", file=out
        )
    return 0


#: what marks a page this command wrote (its ``<head>``), so that it may be written over
GENERATOR = '<meta name="generator" content="castle-envs replay">'


def page_path(record_path: str, html: str | None) -> str:
    """Where the HTML page goes (``--html``, by default the record's name with ``.html``),
    checked before anything is replayed: never the record itself, and never over an
    existing file that is not a page this command wrote (``is_replay_page``)."""
    from .common import writable_file

    path = html or os.path.splitext(record_path)[0] + ".html"
    flag = "--html" if html else "the HTML page"
    if os.path.exists(path) and os.path.samefile(path, record_path):
        raise ValueError(
            f"{flag} {path!r} is the game record itself; give another --html PATH (or --no-html)"
        )
    writable_file(path, flag)
    if os.path.exists(path) and not is_replay_page(path):
        raise ValueError(
            f"{flag} {path!r} exists and is not a replay page castle-envs wrote; "
            "give another --html PATH, or move that file away"
        )
    return path


def is_replay_page(path: str) -> bool:
    """Is ``path`` a regular file that begins as the pages this command writes (the
    generator mark, or the title of pages written before the mark)?"""
    import re
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return head.startswith("<!DOCTYPE html>") and (
        GENERATOR in head or re.search(r"<title>[^<]* replay</title>", head) is not None
    )


def _start(record):
    from .records import start_state

    return start_state(record)


# --- the HTML viewer ----------------------------------------------------------------------
def frames(record: dict, steps: list) -> tuple[list[str], list[list[int]]]:
    """Every position's SVG, coded as indices into one table of distinct SVG lines (most of
    a picture does not change from one move to the next, so the page stays small)."""
    render = _render(record["game"])
    states = [steps[0].before if steps else _start(record)] + [s.after for s in steps]
    table: dict[str, int] = {}
    coded = []
    for state in states:
        lines = render.build_scene(state).to_svg().split("\n")
        coded.append([table.setdefault(line, len(table)) for line in lines])
    return list(table), coded


def script_json(data) -> str:
    """``data`` as JSON safe to put inside a ``<script>`` element: ``<``, ``>`` and ``&`` are
    written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (JSON reads them back the same), so no
    string in it (an agent name holding ``</script>`` or ``<!--``) can end the element early
    or switch the HTML parser into a comment-like script state. U+2028/U+2029 are escaped
    too, for old JavaScript parsers."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def html_page(record: dict, steps: list) -> str:
    from castle_envs.core.svg import font_face_css

    render = _render(record["game"])
    lines, coded = frames(record, steps)
    moves = [
        {"text": f"{_who(record, s.before)}{s.move}", "events": render.events(s.before, s.after)}
        for s in steps
    ]
    final = steps[-1].after if steps else _start(record)
    data = {"record": record, "lines": lines, "frames": coded, "moves": moves}
    payload = script_json(data)
    title = f"{get_game(record['game']).title} replay"
    return _TEMPLATE.format(
        title=html.escape(title),
        generator=GENERATOR,
        font_css=font_face_css(),
        summary=html.escape(describe(record)),
        outcome=html.escape(outcome_text(record, final)),
        payload=payload,
        icons_json=script_json(ICONS),
        **{f"icon_{k}": v for k, v in ICONS.items()},
    )


def _icon(path: str) -> str:
    return f'<svg viewBox="0 0 16 16" aria-hidden="true"><path d="{path}"/></svg>'


#: the control buttons' pictures, inline SVG: symbols such as U+23EE/U+23ED (skip to start
#: / end) are missing from many fonts and showed as empty boxes
ICONS = {
    "first": _icon("M2 2h2v12H2zM14 2v12L5 8z"),
    "prev": _icon("M8 2v12L1 8zM15 2v12L8 8z"),
    "play": _icon("M4 2v12l10-6z"),
    "pause": _icon("M3 2h4v12H3zM9 2h4v12H9z"),
    "next": _icon("M1 2v12l7-6zM8 2v12l7-6z"),
    "last": _icon("M2 2v12l9-6zM12 2h2v12h-2z"),
}


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
{generator}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
{font_css}
body {{ margin: 0; font-family: CastleEnvsSans, 'Helvetica Neue', Arial, sans-serif;
       background: #12301f; color: #eef2ec; }}
header {{ padding: 10px 16px; background: #0c2316; }}
header h1 {{ margin: 0 0 4px; font-size: 20px; }}
header p {{ margin: 0; font-size: 14px; color: #b9ccbf; }}
main {{ display: flex; gap: 16px; padding: 12px 16px; align-items: flex-start; }}
#view {{ flex: 1 1 auto; min-width: 0; }}
#frame svg {{ width: 100%; height: auto; display: block; border-radius: 6px; }}
#controls {{ display: flex; gap: 8px; align-items: center; margin: 10px 0 6px; }}
#controls button {{ font-size: 16px; min-width: 40px; padding: 4px 8px; cursor: pointer;
                    line-height: 0; }}
#controls button svg {{ width: 18px; height: 18px; fill: currentColor; }}
#slider {{ flex: 1 1 auto; }}
#where {{ font-variant-numeric: tabular-nums; min-width: 120px; text-align: right; }}
#current {{ min-height: 44px; font-size: 15px; }}
#current .events {{ color: #f2cf5b; font-size: 14px; }}
aside {{ flex: 0 0 340px; max-height: calc(100vh - 110px); overflow-y: auto;
        background: #0c2316; border-radius: 6px; }}
aside ol {{ margin: 0; padding: 6px 6px 6px 44px; font-size: 13px; }}
aside li {{ padding: 3px 4px; cursor: pointer; border-radius: 4px; }}
aside li:hover {{ background: #1d4a31; }}
aside li::marker {{ color: #b9ccbf; }}
aside li.now {{ background: #d6aa28; color: #111; }}
/* the number sits outside the item's box, on the list's dark background */
aside li.now::marker {{ color: #f2cf5b; font-weight: bold; }}
aside li .events {{ color: #e8c451; display: block; }}
aside li.now .events {{ color: #3a2a00; }}
aside .start {{ padding: 6px 10px; font-size: 13px; cursor: pointer; }}
aside .start.now {{ background: #d6aa28; color: #111; }}
@media (max-width: 900px) {{ main {{ flex-direction: column; }}
                            aside {{ flex: none; width: 100%; }} }}
</style></head>
<body>
<header><h1>{title}</h1><p>{summary}</p><p>Outcome: {outcome}</p></header>
<main>
<div id="view">
  <div id="frame"></div>
  <div id="controls">
    <button id="first" title="start (Home)" aria-label="start">{icon_first}</button>
    <button id="prev" title="previous move (left arrow)" aria-label="back">{icon_prev}</button>
    <button id="play" title="play / pause (space)" aria-label="play">{icon_play}</button>
    <button id="next" title="next move (right arrow)" aria-label="next">{icon_next}</button>
    <button id="last" title="end (End)" aria-label="end">{icon_last}</button>
    <input id="slider" type="range" min="0" value="0" step="1">
    <span id="where"></span>
  </div>
  <div id="current"></div>
</div>
<aside><div class="start" id="start">start: the deal</div><ol id="moves"></ol></aside>
</main>
<script type="application/json" id="data">{payload}</script>
<script>
(function () {{
  var data = JSON.parse(document.getElementById("data").textContent);
  var ICONS = {icons_json};
  var n = data.frames.length - 1, at = 0, timer = null;
  var frame = document.getElementById("frame"), slider = document.getElementById("slider");
  var where = document.getElementById("where"), current = document.getElementById("current");
  var list = document.getElementById("moves"), start = document.getElementById("start");
  slider.max = n;
  function esc(s) {{
    var d = document.createElement("div"); d.textContent = s; return d.innerHTML;
  }}
  data.moves.forEach(function (m, i) {{
    var li = document.createElement("li");
    li.innerHTML = esc(m.text) + (m.events.length ? '<span class="events">' +
      esc(m.events.join("; ")) + "</span>" : "");
    li.onclick = function () {{ show(i + 1); }};
    list.appendChild(li);
  }});
  start.onclick = function () {{ show(0); }};
  function show(k) {{
    at = Math.max(0, Math.min(n, k));
    frame.innerHTML = data.frames[at].map(function (j) {{ return data.lines[j]; }}).join("\\n");
    slider.value = at;
    where.textContent = "move " + at + " of " + n;
    var m = data.moves[at - 1];
    current.innerHTML = at === 0 ? "The deal, before the first move." :
      "Move " + at + ": " + esc(m.text) + (m.events.length ?
        '<div class="events">' + esc(m.events.join("; ")) + "</div>" : "");
    var items = list.children;
    for (var i = 0; i < items.length; i++) items[i].className = (i === at - 1) ? "now" : "";
    start.className = at === 0 ? "start now" : "start";
    var now = at === 0 ? start : items[at - 1];
    if (now && now.scrollIntoView) now.scrollIntoView({{block: "nearest"}});
  }}
  function play() {{
    if (timer) {{
      clearInterval(timer); timer = null;
      document.getElementById("play").innerHTML = ICONS.play;
      return;
    }}
    if (at >= n) show(0);
    document.getElementById("play").innerHTML = ICONS.pause;
    timer = setInterval(function () {{ if (at >= n) play(); else show(at + 1); }}, 700);
  }}
  document.getElementById("first").onclick = function () {{ show(0); }};
  document.getElementById("prev").onclick = function () {{ show(at - 1); }};
  document.getElementById("next").onclick = function () {{ show(at + 1); }};
  document.getElementById("last").onclick = function () {{ show(n); }};
  document.getElementById("play").onclick = play;
  slider.oninput = function () {{ show(parseInt(slider.value, 10)); }};
  // a key is handled here once, wherever the focus is: the browser's own action is
  // stopped, else a focused slider steps a second time (and the page scrolls)
  document.addEventListener("keydown", function (e) {{
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowRight") show(at + 1);
    else if (e.key === "ArrowLeft") show(at - 1);
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(n);
    else if (e.key === " ") play();
    else return;
    e.preventDefault();
  }});
  show(0);
}})();
</script>
</body></html>
"""
