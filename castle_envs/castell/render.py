"""Castell's pictures: a text table (``ansi``) and the board (``rgb_array``).

The picture: the seven regions (the skill the wheel offers there, the pawns, the castellers
by number, the two local performance tiles and the tokens on them), the festival calendar,
and each player's score by category, skills, tokens, free castellers and tower, level by
level, casteller by casteller. Everything in Castell is public.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.scene import BLACK, GOLD, MUTED, PALE, WHITE, Color, Scene, scene_renderers
from . import data as D
from .rules import NR, State, level_text

#: what the notation means (a terminal player prints it)
LEGEND = (
    "Castellers are numbered 1-10: 'castellers 3x2 5' is two 3s and a 5. A tower level "
    "'3x4+1x5' is three 4s and a 5 (Mix), bottom level first; 'add level 3x4' puts three "
    "4s on the tower. A turn takes up to four actions (move, recruit one or two "
    "castellers from your pawn's region, train a skill the wheel offers there or in the "
    "All Regions window, one special action) and free tower edits, then end turn. "
    "Regions: " + ", ".join(f"{a} {n}" for a, n in zip(D.REGION_ABBR, D.REGIONS)) + "."
)


def _numbers(counts: Sequence[int]) -> str:
    return (
        " ".join(f"{s + 1}" + (f"x{c}" if c > 1 else "") for s, c in enumerate(counts) if c) or "-"
    )


def render_ansi(state: State) -> str:
    lines = []
    if state.is_terminal():
        lines.append("Castell - game over")
    else:
        lines.append(
            f"Castell - round {state.round}/{D.ROUNDS}, player_{state.current_player} "
            f"to act (taken: "
            + ", ".join(
                name
                for name, done in (
                    ("move", state.moved),
                    ("recruit", state.recruits),
                    ("train", state.trained),
                    ("special", state.specialed),
                )
                if done
            )
            + f"; tower edits {state.edits}/{state.edit_limit})"
        )
    side = "No Regions" if state.advanced else "All Regions"
    lines.append(
        f"Wheel ({side} side): "
        + ", ".join(
            f"{D.REGION_ABBR[w]}={D.WHEEL_KIND_NAMES[state.window_kind(w)]}" for w in range(NR)
        )
        + (
            ""
            if state.advanced
            else f", ALL={D.WHEEL_KIND_NAMES[state.window_kind(D.ALL_REGIONS_WINDOW)]}"
        )
    )
    lines.append("Regions:")
    for r in range(NR):
        pawns = "".join(f"P{p}" for p in range(state.num_players) if state.pawn[p] == r)
        tiles = " | ".join(
            str(D.LOCAL_PERFORMANCES[t]) if t >= 0 else "(done)" for t in state.lp[r]
        )
        lines.append(
            f"  {D.REGIONS[r]:<10} [{pawns:<8}] castellers {_numbers(state.regions[r]):<22} "
            f"tokens {int(state.lp_tokens[r].sum())}  LP: {tiles}  "
            f"adj {','.join(D.REGION_ABBR[a] for a in D.ADJACENT[r])}"
        )
    lines.append("Festivals:")
    for i, (rnd, phase) in enumerate(D.CALENDAR):
        if not state.fest_held[i]:
            continue
        status = "done" if rnd < state.round else "to come"
        sizes = ",".join(str(s + 1) for s in state.fest_sizes[i])
        lines.append(
            f"  round {rnd:>2} {'I' * phase:<2} {D.REGIONS[state.fest_region[i]]:<10} "
            f"sizes {sizes:<5} {status}"
        )
    lines.append(f"Bag: {len(state.bag)} castellers")
    for p in range(state.num_players):
        where = D.REGIONS[state.pawn[p]] if state.pawn[p] >= 0 else "off board"
        scores = state.category_scores(p)
        lines.append(
            f"player_{p}: pawn {where}; castellers {_numbers(state.hand[p])}; "
            f"tokens {state.tokens[p]}"
        )
        lines.append(
            "   skills "
            + " ".join(f"{D.SKILLS[k]} {state.skills[p, k]}" for k in range(5))
            + "; tower (bottom first): "
            + (" / ".join(level_text(lv) for lv in state.towers[p]) or "none")
        )
        lines.append(
            "   score "
            + ", ".join(f"{k} {v}" for k, v in scores.items())
            + f" = {sum(scores.values())}"
        )
    for f in state.last_festivals:
        lines.append(
            f"Last festival at {D.REGIONS[f['region']]}: scores {f['scores']}, "
            f"prizes {f['prizes']}, size tokens {f['size_tokens']}"
        )
    return "\n".join(lines) + "\n"


# --- the picture ----------------------------------------------------------------------------
WIDTH, HEIGHT = 1088, 752
GRID_X, GRID_Y = 12, 44
CELL_W, CELL_H = 206, 162
PANEL_X = GRID_X + 4 * CELL_W + 4
PLAYERS_Y = GRID_Y + 2 * CELL_H + 4
SEAT_COLORS = ((214, 64, 54), (64, 120, 224), (232, 190, 50), (70, 176, 90))
SKILL_COLORS = (
    (150, 90, 200),
    (120, 84, 50),
    (40, 150, 150),
    (200, 80, 40),
    (50, 110, 200),
    (200, 160, 20),
)
CARD = (236, 228, 204)
CHIP = (252, 250, 244)


def pawn(scene: Scene, cx: float, bottom: float, color: Color, size: float = 16) -> None:
    """A player's pawn: a head on a body."""
    neck = bottom - size * 0.55
    scene.polygon(
        [
            (cx - size * 0.35, bottom),
            (cx + size * 0.35, bottom),
            (cx + size * 0.15, neck),
            (cx - size * 0.15, neck),
        ],
        color,
        outline=BLACK,
    )
    scene.circle(cx, bottom - size * 0.72, size * 0.22, color, outline=BLACK)


def _chips(
    scene: Scene,
    x: float,
    y: float,
    counts: Sequence[int] | np.ndarray,
    per_row: int,
    w: float = 34,
    h: float = 18,
    gap: float = 3,
) -> int:
    """Castellers by number: one chip per number held, '4x3' when there are three 4s."""
    k = 0
    for size, count in enumerate(counts):
        if count <= 0:
            continue
        cx, cy = x + (k % per_row) * (w + gap), y + (k // per_row) * (h + gap)
        scene.rect(cx, cy, w, h, fill=CHIP, outline=(120, 110, 90), radius=4)
        scene.text(
            cx + 2,
            cy + 1,
            w - 4,
            h - 2,
            f"{size + 1}" + (f"x{count}" if count > 1 else ""),
            BLACK,
            12,
            "center",
            bold=True,
        )
        k += 1
    return k


def _lp_tile(scene: Scene, x: float, y: float, w: float, h: float, tile: int) -> None:
    if tile < 0:
        scene.rect(x, y, w, h, outline=(170, 160, 140), radius=4)
        scene.text(x + 4, y, w - 8, h, "performed", MUTED, 11)
        return
    lp = D.LOCAL_PERFORMANCES[tile]
    scene.rect(x, y, w, h, fill=(250, 240, 214), outline=(150, 120, 70), radius=4)
    if lp.kind == "shape":
        for i, width in enumerate(lp.shape):  # the shape, bottom level first
            bw = 3 * width
            scene.rect(x + 14 - bw / 2, y + h - 4 - (i + 1) * 3.2, bw, 2.6, fill=(110, 80, 50))
        text = f"shape {'-'.join(map(str, lp.shape))}"
    else:
        text = f"{lp.points} levels: " + "+".join(D.SKILLS[s][:3] for s in lp.skills)
    scene.text(x + 28, y, w - 74, h, text, BLACK, 11)
    scene.text(
        x + w - 46,
        y,
        42,
        h,
        f"{lp.points} pt" + "s" * (lp.points != 1),
        (150, 40, 30),
        11,
        "right",
        bold=True,
    )


def _region(scene: Scene, state: State, r: int) -> None:
    x = GRID_X + (r % 4) * CELL_W
    y = GRID_Y + (r // 4) * CELL_H
    w, h = CELL_W - 8, CELL_H - 8
    scene.rect(x, y, w, h, fill=CARD, outline=(110, 90, 60), radius=8)
    scene.text(x + 8, y + 4, w - 96, 20, D.REGIONS[r], BLACK, 15, bold=True)
    kind = state.window_kind(r)
    scene.rect(x + w - 84, y + 6, 78, 18, fill=SKILL_COLORS[kind], radius=9)
    scene.text(x + w - 82, y + 6, 74, 18, D.WHEEL_KIND_NAMES[kind], WHITE, 12, "center", bold=True)
    scene.text(
        x + 8,
        y + 24,
        w - 16,
        15,
        "next to " + ", ".join(D.REGION_ABBR[a] for a in D.ADJACENT[r]),
        MUTED,
        11,
    )
    for k, p in enumerate(p for p in range(state.num_players) if state.pawn[p] == r):
        pawn(scene, x + w - 14 - k * 18, y + 58, SEAT_COLORS[p])
    tokens = state.lp_tokens[r]
    dots = [p for p in range(state.num_players) for _ in range(int(tokens[p]))]
    if dots:
        scene.text(x + 8, y + 40, 46, 16, "tokens", MUTED, 11)
        for k, p in enumerate(dots[:8]):
            scene.circle(x + 58 + k * 11, y + 48, 4.5, SEAT_COLORS[p], outline=BLACK)
    if not _chips(scene, x + 8, y + 62, state.regions[r], 5):
        scene.text(x + 8, y + 62, 120, 18, "no castellers", MUTED, 11)
    for j, tile in enumerate(state.lp[r]):
        _lp_tile(scene, x + 6, y + 104 + j * 23, w - 12, 21, int(tile))


def _legend_cell(scene: Scene, state: State) -> None:
    x, y = GRID_X + 3 * CELL_W, GRID_Y + CELL_H
    w = CELL_W - 8
    if not state.advanced:
        kind = state.window_kind(D.ALL_REGIONS_WINDOW)
        scene.text(x + 4, y + 2, 100, 20, "All Regions:", WHITE, 13, bold=True)
        scene.rect(x + 104, y + 3, 84, 18, fill=SKILL_COLORS[kind], radius=9)
        scene.text(x + 106, y + 3, 80, 18, D.WHEEL_KIND_NAMES[kind], WHITE, 12, "center", bold=True)
    else:
        scene.text(x + 4, y + 2, w, 20, "No Regions side (advanced)", WHITE, 13, bold=True)
    notes = (
        "Wheel: the skill each region trains",
        "Chips: castellers by number, 4x3 =",
        "three 4s; pawns: who stands there",
        "Tiles: local performances; tokens",
        "lie on performed rows",
        "Tower levels, bottom first: 3x4+1x5 =",
        "three 4s and a 5 (Mix)",
    )
    for i, line in enumerate(notes):
        scene.text(x + 4, y + 26 + i * 16, w, 15, line, PALE, 11)


def _panel(scene: Scene, state: State) -> None:
    x, w = PANEL_X, WIDTH - PANEL_X - 12
    y = GRID_Y
    scene.text(
        x, y, w, 20, f"Round {min(state.round, D.ROUNDS)} of {D.ROUNDS}", WHITE, 15, bold=True
    )
    scene.text(x, y + 20, w, 16, f"Bag: {len(state.bag)} castellers", PALE, 12)
    scene.text(x, y + 42, w, 18, "Festivals (end of round)", WHITE, 13, bold=True)
    row = 0
    for i, (rnd, phase) in enumerate(D.CALENDAR):
        if not state.fest_held[i]:
            continue
        done = rnd < state.round
        sizes = ",".join(str(s + 1) for s in state.fest_sizes[i])
        ink = MUTED if done else WHITE
        ty = y + 62 + row * 17
        scene.text(
            x,
            ty,
            34,
            16,
            f"R{rnd}",
            GOLD if rnd == state.round else ink,
            12,
            bold=rnd == state.round,
        )
        scene.text(x + 36, ty, 22, 16, "I" * phase, ink, 12)
        scene.text(x + 58, ty, 90, 16, D.REGIONS[state.fest_region[i]], ink, 12)
        scene.text(x + 150, ty, w - 150, 16, ("done" if done else f"sizes {sizes}"), ink, 12)
        row += 1


def _tower(scene: Scene, tower: Sequence, x: float, bottom: float, w: float, room: float) -> None:
    """The tower, bottom level lowest: one box per casteller with its number."""
    box = min(20.0, (w - 8) / max([lv[0] for lv in tower] + [1]) - 1)
    pitch = 18
    fits = int(room // pitch)
    shown = tower if len(tower) <= fits else tower[len(tower) - fits + 1 :]
    if len(shown) < len(tower):
        scene.text(
            x,
            bottom - fits * pitch,
            w,
            16,
            f"+{len(tower) - len(shown)} lower levels",
            MUTED,
            11,
            "center",
        )
    for i, (width, lo, mixed) in enumerate(shown):
        y = bottom - (i + 1) * pitch
        left = x + (w - width * (box + 1)) / 2
        for k in range(width):
            number = lo + 1 + (k >= width - mixed)
            bx = left + k * (box + 1)
            plain = k < width - mixed
            scene.rect(
                bx,
                y,
                box,
                16,
                fill=(255, 236, 200) if plain else (255, 210, 160),
                outline=(120, 90, 60),
                radius=2,
            )
            scene.text(bx, y, box, 16, str(number), BLACK, 11, "center")


def _player(scene: Scene, state: State, p: int) -> None:
    n = state.num_players
    pw = (WIDTH - 24) / n
    x, y = 12 + p * pw, PLAYERS_Y
    w, h = pw - 8, HEIGHT - PLAYERS_Y - 10
    acting = p == state.current_player
    scores = state.category_scores(p)
    total = sum(scores.values())
    winner = state.is_terminal() and total == max(state.scores())
    marked = acting or winner
    scene.rect(
        x,
        y,
        w,
        h,
        fill=(246, 244, 236),
        outline=GOLD if marked else SEAT_COLORS[p],
        line=3 if marked else 2,
        radius=8,
    )
    scene.circle(x + 16, y + 15, 7, SEAT_COLORS[p], outline=BLACK)
    scene.text(
        x + 28,
        y + 4,
        w - 120,
        22,
        f"player_{p}" + (" · to act" if acting else "") + (" · winner" if winner else ""),
        BLACK,
        15,
        bold=True,
    )
    scene.text(x + w - 90, y + 4, 82, 22, f"{total} pts", BLACK, 16, "right", bold=True)
    labels = ("tower", "variety", "prizes", "sizes", "local")
    cw = (w - 16) / 5
    for k, (key, label) in enumerate(zip(scores, labels)):
        scene.text(x + 8 + k * cw, y + 28, cw - 2, 14, label, MUTED, 11, "center")
        scene.text(
            x + 8 + k * cw, y + 42, cw - 2, 16, str(scores[key]), BLACK, 13, "center", bold=True
        )
    for k in range(5):  # skills: a pip per level
        sx = x + 8 + k * cw
        scene.text(sx, y + 64, cw - 2, 14, D.SKILLS[k], SKILL_COLORS[k], 11, "center", bold=True)
        for level in range(state.max_skill):
            px = sx + (cw - 2) / 2 + (level - (state.max_skill - 1) / 2) * 11
            scene.circle(
                px,
                y + 86,
                4.2,
                SKILL_COLORS[k] if level < state.skills[p, k] else None,
                outline=SKILL_COLORS[k],
            )
    scene.text(
        x + 8,
        y + 96,
        w - 16,
        16,
        f"special tokens {state.tokens[p]} · best tower {state.best[p]}",
        BLACK,
        12,
    )
    scene.text(x + 8, y + 114, w - 16, 14, "castellers not in the tower", MUTED, 11)
    per_row = max(1, int((w - 16) // 37))
    chips = _chips(scene, x + 8, y + 130, state.free(p), per_row)
    if not chips:
        scene.text(x + 8, y + 130, w - 16, 18, "none", MUTED, 11)
    rows = -(-max(chips, 1) // per_row)
    top = y + 130 + rows * 21 + 4
    tower = state.towers[p]
    scene.text(
        x + 8,
        top,
        w - 16,
        14,
        f"tower: {len(tower)} level{'s' * (len(tower) != 1)}" + ("" if tower else " (none built)"),
        MUTED,
        11,
    )
    _tower(scene, tower, x + 4, y + h - 8, w - 8, y + h - 8 - (top + 18))


def _status(state: State) -> str:
    if state.is_terminal():
        scores = state.scores()
        best = [p for p in range(state.num_players) if scores[p] == scores.max()]
        names = " and ".join(f"player_{p}" for p in best)
        return f"{names} win{'s' * (len(best) == 1)} with {scores.max()} points"
    done = [
        name
        for name, flag in (
            ("move", state.moved),
            ("train", state.trained),
            ("special", state.specialed),
        )
        if flag
    ]
    if state.recruits:
        done.append(f"recruit {state.recruits}")
    return (
        f"player_{state.current_player} to act · done: {', '.join(done) or 'nothing yet'}"
        f" · tower edits {state.edits}/{state.edit_limit}"
    )


def build_scene(state: State) -> Scene:
    scene = Scene(WIDTH, HEIGHT)
    scene.header(
        "Castell",
        f"{state.num_players} players · round {min(state.round, D.ROUNDS)}/{D.ROUNDS}",
        _status(state),
        1 if state.is_terminal() else 0,
        title_w=90,
    )
    for r in range(NR):
        _region(scene, state, r)
    _legend_cell(scene, state)
    _panel(scene, state)
    for p in range(state.num_players):
        _player(scene, state, p)
    return scene


render_rgb, render_svg = scene_renderers(build_scene)


def events(before: State, after: State) -> list[str]:
    """What a move set off, in words (the replay viewer lists them under each move)."""
    out = []
    if after.round != before.round:
        for f in after.last_festivals:
            scores = ", ".join(f"player_{p} {s}" for p, s in f["scores"].items()) or "no towers"
            prizes = ", ".join(f"player_{p} {prize}" for p, prize in f["prizes"].items())
            out.append(
                f"festival at {D.REGIONS[f['region']]}: {scores}"
                + (f"; prizes: {prizes}" if prizes else "")
            )
        if after.is_terminal():
            finals = after.scores()
            out.append(
                "game over: "
                + ", ".join(f"player_{p} {int(s)} points" for p, s in enumerate(finals))
            )
        else:
            out.append(f"round {after.round} begins")
    elif after.current_player != before.current_player:
        out.append(f"player_{after.current_player}'s turn")
    return out
