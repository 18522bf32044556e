"""Text and picture of the table: every row with its cards and blockers, plus the hand of the
player to act (the view a hot-seat player needs; opponents' hands show as counts)."""
from __future__ import annotations

import numpy as np

from castle_envs.core.raster import BLACK, GOLD, GREY, RED, WHITE, Canvas

from .data import EXIT, ENTRY, HELMET, SIDE_SHORT, card_name
from .rules import WIN_LENGTH, CastleRoomsState


def _room_text(card: int, helmet: int) -> str:
    """The room as it lies in its row: entry>exit in that row's orientation."""
    return f"{SIDE_SHORT[ENTRY[helmet][card]]}>{SIDE_SHORT[EXIT[helmet][card]]}"


def render_ansi(state: CastleRoomsState) -> str:
    lines = [f"Castle Rooms, {state.num_players} players, turn {state.turn}, "
             f"deck {len(state.deck)}, discard {len(state.discard)}"]
    for seat in range(state.num_players):
        marker = "*" if seat == state.current_player else " "
        lines.append(f"{marker}player_{seat}: {len(state.hands[seat])} cards in hand, "
                     f"best rows {[x for x in state.score(seat) if x]}")
        for r, row in enumerate(state.rows[seat]):
            cards = " ".join(f"R{c}({_room_text(c, row.helmet)})" for c in row.cards)
            blocker = f" | DRAGON#{row.dragon}" if row.dragon >= 0 else ""
            lines.append(f"   row {r} helmet {HELMET[row.helmet]:4} [{len(row.cards):2}] "
                         f"{cards}{blocker}")
    if state.is_terminal():
        how = "a row of 10 Rooms" if state.end_reason == "row" else "longest rows at deck-out"
        lines.append(f"game over ({how}): winners {['player_%d' % w for w in state.winners]}")
    else:
        hand = ", ".join(f"{i}:{card_name(c)}" for i, c in enumerate(state.hands[state.player]))
        lines.append(f"player_{state.player} to act, hand: {hand}")
    return "\n".join(lines)


CARD_W, CARD_H, GAP = 40, 18, 3
ROWS_SHOWN = 6
LABEL_W = 44
BAND_H = 14 + ROWS_SHOWN * (CARD_H + GAP) + 4
PAPER = (236, 224, 196)
DARK = (60, 40, 30)


def render_rgb(state: CastleRoomsState) -> np.ndarray:
    """A fixed-size picture per player count (so frames make a video)."""
    width = LABEL_W + (WIN_LENGTH + 1) * (CARD_W + GAP) + 8
    height = 22 + state.num_players * BAND_H + 30
    canvas = Canvas(height, width)
    canvas.text(4, 4, f"CASTLE ROOMS  TURN {state.turn}  DECK {len(state.deck)}  "
                      f"DISCARD {len(state.discard)}", WHITE, scale=2)
    for seat in range(state.num_players):
        top = 22 + seat * BAND_H
        color = GOLD if seat == state.current_player else WHITE
        canvas.text(top + 2, 4, f"PLAYER {seat}  HAND {len(state.hands[seat])}", color, scale=1)
        rows = state.rows[seat]
        for r, row in enumerate(rows[:ROWS_SHOWN]):
            y = top + 12 + r * (CARD_H + GAP)
            canvas.text(y + 6, 4, f"R{r} {'UP' if row.helmet == 0 else 'DN'}", WHITE, scale=1)
            for i, card in enumerate(row.cards):
                x = LABEL_W + i * (CARD_W + GAP)
                canvas.box(y, x, CARD_H, CARD_W, PAPER, border=DARK)
                canvas.text(y + 7, x + 4, _room_text(card, row.helmet), BLACK, scale=1)
            if row.dragon >= 0:
                x = LABEL_W + len(row.cards) * (CARD_W + GAP)
                canvas.box(y, x, CARD_H, CARD_W, RED, border=BLACK)
                canvas.text(y + 7, x + 4, "DRAGON", WHITE, scale=1)
        if len(rows) > ROWS_SHOWN:
            canvas.text(top + 2, width - 80, f"+{len(rows) - ROWS_SHOWN} ROWS", GREY, scale=1)
    bottom = height - 26
    if state.is_terminal():
        text = "WINNER " + " ".join(str(w) for w in state.winners)
        canvas.text(bottom + 4, 4, text, GOLD, scale=2)
    else:
        canvas.text(bottom, 4, f"PLAYER {state.player} HAND", WHITE, scale=1)
        for i, card in enumerate(state.hands[state.player]):
            x = LABEL_W + 40 + i * (CARD_W + GAP)
            if card_name(card).startswith("R"):
                canvas.box(bottom, x, CARD_H, CARD_W, PAPER, border=DARK)
                canvas.text(bottom + 7, x + 4, _room_text(card, 0), BLACK, scale=1)
            else:
                canvas.box(bottom, x, CARD_H, CARD_W, RED if "Dragon" in card_name(card)
                           else (40, 70, 170), border=BLACK)
                canvas.text(bottom + 7, x + 4, card_name(card).split("#")[0], WHITE, scale=1)
    return canvas.image()
