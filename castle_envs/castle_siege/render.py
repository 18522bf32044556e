"""Castle Siege pictures: a compact text table (``ansi``) and an RGB image (``rgb_array``)."""
from __future__ import annotations

import numpy as np

from ..core.raster import BLACK, GREY, RED, WHITE, Canvas
from .cards import CASTLE_NAMES, NUM_CARDS, card_name
from .rules import PHASE_NAMES, State

SUIT_COLORS = (BLACK, (20, 110, 40), RED, (170, 120, 0))   # ♠ black, ♣ green, ♥ red, ♦ gold


def render_ansi(state: State) -> str:
    lines = [f"Castle Siege  turn {state.turn}  deck {state.deck_size}  "
             f"discard {int(state.discard.sum())}  phase {PHASE_NAMES[state.phase]}"
             + ("  [regroup used]" if state.regroup_used else "")]
    depth = max([len(state.column(c)) for c in range(4)] + [0])
    header, cells = [], []
    for c in range(4):
        name = card_name(int(state.castles[c]))
        header.append(f"{CASTLE_NAMES[c]:>5} {'(' + name + ')' if state.captured[c] else name:>5}")
    lines.append("  ".join(f"{h:<12}" for h in header))
    for row in range(depth):
        cells = []
        for c in range(4):
            col = state.column(c)
            cells.append(f"{card_name(col[row]) if row < len(col) else '':>11}")
        lines.append("  ".join(f"{x:<12}" for x in cells))
    hand = "  ".join(f"{i}:{card_name(c)}" for i, c in enumerate(state.hand_cards()))
    lines.append(f"hand  {hand or '(empty)'}")
    recycled = [card_name(c) for c in state.deck_cards() if state.recycled[c]]
    if recycled:
        lines.append(f"deck bottom (recycled, top to bottom): {' '.join(recycled)}")
    if state.is_terminal():
        lines.append("VICTORY: all four castles captured" if state.won else
                     "DEFEAT: the reinforcement deck ran out")
    return "\n".join(lines)


CARD_H, CARD_W, GAP = 34, 44, 8
COL_STEP = CARD_W + 3 * GAP


def _card(canvas: Canvas, top: int, left: int, card: int, face_up=True, dim=False):
    if not face_up:
        canvas.box(top, left, CARD_H, CARD_W, (60, 60, 140), border=WHITE)
        return
    canvas.box(top, left, CARD_H, CARD_W, GREY if dim else WHITE, border=BLACK)
    text = card_name(card, ascii_only=True)
    canvas.text(top + 4, left + (CARD_W - Canvas.text_width(text)) // 2, text,
                SUIT_COLORS[card // 13])


def render_rgb(state: State) -> np.ndarray:
    """Castles on top with their columns below, the hand, deck and discard at the bottom."""
    max_depth = 10  # deeper columns show their count; the image keeps one size for video
    height = 40 + CARD_H + 16 + max_depth * 18 + CARD_H + 70
    width = 4 * COL_STEP + 2 * GAP + 120
    canvas = Canvas(height, width)
    canvas.text(8, GAP, f"CASTLE SIEGE  TURN {state.turn}  {PHASE_NAMES[state.phase]}", WHITE)
    top = 40
    for c in range(4):
        left = GAP + c * COL_STEP
        _card(canvas, top, left, int(state.castles[c]), dim=bool(state.captured[c]))
        col = state.column(c)
        shown = col[-max_depth:]
        for row, card in enumerate(shown):
            _card(canvas, top + CARD_H + 16 + row * 18, left, card)
        if len(col) > max_depth:
            canvas.text(top + CARD_H + 2, left, f"+{len(col) - max_depth}", WHITE)
    bottom = height - CARD_H - 30
    for i, card in enumerate(state.hand_cards()):
        _card(canvas, bottom, GAP + i * (CARD_W + GAP), card)
    deck_left = width - 110
    _card(canvas, bottom, deck_left, 0, face_up=False)
    canvas.text(bottom + CARD_H + 6, deck_left, f"DECK {state.deck_size}", WHITE)
    discard = np.flatnonzero(state.discard)
    if len(discard):
        _card(canvas, 40, width - 110, int(discard[-1]))
    canvas.text(40 + CARD_H + 6, width - 110, f"DISC {len(discard)}", WHITE)
    if state.is_terminal():
        canvas.text(height - 20, GAP, "VICTORY" if state.won else "DEFEAT", WHITE, scale=3)
    assert NUM_CARDS == 52
    return canvas.image()
