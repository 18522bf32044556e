"""Castellion's pictures: a text board (``ansi``) and coloured tiles (``rgb_array``)."""
from __future__ import annotations

import numpy as np

from ..core.raster import BLACK, GOLD, GREY, RED, WHITE, Canvas
from .actions import SIZE
from .data import FACTIONS, KIND_NAMES, LEVELS, ORDEALS, ordeal_requirement, short_name
from .rules import OVER, PHASE_NAMES, State

FACTION_COLORS = ((70, 110, 220), (60, 170, 80), (220, 150, 40), (210, 60, 50))
TRAITOR_COLOR = (90, 60, 110)


def _ordeal_line(state: State, slot: int) -> str:
    traitors = sum(state.beside[slot])
    if slot < state.current:
        return f"  {slot + 1}. (passed)"
    if state.face_down[slot]:
        return f"  {slot + 1}. face-down Assault        traitors {traitors}/2"
    card = ORDEALS[state.ordeals[slot]]
    mark = "*" if slot == state.current else " "
    return (f" {mark}{slot + 1}. {card.title}: {ordeal_requirement(card)}   "
            f"traitors {traitors}/{card.traitors}")


def render_ansi(state: State) -> str:
    towers, bastions, lines = state.formations()
    lines_out = [f"Castellion ({LEVELS[state.level]})   regular {len(state.regular)}  "
                 f"safe {len(state.safe)}  discard {sum(state.discard)}"]
    lines_out += [_ordeal_line(state, slot) for slot in range(3)]
    lines_out.append(f"formations: {towers} tower(s), {bastions} bastion(s), {lines} line(s)")
    for r in range(SIZE - 1, -1, -1):
        row = " ".join(short_name(k) if k >= 0 else ". " for k in
                       state.cells[r * SIZE:(r + 1) * SIZE])
        lines_out.append(f"  {r}| {row}")
    lines_out.append("     " + " ".join(f"{c} " for c in range(SIZE)))
    if state.revealed:
        lines_out.append("revealed: " + ", ".join(f"{i}={KIND_NAMES[k]}"
                                                  for i, k in enumerate(state.revealed)))
    if state.hand >= 0:
        lines_out.append(f"in hand: {KIND_NAMES[state.hand]}")
    if state.lifted >= 0:
        lines_out.append(f"moving: {KIND_NAMES[state.lifted]}")
    if state.phase == OVER:
        lines_out.append("VICTORY" if state.won else
                         f"DEFEAT at ordeal {state.current + 1}")
    else:
        why = ("", "Traitor discarded", "Pyro", "Assault penalty")[state.destroy_reason]
        extra = f" ({state.destroy_left} to destroy: {why})" if state.destroy_left else ""
        lines_out.append(f"decision: {PHASE_NAMES[state.phase]}{extra}")
    return "\n".join(lines_out) + "\n"


TILE = 28
_GLYPHS = {0: [(i, 6 - i, 6 + i) for i in range(7)],       # triangle: rows widening
           1: [(i, 1, 12) for i in range(1, 12)],           # square
           2: [(i, 6 - w, 6 + w) for i, w in enumerate((2, 4, 5, 6, 6, 6, 6, 6, 5, 4, 2))]}


def _draw_tile(canvas: Canvas, top: int, left: int, kind: int) -> None:
    if kind >= 12:
        canvas.box(top, left, TILE - 2, TILE - 2, TRAITOR_COLOR,
                   border=BLACK if kind == 13 else GREY)
        canvas.text(top + 8, left + 9, "T", WHITE)
        return
    canvas.box(top, left, TILE - 2, TILE - 2, FACTION_COLORS[kind // 3], border=BLACK)
    shape = kind % 3
    x = left + 6              # centres the 13-pixel glyph on the 26-pixel tile
    for i, lo, hi in _GLYPHS[shape]:
        if shape == 0:        # the triangle is drawn at double height
            canvas.pixels[top + 6 + 2 * i:top + 8 + 2 * i, x + lo:x + hi + 1] = WHITE
        else:
            canvas.pixels[top + 7 + i, x + lo:x + hi + 1] = WHITE


def render_rgb(state: State) -> np.ndarray:
    height, width = 300, 440
    canvas = Canvas(height, width)
    canvas.text(6, 8, f"CASTELLION {LEVELS[state.level]}", WHITE)
    canvas.text(6, 250, f"REG {len(state.regular)} SAFE {len(state.safe)}", WHITE)
    # castle, row 0 at the bottom
    base_top, base_left = 40, 10
    canvas.box(base_top - 2, base_left - 2, SIZE * TILE + 2, SIZE * TILE + 2, (30, 60, 35))
    for r in range(SIZE):
        for c in range(SIZE):
            kind = state.cells[r * SIZE + c]
            if kind >= 0:
                _draw_tile(canvas, base_top + (SIZE - 1 - r) * TILE, base_left + c * TILE, kind)
    # ordeal row with its traitors
    left = 200
    for slot in range(3):
        top = 40 + slot * 56
        color = GREY if slot < state.current else (BLACK if state.face_down[slot] else GOLD)
        canvas.box(top, left + 70, 48, 160, color, border=WHITE)
        ink = WHITE if color == BLACK else BLACK
        if state.face_down[slot]:
            label, detail = "FACE DOWN", "ASSAULT"
        else:
            card = ORDEALS[state.ordeals[slot]]
            label = card.title.replace("Assault ", "").replace(": ", " ")[:18]
            detail = ordeal_requirement(card).replace("destroy the bottom", "lose")
            detail = detail.replace(", else destroy", " OR -")[:19]
        canvas.text(top + 6, left + 76, label, ink)
        canvas.text(top + 20, left + 76, "PASSED" if slot < state.current else detail, ink)
        if slot >= state.current:
            need = 2 if state.face_down[slot] else ORDEALS[state.ordeals[slot]].traitors
            canvas.text(top + 34, left + 76, f"T {sum(state.beside[slot])}/{need}", ink)
        for t in range(state.beside[slot][0] + state.beside[slot][1]):
            kind = 13 if t < state.beside[slot][1] else 12
            if t < 4:     # at most 5 wait beside a card; the count is printed on it
                _draw_tile(canvas, top + 10, left + 40 - t * 14, kind)
    # hand, revealed tiles, status
    status_top = 220
    canvas.text(status_top, 10, "HAND", WHITE)
    held = state.hand if state.hand >= 0 else state.lifted
    if held >= 0:
        _draw_tile(canvas, status_top + 14, 10, held)
    canvas.text(status_top, 60, "REVEALED", WHITE)
    for i, kind in enumerate(state.revealed):
        _draw_tile(canvas, status_top + 14, 60 + i * TILE, kind)
    if state.phase == OVER:
        canvas.text(status_top + 20, 200, "VICTORY" if state.won else "DEFEAT",
                    GOLD if state.won else RED, scale=3)
    else:
        canvas.text(status_top + 20, 200, PHASE_NAMES[state.phase], WHITE)
    towers, bastions, lines = state.formations()
    canvas.text(status_top + 50, 200, f"T{towers} B{bastions} L{lines}", WHITE)
    for i, name in enumerate(FACTIONS):      # colour legend
        canvas.box(height - 16, 10 + i * 90, 10, 10, FACTION_COLORS[i], border=BLACK)
        canvas.text(height - 15, 24 + i * 90, name, WHITE, scale=1)
    return canvas.image()

