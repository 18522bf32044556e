"""Generates the site's pages from the repository at build time (mkdocs-gen-files).

Nothing here is a copy kept by hand: every run reads the sources again.

- ``environments/<game>.md`` for each game of ``castle_envs.registry.GAMES``: its env
  module's docstring (converted to Markdown), the live spaces and action layout of a freshly
  made env, a frame drawn by ``env.render()`` in ``rgb_array`` mode (``<game>.png``), and a
  version history from the env's version and ``CHANGELOG.md``;
- ``rules/<game>.md``: the game's ``castle_envs/<game>/RULES.md``;
- ``models/<name>/README.md`` (each model card, at the path its relative links expect) and
  ``models/index.md`` (the list of cards);
- ``changelog.md``: ``CHANGELOG.md``;
- ``architecture.md``: ``ARCHITECTURE.md`` (layers, where code lives, adding a game);
- ``source/<script>.md``: the example training scripts of ``experiments/``, whole.

The build needs the ``docs`` extra (it imports castle_envs to make the envs).
"""

from __future__ import annotations

import ast
import io
import re
import struct
import textwrap
import zlib
from pathlib import Path

import mkdocs_gen_files
import numpy as np

from castle_envs.registry import GAMES

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ("ppo_vec", "rllib_castle_rooms")  # example scripts shown whole (source/<name>.md)
FRAME_MOVES = 12  # random legal moves played (seeded) before the frame is drawn


# --- docstrings to Markdown ---------------------------------------------------------------------
BOLD_LEAD = re.compile(r"^\*\*([^*]+?)\.?\*\*\s*(.*)$")


def docstring_markdown(doc: str, level: str = "##") -> tuple[str, str]:
    """(summary line, body as Markdown) of a module docstring.

    The env docstrings mix three styles, each turned into Markdown here: paragraphs led by
    ``**Title.**`` become a heading ``Title`` and the paragraph; a line followed at once by
    an indented block (``Observation`` / ``    text``) becomes a heading and the block,
    dedented; any other indented block after a blank line is Python code and is fenced.
    Fenced blocks and tables pass through unchanged.
    """
    lines = doc.strip("\n").splitlines()
    summary, lines = lines[0].strip(), lines[1:]
    out: list[str] = []
    i, fenced = 0, False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
            i += 1
            continue
        if fenced:
            out.append(line)
            i += 1
            continue
        indented = line.startswith("    ") and line.strip()
        previous_blank = not out or not out[-1].strip()
        if indented and previous_blank:
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["```python", textwrap.dedent("\n".join(block)), "```", ""]
            continue
        follows = i + 1 < len(lines) and lines[i + 1].startswith("    ") and lines[i + 1].strip()
        if line.strip() and not line.startswith(" ") and previous_blank and follows:
            title, _, aside = line.strip().partition(" (")
            out += ["", f"{level} {title}", ""]
            if aside:
                out += [f"*({aside}*", ""]
            i += 1
            block = []
            while i < len(lines) and lines[i].startswith("    "):
                block.append(lines[i])
                i += 1
            out += [textwrap.dedent("\n".join(block)), ""]
            continue
        lead = BOLD_LEAD.match(line)
        if lead and previous_blank:
            out += [f"{level} {lead.group(1)}", ""]
            if lead.group(2):
                out.append(lead.group(2))
            i += 1
            continue
        out.append(line)
        i += 1
    return summary, "\n".join(out).strip() + "\n"


def module_docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


# --- frames ---------------------------------------------------------------------------------------
def png_bytes(frame: np.ndarray) -> bytes:
    """A PNG of an RGB uint8 frame: Pillow's (palette, small) when installed, else a plain
    zlib PNG written here."""
    try:
        from PIL import Image
    except ImportError:
        height, width, _ = frame.shape
        raw = b"".join(b"\x00" + frame[row].tobytes() for row in range(height))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (
                struct.pack(">I", len(data))
                + kind
                + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
            )

        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b"")
        )
    image = Image.fromarray(frame).quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def live_env(spec, render_mode: str | None = "rgb_array"):
    """A fresh env of ``spec`` (AEC games: 3 players), reset with seed 0."""
    kwargs = {} if spec.api == "gymnasium" else {"num_players": 3}
    env = spec.make(render_mode=render_mode, **kwargs)
    env.reset(seed=0)
    return env


def play_some(env, spec, moves: int) -> int:
    """Play up to ``moves`` seeded random legal moves; returns how many were played."""
    rng = np.random.default_rng(0)
    played = 0
    if spec.api == "gymnasium":
        mask = env.action_masks()
        while played < moves:
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            played += 1
            if terminated or truncated:
                env.reset(seed=0)
                break
            mask = info["action_mask"]
        return played
    for _agent in env.agent_iter(max_iter=moves):
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        played += 1
    return played


# --- the environment pages ------------------------------------------------------------------------
def code(text) -> str:
    return "`" + str(text).replace("`", "'") + "`"


def action_layout(module_name: str) -> list[tuple[str, int, int, str]]:
    """(move kind, first id, last id, an example) for each run of one kind in the table."""
    import importlib

    table = importlib.import_module(f"castle_envs.{module_name}.actions").ACTIONS
    runs: list[list] = []
    for i, move in enumerate(table.moves):
        kind = type(move).__name__
        if runs and runs[-1][0] == kind:
            runs[-1][2] = i
        else:
            runs.append([kind, i, i, str(move)])
    return [tuple(r) for r in runs]


def changelog_sections() -> list[tuple[str, list[str]]]:
    """(release heading, its bullets joined to one line each) of CHANGELOG.md."""
    sections: list[tuple[str, list[str]]] = []
    bullet: list[str] | None = None
    for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            sections.append((line[3:].replace("[", "").replace("]", "").strip(), []))
            bullet = None
        elif not sections:
            continue
        elif line.startswith("- "):
            bullet = [line[2:].strip()]
            sections[-1][1].append(bullet)  # type: ignore[arg-type]
        elif line.startswith("  ") and bullet is not None:
            bullet.append(line.strip())
        elif not line.startswith("  "):
            bullet = None
    return [(title, [" ".join(b) for b in bullets]) for title, bullets in sections]


def mentions(text: str, spec) -> bool:
    names = [spec.title, spec.slug, spec.slug.replace("-", "_"), spec.slug.replace("-", " ")]
    if spec.gym_id:
        names.append(spec.gym_id)
    return any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text, re.IGNORECASE) for n in names)


def version_history(spec, version: str) -> str:
    out = [
        "## Version history",
        "",
        f"- **{version}** (castle-envs 0.1.0): the first version of the environment.",
    ]
    for title, bullets in changelog_sections():
        if title.startswith("0.1.0"):
            continue
        own = [b for b in bullets if mentions(b, spec)]
        if own:
            out += [
                "",
                f"Changes since, in *{title}* ([changelog](../changelog.md)), "
                f"that name {spec.title} (the environment keeps the id {version}):",
                "",
            ]
            out += [f"- {b}" for b in own]
    return "\n".join(out) + "\n"


def env_page(spec) -> tuple[str, bytes]:
    module_name = spec.env_class.split(":")[0].split(".")[1]
    summary, body = docstring_markdown(
        module_docstring(ROOT / "castle_envs" / module_name / "env.py")
    )
    env = live_env(spec)
    agent = None
    if spec.api == "gymnasium":
        version = spec.gym_id.rsplit("-", 1)[1]
        action_space, observation_space = env.action_space, env.observation_space
        make = f'gymnasium.make("{spec.gym_id}")'
        importer = "import gymnasium, castle_envs"
        modes = env.metadata["render_modes"]
    else:
        module = env.metadata["name"]
        version = module.rsplit("_", 1)[1]
        agent = env.possible_agents[0]
        action_space, observation_space = env.action_space(agent), env.observation_space(agent)
        make = f"{module}.env()"
        importer = f"from castle_envs import {module}"
        modes = env.metadata["render_modes"]
    played = play_some(env, spec, FRAME_MOVES)
    frame = env.render()
    env.close()
    image = f"{module_name}.png"
    variants = ", ".join(
        code(v) + (" (default)" if i == 0 and spec.api == "gymnasium" else "")
        for i, v in enumerate(spec.variants)
    )
    players = "" if spec.api == "gymnasium" else " (frame and spaces below: 3 players)"
    lines = [
        f"# {spec.title}",
        "",
        f"*{summary}*",
        "",
        f"![{spec.title}: env.render() in rgb_array mode]({image})",
        "",
        f'/// caption\n`env.render()` (`render_mode="rgb_array"`, a {frame.shape[1]}x'
        f"{frame.shape[0]} frame) after `reset(seed=0)` and {played} seeded random legal "
        f"moves, drawn when this page was built.\n///",
        "",
        "| | |",
        "|---|---|",
        f"| API | {'Gymnasium' if spec.api == 'gymnasium' else 'PettingZoo AEC'} |",
        f"| Import | {code(importer)} |",
        f"| Make | {code(make)} |",
        f"| Action space | {code(action_space)}{' (for each agent)' if agent else ''} |",
        f"| Observation space | {code(observation_space)} |",
        f"| Variants | {code(spec.variant_arg)}: {variants}{players} |",
        f"| Render modes | {', '.join(code(m) for m in modes)} |",
        f"| Version | {code(version)} |",
        f"| Rules | [{spec.title}: the rules as implemented](../rules/{module_name}.md) |",
        "",
        "## Description",
        "",
        "This section and the ones after it up to *Action space* are the env module's "
        f"docstring ({code(spec.env_class.split(':')[0])}), read when this page was built.",
        "",
        body,
        "",
        "## Action space",
        "",
        f"{code(action_space)}, masked: only the moves legal in the position are allowed. "
        + (
            'The mask is `info["action_mask"]` and `env.unwrapped.action_masks()`. '
            if spec.api == "gymnasium"
            else 'The mask is `observation["action_mask"]` and `info["action_mask"]` of the '
            "agent to act. "
        )
        + f"Every id decodes to a move (`castle_envs.{module_name}.decode_action`, "
        f"`encode_action`). The layout, read from the action table "
        f"(`castle_envs.{module_name}.actions.ACTIONS`):",
        "",
        "| move kind | ids | count | first of its kind |",
        "|---|---|---|---|",
    ]
    for kind, first, last, example in action_layout(module_name):
        ids = str(first) if first == last else f"{first}–{last}"
        lines.append(f"| {code(kind)} | {ids} | {last - first + 1} | {code(example)} |")
    lines += [
        "",
        "## Observation space",
        "",
        f"{code(observation_space)}; the layout is documented in "
        f"`castle_envs.{module_name}.observation`.",
        "",
        version_history(spec, version),
        "## API",
        "",
        f"The env class: [`{spec.env_class.replace(':', '.')}`]"
        f"(../api/envs.md#{spec.env_class.replace(':', '.')}).",
        "",
    ]
    return "\n".join(lines), png_bytes(frame)


def game_folder(spec) -> str:
    return spec.env_class.split(":")[0].split(".")[1]


def write(path: str, text: str, source: Path | None = None) -> None:
    with mkdocs_gen_files.open(path, "w") as handle:
        handle.write(text)
    if source is not None:
        mkdocs_gen_files.set_edit_path(path, source.relative_to(ROOT).as_posix())


def leaderboard_page() -> str:
    """``leaderboard.md``: every benchmark report in ``docs/leaderboard/*.json``, one table a
    deal set (or multi-player game), best first, and the deal sets' own figures."""
    import json

    reports = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "docs" / "leaderboard").glob("*.json"))
    ]
    out = [
        "# Leaderboard",
        "",
        "Every entry is a `castle-envs benchmark` report ([Benchmark](benchmark.md)): its JSON "
        "file in `docs/leaderboard/` is collected here when the site is built. A shipped "
        "agent's entry comes from its per-deal results stored with the deal set "
        "(`--reference NAME`: the games were played once, by the command the set's index "
        "names); any other agent's entry is a run of the command. To add one, run the full "
        "protocol and add the JSON file it writes to `docs/leaderboard/`.",
        "",
        "Win rates are on the set's deals with their 95% Wilson interval; *of proven* is the "
        "share of the deals proven winnable that the agent won; *against best* is the paired "
        "difference with the set's `best` on the same deals (Newcombe's 95% interval).",
    ]
    solitaire = [r for r in reports if "ceiling" in r]
    for name in sorted({r["set"] for r in solitaire}):
        rows = sorted((r for r in solitaire if r["set"] == name), key=lambda r: -r["win_rate"])
        widest = max(rows, key=lambda r: r["episodes"])  # the ceiling of the most deals
        c = widest["ceiling"]
        out += [
            "",
            f"## {name}",
            "",
            f"Deals {widest['deals'][0]:,}–{widest['deals'][1]:,}: {c['proven_won']:,} "
            f"proven winnable, {c['proven_lost']:,} proven lost (winnable share "
            f"[{c['winnable_low']:.1%}, {c['winnable_high']:.1%}]). An entry marked *quick* "
            "played the first 200 of them only.",
            "",
            "| agent | deals | win rate [95%] | of proven | against best | entry |",
            "|---|---|---|---|---|---|",
        ]
        for r in rows:
            best = next((p for p in r["paired"] if p["reference"] == "best"), None)
            against = (
                f"{100 * best['win_diff']['mean']:+.2f} [{100 * best['win_diff']['low']:+.2f}, "
                f"{100 * best['win_diff']['high']:+.2f}]"
                if best
                else "—"
            )
            share = r["ceiling"]["share_of_proven"]
            kind = "stored results" if r.get("reference") else "run"
            out.append(
                f"| `{r['agent']}` | {r['episodes']:,} ({r['protocol']}) | "
                f"{r['win_rate']:.2%} [{r['win_low']:.2%}, {r['win_high']:.2%}] | "
                f"{'—' if share is None else f'{share:.3f}'} | {against} | {kind} |"
            )
    multi = [r for r in reports if "matches" in r]
    for game, players in sorted({(r["game"], r["players"]) for r in multi}):
        rows = [r for r in multi if (r["game"], r["players"]) == (game, players)]
        opponents = sorted({m["opponent"] for r in rows for m in r["matches"]})
        out += [
            "",
            f"## {game}, {players} players",
            "",
            "Each agent against each reference opponent, every deal played with the agent in "
            "every seat (its win rate with seats rotated); the rating is the Bradley–Terry "
            "rating (Elo scale) of its tournament with the references.",
            "",
            "| agent | deals | " + " | ".join(f"against `{o}`" for o in opponents) + " | rating |",
            "|---|---|" + "---|" * len(opponents) + "---|",
        ]
        for r in rows:
            cells = []
            for o in opponents:
                m = next((m for m in r["matches"] if m["opponent"] == o), None)
                cells.append(
                    "—"
                    if m is None
                    else f"{m['win_rate']:.1%} [{m['win_low']:.1%}, {m['win_high']:.1%}]"
                )
            me = next(x for x in r["ratings"] if x["agent"] == r["agent"])
            out.append(
                f"| `{r['agent']}` | {r['episodes']:,} ({r['protocol']}) | "
                + " | ".join(cells)
                + f" | {me['rating']:+.0f} [{me['rating_low']:+.0f}, {me['rating_high']:+.0f}] |"
            )
    return "\n".join(out) + "\n"


def main() -> None:
    write("leaderboard.md", leaderboard_page(), ROOT / "docs" / "leaderboard")
    for spec in GAMES.values():
        folder = game_folder(spec)
        page, png = env_page(spec)
        write(f"environments/{folder}.md", page, ROOT / "castle_envs" / folder / "env.py")
        with mkdocs_gen_files.open(f"environments/{folder}.png", "wb") as handle:
            handle.write(png)
        rules = ROOT / "castle_envs" / folder / "RULES.md"
        write(f"rules/{folder}.md", rules.read_text(encoding="utf-8"), rules)

    changelog = ROOT / "CHANGELOG.md"
    write("changelog.md", changelog.read_text(encoding="utf-8"), changelog)
    architecture = ROOT / "ARCHITECTURE.md"
    write("architecture.md", architecture.read_text(encoding="utf-8"), architecture)

    for script in SCRIPTS:
        path = ROOT / "experiments" / f"{script}.py"
        write(
            f"source/{script}.md",
            f"# experiments/{script}.py\n\nThe script as it is in the repository (installed "
            f"as `castle_envs.experiments.{script}`), shown when this site was built.\n\n"
            f"````python\n{path.read_text(encoding='utf-8').rstrip()}\n````\n",
            path,
        )

    index = [
        "# Shipped models",
        "",
        "Each model directory under `models/` has a card (its README), shown here. Load "
        "one as an agent with `--agent model:models/NAME` (see "
        "[Evaluate an agent](../howto/evaluate.md)).",
        "",
        "| model | card |",
        "|---|---|",
    ]
    for card in sorted((ROOT / "models").glob("*/README.md")):
        name = card.parent.name
        text = card.read_text(encoding="utf-8")
        title = next(
            (line[2:].strip() for line in text.splitlines() if line.startswith("# ")), name
        )
        write(f"models/{name}/README.md", text, card)
        index.append(f"| [`{name}`]({name}/README.md) | {title} |")
    write("models/index.md", "\n".join(index) + "\n")


main()
