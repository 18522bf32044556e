"""Castellion's pictures: a text board (``ansi``) and the table (``rgb_array``).

The picture: the castle (row 0 the foundation, rows and columns numbered as moves name
them), each tile in its faction's colour with its shape, formations outlined; the three
Ordeal cards with their requirement, what failing costs and the Traitors beside them
(face-down cards show only what their back shows); the tile in hand, revealed tiles, the
piles, and a legend. Pile orders and face-down Ordeals stay hidden.
"""

from __future__ import annotations

from ..core.scene import BLACK, FELT_DARK, GOLD, MUTED, PALE, PAPER, WHITE, Scene, scene_renderers
from .actions import SIZE
from .data import (
    ASSAULT,
    FACTIONS,
    KIND_NAMES,
    LEVELS,
    ORDEALS,
    ROWS,
    SHAPES,
    ordeal_requirement,
    short_name,
)
from .rules import (
    DEFENDER_PHASE,
    DESTROY_PHASE,
    DRAW_PHASE,
    JUGGLE_PHASE,
    LIFT_PHASE,
    MOVE_PHASE,
    OVER,
    PHASE_NAMES,
    RECOVER_PHASE,
    REVEAL_ORDEAL_PHASE,
    REVEAL_PHASE,
    TRAITOR_PHASE,
    State,
    component,
    shape_of_group,
)

#: what the notation means (a terminal player prints it)
LEGEND = (
    "Tiles are faction-shape: seer (S), chameleon (C), juggler (J), pyro (P) x "
    "triangle (^), square (#), circle (o); T = Traitor, B = black-bordered Traitor. "
    "Rows count up from the foundation (row 0), columns from the left (0). A formation "
    "is 4 tiles of one faction: a tower (a column of 4), a bastion (2x2) or a line "
    "(a row of 4)."
)


def _ordeal_line(state: State, slot: int) -> str:
    traitors = sum(state.beside[slot])
    if slot < state.current:
        return f"  {slot + 1}. (passed)"
    mark = "*" if slot == state.current else " "
    if state.face_down[slot]:
        return f" {mark}{slot + 1}. face-down Assault        traitors {traitors}/2"
    card = ORDEALS[state.ordeals[slot]]
    return (
        f" {mark}{slot + 1}. {card.title}: {ordeal_requirement(card)}   "
        f"traitors {traitors}/{card.traitors}"
    )


def render_ansi(state: State) -> str:
    towers, bastions, lines = state.formations()
    lines_out = [
        f"Castellion ({LEVELS[state.level]})   regular {len(state.regular)}  "
        f"safe {len(state.safe)}  discard {sum(state.discard)}"
    ]
    lines_out += [_ordeal_line(state, slot) for slot in range(3)]
    lines_out.append(f"formations: {towers} tower(s), {bastions} bastion(s), {lines} line(s)")
    for r in range(SIZE - 1, -1, -1):
        row = " ".join(
            short_name(k) if k >= 0 else ". " for k in state.cells[r * SIZE : (r + 1) * SIZE]
        )
        lines_out.append(f"  {r}| {row}")
    lines_out.append("     " + " ".join(f"{c} " for c in range(SIZE)))
    if state.revealed:
        lines_out.append(
            "revealed: " + ", ".join(f"{i}={KIND_NAMES[k]}" for i, k in enumerate(state.revealed))
        )
    if state.hand >= 0:
        lines_out.append(f"in hand: {KIND_NAMES[state.hand]}")
    if state.lifted >= 0:
        lines_out.append(f"moving: {KIND_NAMES[state.lifted]}")
    if state.phase == OVER:
        lines_out.append("VICTORY" if state.won else f"DEFEAT at ordeal {state.current + 1}")
    else:
        lines_out.append(f"decision: {prompt(state)}")
    return "\n".join(lines_out) + "\n"


# --- the picture ----------------------------------------------------------------------------
WIDTH, HEIGHT = 800, 560
TILE = 50
BOARD_X, BOARD_Y = 44, 56
PANEL_X = BOARD_X + SIZE * TILE + 32
FACTION_COLORS = ((52, 104, 214), (48, 160, 76), (230, 140, 30), (206, 52, 44))
TRAITOR_COLOR = (84, 52, 104)
BOARD_COLOR = (16, 58, 34)
PILE_BACKS = ((132, 92, 56), (52, 96, 176))  # regular (brown), safe (blue)
SHAPE_NAMES = ("tower", "bastion", "line")
_REASONS = ("", "the Traitor's cost", "Pyro's power", "the Assault's penalty")


def tile(scene: Scene, x: float, y: float, kind: int, size: float = TILE - 4) -> None:
    """A Dream tile: a Defender in its faction's colour with its shape, or a Traitor."""
    if kind >= 12:
        black = kind == 13
        scene.rect(
            x,
            y,
            size,
            size,
            fill=TRAITOR_COLOR,
            outline=BLACK if black else (150, 130, 160),
            line=max(1.5, size / 10) if black else 1,
            radius=size / 8,
        )
        cx, cy, s = x + size / 2, y + size / 2, size / 46
        scene.polygon(
            [(cx, cy - 17 * s), (cx + 5 * s, cy + 5 * s), (cx - 5 * s, cy + 5 * s)], (225, 225, 235)
        )  # a dagger's blade
        scene.rect(cx - 11 * s, cy + 5 * s, 22 * s, 4 * s, fill=(225, 225, 235))
        scene.rect(cx - 2.5 * s, cy + 9 * s, 5 * s, 9 * s, fill=(225, 225, 235))
        return
    scene.rect(
        x, y, size, size, fill=FACTION_COLORS[kind // 3], outline=(20, 20, 20), radius=size / 8
    )
    cx, cy, r = x + size / 2, y + size / 2, size * 0.3
    shape = kind % 3
    if shape == 0:
        scene.polygon(
            [(cx, cy - r * 1.1), (cx + r * 1.1, cy + r * 0.85), (cx - r * 1.1, cy + r * 0.85)],
            WHITE,
        )
    elif shape == 1:
        scene.rect(cx - r * 0.85, cy - r * 0.85, r * 1.7, r * 1.7, fill=WHITE)
    else:
        scene.circle(cx, cy, r, WHITE)


def _formation_cells(state: State) -> list[tuple[int, int]]:
    """(cell, formation kind) for every tile in a tower, bastion or line."""
    out = []
    for board in state.faction_boards():
        while board:
            comp = component(board, board & -board)
            board &= ~comp
            kind = shape_of_group(comp)
            if kind >= 0:
                out += [(i, kind) for i in range(SIZE * SIZE) if comp >> i & 1]
    return out


def _board(scene: Scene, state: State) -> None:
    side = SIZE * TILE
    scene.rect(BOARD_X - 4, BOARD_Y - 4, side + 8, side + 8, fill=BOARD_COLOR, radius=6)
    for r in range(SIZE):
        y = BOARD_Y + (SIZE - 1 - r) * TILE
        scene.text(BOARD_X - 30, y, 22, TILE, str(r), PALE, 13, "right")
    for c in range(SIZE):
        scene.text(BOARD_X + c * TILE, BOARD_Y + side + 6, TILE, 16, str(c), PALE, 13, "center")
    scene.text(
        BOARD_X - 40,
        BOARD_Y + side + 24,
        side + 40,
        16,
        "rows from the foundation (0), columns from the left",
        MUTED,
        11,
        "center",
    )
    for i, kind in enumerate(state.cells):
        if kind >= 0:
            r, c = divmod(i, SIZE)
            tile(scene, BOARD_X + c * TILE + 2, BOARD_Y + (SIZE - 1 - r) * TILE + 2, kind)
    for i, _ in _formation_cells(state):
        r, c = divmod(i, SIZE)
        scene.rect(
            BOARD_X + c * TILE,
            BOARD_Y + (SIZE - 1 - r) * TILE,
            TILE,
            TILE,
            outline=GOLD,
            line=2.5,
            radius=6,
        )


def _ordeal(scene: Scene, state: State, slot: int, y: float, h: float) -> None:
    x, w = PANEL_X, WIDTH - PANEL_X - 16
    passed, current = slot < state.current, slot == state.current and state.phase != OVER
    numeral = "I" * (slot + 1)
    beside = state.beside[slot]
    if state.face_down[slot]:
        scene.rect(
            x,
            y,
            w,
            h,
            fill=(40, 40, 52),
            outline=GOLD if current else PALE,
            line=3 if current else 1,
            radius=8,
        )
        scene.text(x + 12, y + 6, w - 24, 22, f"Ordeal {numeral}: face down", WHITE, 16, bold=True)
        scene.text(
            x + 12, y + 30, w - 24, 18, "an Assault, turned up when met or by a new tower", PALE, 12
        )
        need = 2
    else:
        card = ORDEALS[state.ordeals[slot]]
        failed = state.phase == OVER and not state.won and slot == state.current
        ink = MUTED if passed else BLACK
        scene.rect(
            x,
            y,
            w,
            h,
            fill=(200, 200, 196) if passed else PAPER,
            outline=GOLD if current else (190, 50, 40) if failed else (110, 100, 80),
            line=3 if current or failed else 1,
            radius=8,
        )
        title = card.title + (" (passed)" if passed else " (failed)" if failed else "")
        scene.text(x + 12, y + 6, w - 24, 22, title, ink, 16, bold=True)
        need_text = (
            "needs " + ordeal_requirement(card).split(", else")[0]
            if card.kind != ROWS
            else ordeal_requirement(card).capitalize()
        )
        scene.text(x + 12, y + 30, w - 24, 18, need_text, ink, 13)
        fail = (
            f"else destroy {card.penalty} tiles"
            if card.kind == ASSAULT
            else "defeat if the new foundation has a gap"
            if card.kind == ROWS
            else "else defeat"
        )
        scene.text(x + 12, y + 48, w / 2, 16, fail, MUTED if passed else (150, 40, 30), 12)
        need = card.traitors
    if passed:
        return
    label = f"Traitors {sum(beside)} / {need}"
    light = WHITE if state.face_down[slot] else BLACK
    scene.text(x + w - 190, y + h - 22, 84, 18, label, light, 12, "right")
    for t in range(need):
        tx = x + w - 100 + t * 17
        if t < sum(beside):
            tile(scene, tx, y + h - 22, 13 if t < beside[1] else 12, 15)
        else:
            scene.rect(tx, y + h - 22, 15, 15, outline=MUTED, radius=2)


def prompt(state: State) -> str:
    """What the player decides now, in words."""
    phase = state.phase
    if phase == OVER:
        return (
            "Victory: all three ordeals passed"
            if state.won
            else f"Defeat at ordeal {'I' * (state.current + 1)}"
        )
    if phase == DRAW_PHASE:
        return "Draw a tile" + (" or take a revealed one" if state.revealed else "")
    if phase == DEFENDER_PHASE:
        return f"Place the {KIND_NAMES[state.hand]} or discard it"
    if phase == TRAITOR_PHASE:
        return "Place the Traitor beside the ordeal" + (
            "" if state.hand == 13 or state.level == 0 else " or discard it"
        )
    if phase == DESTROY_PHASE:
        return (
            f"Destroy {state.destroy_left} tile{'s' * (state.destroy_left != 1)}"
            f" ({_REASONS[state.destroy_reason]})"
        )
    if phase == JUGGLE_PHASE:
        return "Juggler: swap two neighbouring tiles"
    if phase == REVEAL_PHASE:
        return f"Seer: reveal a tile ({state.reveal_left} left)"
    if phase == RECOVER_PHASE:
        return f"Chameleon: take back a {SHAPES[state.recover_shape]} from the discard pile"
    if phase == LIFT_PHASE:
        return "Pyro: lift a column's top tile"
    if phase == MOVE_PHASE:
        return f"Pyro: put the {KIND_NAMES[state.lifted]} down"
    if phase == REVEAL_ORDEAL_PHASE:
        return "Turn a face-down ordeal up"
    return PHASE_NAMES[phase]


def _bottom(scene: Scene, state: State) -> None:
    y = BOARD_Y + SIZE * TILE + 50
    held = state.hand if state.hand >= 0 else state.lifted
    scene.text(
        BOARD_X - 30, y, 96, 18, "Lifted" if state.lifted >= 0 else "In hand", WHITE, 14, bold=True
    )
    if held >= 0:
        tile(scene, BOARD_X - 26, y + 22, held, 46)
        scene.text(BOARD_X + 24, y + 34, 86, 18, KIND_NAMES[held], PALE, 12)
    else:
        scene.rect(BOARD_X - 26, y + 22, 46, 46, outline=MUTED, radius=6)
    rx = BOARD_X + 120
    scene.text(rx, y, 200, 18, f"Revealed ({len(state.revealed)} of 4)", WHITE, 14, bold=True)
    for i in range(4):
        if i < len(state.revealed):
            tile(scene, rx + i * 50, y + 22, state.revealed[i], 46)
        else:
            scene.rect(rx + i * 50, y + 22, 46, 46, outline=MUTED, radius=6)
        scene.text(rx + i * 50, y + 70, 46, 14, str(i), MUTED, 11, "center")


def _piles(scene: Scene, state: State, y: float) -> None:
    x = PANEL_X
    for i, (name, pile) in enumerate((("regular", state.regular), ("safe", state.safe))):
        px = x + i * 110
        scene.rect(px, y, 34, 44, fill=PILE_BACKS[i] if pile else None, outline=PALE, radius=4)
        scene.text(px + 40, y + 2, 66, 18, name, PALE, 12)
        scene.text(px + 40, y + 22, 66, 20, str(len(pile)), WHITE, 16, bold=True)
    scene.text(x + 222, y + 2, 100, 18, "discarded", PALE, 12)
    scene.text(x + 222, y + 22, 100, 20, str(sum(state.discard)), WHITE, 16, bold=True)
    towers, bastions, lines = state.formations()
    scene.text(
        x,
        y + 54,
        WIDTH - x - 16,
        18,
        f"Formations: {towers} tower{'s' * (towers != 1)} · {bastions} "
        f"bastion{'s' * (bastions != 1)} · {lines} line{'s' * (lines != 1)}",
        WHITE,
        14,
        bold=True,
    )


def _legend(scene: Scene) -> None:
    y = HEIGHT - 40
    scene.rect(0, y - 6, WIDTH, 46, fill=FELT_DARK)
    for i, name in enumerate(FACTIONS):
        x = 16 + i * 112
        scene.rect(x, y + 2, 14, 14, fill=FACTION_COLORS[i], radius=3)
        scene.text(x + 20, y, 86, 18, name, PALE, 12)
    x = 16 + 4 * 112
    tile(scene, x, y + 1, 12, 16)
    scene.text(x + 22, y, 80, 18, "Traitor", PALE, 12)
    scene.text(
        16,
        y + 18,
        WIDTH - 32,
        16,
        "A formation (gold outline) is 4 tiles of one faction: tower = a column, "
        "bastion = a 2x2 square, line = a row",
        MUTED,
        11,
    )


def build_scene(state: State) -> Scene:
    scene = Scene(WIDTH, HEIGHT)
    scene.header(
        "Castellion", LEVELS[state.level].capitalize(), prompt(state), state.outcome, title_w=120
    )
    _board(scene, state)
    for slot in range(3):
        _ordeal(scene, state, slot, BOARD_Y - 4 + slot * 96, 88)
    _piles(scene, state, BOARD_Y + 3 * 96 + 8)
    _bottom(scene, state)
    _legend(scene)
    return scene


render_rgb, render_svg = scene_renderers(build_scene)


def events(before: State, after: State) -> list[str]:
    """What a move set off, in words (the replay viewer lists them under each move)."""
    out = []
    for slot in range(3):
        if before.face_down[slot] and not after.face_down[slot]:
            out.append(f"Ordeal {'I' * (slot + 1)} turned up: {ORDEALS[after.ordeals[slot]].title}")
    if after.current > before.current:
        for slot in range(before.current, after.current):
            out.append(f"passed {ORDEALS[after.ordeals[slot]].title}")
    traitors = sum(map(sum, after.beside)) - sum(map(sum, before.beside))
    if traitors > 0:
        out.append("a Traitor joins the ordeal")
    lost = before.castle_size - after.castle_size
    if lost > 0 and after.lifted < 0 and before.lifted < 0:
        out.append(f"{lost} tile{'s' * (lost != 1)} destroyed")
    if after.formations() != before.formations():
        t, b, n = after.formations()
        out.append(
            f"formations now {t} tower{'s' * (t != 1)}, {b} bastion{'s' * (b != 1)}, "
            f"{n} line{'s' * (n != 1)}"
        )
    if len(after.revealed) > len(before.revealed):
        out.append(f"revealed {KIND_NAMES[after.revealed[-1]]}")
    if after.phase == OVER:
        out.append("Victory" if after.won else "Defeat")
    return out


def describe(state: State, action: int) -> str:
    """``state.describe_action``: a face-down Ordeal is named by its slot, never by its card
    (what a player or a replay shows)."""
    return state.describe_action(action)
