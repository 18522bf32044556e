"""Text and picture of the table: every row with its cards and blockers, plus the hand of the
player to act (the view a hot-seat player needs; opponents' hands show as counts).

In the picture each Room shows its two sides as they lie in the row: a staircase and a
corridor on each edge, each high or low (the codes HH, HL, LH, LL of the text view: stairs
first, corridor second), so a row that fits lines up; each row's label shows its helmet
(up or down), and a legend at the bottom says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.scene import BLACK, FELT_DARK, GOLD, PALE, WHITE, Color, Scene, scene_renderers
from .actions import MAX_ROWS
from .data import DRAGON, ENTRY, EXIT, HELMET, KIND, KNIGHT, SIDE_SHORT, card_name
from .rules import WIN_LENGTH, CastleRoomsState

#: what the notation means (a terminal player prints it)
LEGEND = (
    "A Room R17[HL>LH] is card 17, entry side > exit side as it lies helmet up. A side "
    "shows stairs and a corridor, each High or Low: HL = stairs high, corridor low. A "
    "Room fits a row when its entry equals the exit of the row's last card, in the "
    "row's orientation (helmet down turns the card: sides swap and H<->L). Slots count "
    "the hand from 0; rows count from 0 in the order they were started; Dragons go on an "
    "opponent's row end, a Knight frees your blocked row."
)


def _room_text(card: int, helmet: int) -> str:
    """The room as it lies in its row: entry>exit in that row's orientation."""
    return f"{SIDE_SHORT[ENTRY[helmet][card]]}>{SIDE_SHORT[EXIT[helmet][card]]}"


def render_ansi(state: CastleRoomsState) -> str:
    lines = [
        f"Castle Rooms, {state.num_players} players, turn {state.turn}, "
        f"deck {len(state.deck)}, discard {len(state.discard)}"
    ]
    for seat in range(state.num_players):
        marker = "*" if seat == state.current_player else " "
        lines.append(
            f"{marker}player_{seat}: {len(state.hands[seat])} cards in hand, "
            f"best rows {[x for x in state.score(seat) if x]}"
        )
        for r, row in enumerate(state.rows[seat]):
            cards = " ".join(f"R{c}({_room_text(c, row.helmet)})" for c in row.cards)
            blocker = f" | DRAGON#{row.dragon}" if row.dragon >= 0 else ""
            lines.append(
                f"   row {r} helmet {HELMET[row.helmet]:4} [{len(row.cards):2}] {cards}{blocker}"
            )
    if state.is_terminal():
        how = "a row of 10 Rooms" if state.end_reason == "row" else "longest rows at deck-out"
        lines.append(f"game over ({how}): winners {[f'player_{w}' for w in state.winners]}")  # type: ignore[union-attr]
    else:
        hand = ", ".join(f"{i}:{card_name(c)}" for i, c in enumerate(state.hands[state.player]))
        lines.append(f"player_{state.player} to act, hand: {hand}")
    return "\n".join(lines)


# --- the picture ----------------------------------------------------------------------------
# The canvas has one size per player count (frames make a video); within it the table's rows
# are laid out afresh for each position (``table_layout``): one or two columns of rows, the
# Rooms as large as the busiest seat's rows and the longest row allow (a few short rows get
# big cards; twelve rows of ten shrink them to fit), the same size for every seat.
CARD_W, CARD_H = 40, 26  # the legend's sample Room
CARD_ASPECT = CARD_W / CARD_H
MAX_CARD_W = 96  # no bigger than this, however few the cards
ROWS_PER_COLUMN = MAX_ROWS // 2
LABEL_W = 50
WIDTH = 1088  # video encoders like multiples of 16
BAND_H = 212
BAND_HEAD = 24  # the seat's title line
TOP = 40
BOTTOM_H = 112
STONE = (232, 220, 192)
STONE_EDGE = (96, 74, 52)
STAIRS = (120, 70, 40)
CORRIDOR = (60, 60, 70)
DRAGON_RED = (176, 36, 28)
KNIGHT_BLUE = (44, 80, 170)
SEAT_COLORS = ((220, 70, 60), (70, 130, 230), (236, 196, 60), (90, 190, 100))


def height_for(players: int) -> int:
    return -(-(TOP + players * BAND_H + BOTTOM_H) // 16) * 16


def _side(scene: Scene, x: float, y: float, w: float, h: float, side: int, left_edge: bool) -> None:
    """One side's marks: stairs in the lane at the card's edge, the corridor inside it;
    each sits high or low (sized to the card)."""
    code = SIDE_SHORT[side]
    mark = max(2.0, min(h / 2 - 3, (w - 6) / 4, 0.35 * h))
    lanes = (x + 1.5, x + 2.5 + mark) if left_edge else (x - 1.5 - mark, x - 2.5 - 2 * mark)
    for lane, kind, level in ((lanes[0], "stairs", code[0]), (lanes[1], "corridor", code[1])):
        top = y + 2 if level == "H" else y + h - 2 - mark
        if kind == "stairs":
            s = mark / 3
            if left_edge:  # steps rising towards the card's edge
                pts = [
                    (lane, top),
                    (lane + s, top),
                    (lane + s, top + s),
                    (lane + 2 * s, top + s),
                    (lane + 2 * s, top + 2 * s),
                    (lane + mark, top + 2 * s),
                    (lane + mark, top + mark),
                    (lane, top + mark),
                ]
            else:
                pts = [
                    (lane + mark, top),
                    (lane + 2 * s, top),
                    (lane + 2 * s, top + s),
                    (lane + s, top + s),
                    (lane + s, top + 2 * s),
                    (lane, top + 2 * s),
                    (lane, top + mark),
                    (lane + mark, top + mark),
                ]
            scene.polygon(pts, STAIRS)
        else:
            scene.rect(lane, top + mark * 0.3, mark, mark * 0.45, fill=CORRIDOR)


def room(
    scene: Scene, x: float, y: float, card: int, helmet: int, w: float = CARD_W, h: float = CARD_H
) -> None:
    """A Room lying in a row of the given helmet orientation."""
    scene.rect(x, y, w, h, fill=STONE, outline=STONE_EDGE, radius=3)
    _side(scene, x, y, w, h, ENTRY[helmet][card], True)
    _side(scene, x + w, y, w, h, EXIT[helmet][card], False)


def helmet_icon(
    scene: Scene, cx: float, cy: float, size: float, helmet: int, color: Color = WHITE
) -> None:
    """A helmet, dome up (helmet up) or dome down."""
    r = size / 2
    sign = -1 if helmet == 0 else 1
    pts = [(cx + r * np.cos(t), cy + sign * r * np.sin(t)) for t in np.linspace(0, np.pi, 9)]
    scene.polygon(pts + [(cx - r, cy - sign * r * 0.25), (cx + r, cy - sign * r * 0.25)], color)
    scene.rect(
        cx - r * 0.15, cy - (r * 0.25 if helmet == 0 else 0), r * 0.3, r * 0.6, fill=FELT_DARK
    )


def dragon_card(scene: Scene, x: float, y: float, w: float = CARD_W, h: float = CARD_H) -> None:
    scene.rect(x, y, w, h, fill=DRAGON_RED, outline=BLACK, radius=3)
    scene.text(
        x + 2, y + 2, w - 4, h - 4, "Dragon", WHITE, max(9, min(16, h * 0.38)), "center", bold=True
    )


def knight_card(scene: Scene, x: float, y: float, w: float, h: float) -> None:
    scene.rect(x, y, w, h, fill=KNIGHT_BLUE, outline=BLACK, radius=3)
    cx, top = x + w / 2, y + h / 2 - 12
    scene.polygon(
        [(cx - 10, top), (cx + 10, top), (cx + 10, top + 12), (cx, top + 24), (cx - 10, top + 12)],
        (220, 220, 230),
    )  # a shield


@dataclass(frozen=True)
class TableLayout:
    """Where a position's rows go: ``columns`` of ``rows_per_column`` rows in each seat's
    band, ``slots`` card places per row, cards ``card_w`` x ``card_h`` at ``pitch`` across
    and ``row_pitch`` down."""

    columns: int
    rows_per_column: int
    slots: int
    card_w: float
    card_h: float
    pitch: float
    row_pitch: float
    column_w: float


def table_layout(state: CastleRoomsState) -> TableLayout:
    """The largest cards that fit every seat's rows in its band: tried with the rows in one
    column and in two, the better kept. Room is left for one more card per row (the next
    Room, a Dragon) and at least five, so cards do not shrink at every move."""
    rows = max([len(r) for r in state.rows] + [2])
    slots = (
        max([len(row.cards) + (row.dragon >= 0) for seat in state.rows for row in seat] + [4]) + 1
    )
    slots = min(slots, WIN_LENGTH + 1)
    inner_w = WIDTH - 32
    inner_h = BAND_H - 6 - BAND_HEAD - 6
    best = None
    for columns in (1, 2):
        per_column = -(-rows // columns)
        column_w = inner_w / columns
        w_room = (column_w - LABEL_W - (10 if columns > 1 else 0)) / slots
        h_room = inner_h / per_column
        card_w = min(w_room - 2, (h_room - 4) * CARD_ASPECT, MAX_CARD_W)
        if best is None or card_w > best.card_w:
            best = TableLayout(
                columns,
                per_column,
                slots,
                card_w,
                card_w / CARD_ASPECT,
                card_w + 2,
                h_room,
                column_w,
            )
    assert best is not None
    return best


def _band(scene: Scene, state: CastleRoomsState, seat: int, layout: TableLayout) -> None:
    top = TOP + seat * BAND_H
    acting = seat == state.current_player
    won = state.winners is not None and seat in state.winners
    scene.rect(
        8,
        top,
        WIDTH - 16,
        BAND_H - 6,
        fill=(30, 104, 60) if acting else None,
        outline=GOLD if won or acting else (60, 120, 80),
        line=2 if won or acting else 1,
        radius=8,
    )
    scene.circle(24, top + 13, 6, SEAT_COLORS[seat])
    title = f"player_{seat}" + (" · to act" if acting else "") + (" · WINNER" if won else "")
    scene.text(36, top + 3, 260, 20, title, GOLD if won else WHITE, 14, bold=True)
    longest = [x for x in state.score(seat) if x][:4]
    scene.text(
        300,
        top + 3,
        420,
        20,
        f"{len(state.hands[seat])} cards in hand · longest rows "
        + (", ".join(map(str, longest)) if longest else "none"),
        PALE,
        12,
    )
    w, h, pitch = layout.card_w, layout.card_h, layout.pitch
    for r, row in enumerate(state.rows[seat]):
        col, line = divmod(r, layout.rows_per_column)
        x = 16 + col * layout.column_w
        y = top + BAND_HEAD + line * layout.row_pitch + (layout.row_pitch - h) / 2
        scene.text(x, y + h / 2 - 10, 22, 20, str(r), PALE, 13, "right")
        helmet_icon(scene, x + 36, y + h / 2, max(10, min(20, h * 0.5)), row.helmet)
        for i, card in enumerate(row.cards):
            room(scene, x + LABEL_W + i * pitch, y, card, row.helmet, w, h)
        if len(row.cards) == WIN_LENGTH:
            scene.rect(
                x + LABEL_W - 3,
                y - 2,
                WIN_LENGTH * pitch + 4,
                h + 4,
                outline=GOLD,
                line=2,
                radius=4,
            )
        if row.dragon >= 0:
            dragon_card(scene, x + LABEL_W + len(row.cards) * pitch, y, w, h)


def _bottom(scene: Scene, state: CastleRoomsState, top: float) -> None:
    scene.rect(0, top, WIDTH, scene.height - top, fill=FELT_DARK)
    if state.is_terminal():
        how = (
            "a row of 10 Rooms"
            if state.end_reason == "row"
            else "the longest rows when the deck ran out"
        )
        scene.text(16, top + 8, 350, 20, f"Won by {how}", WHITE, 14, bold=True)
    else:
        hand = state.hands[state.player]
        scene.text(
            16,
            top + 8,
            350,
            20,
            f"player_{state.player}'s hand (slots 0-{len(hand) - 1})"
            if hand
            else f"player_{state.player}'s hand is empty",
            WHITE,
            14,
            bold=True,
        )
        for i, card in enumerate(hand):
            x = 16 + i * 84
            kind = KIND[card]
            if kind == DRAGON:
                dragon_card(scene, x, top + 32, 76, 40)
            elif kind == KNIGHT:
                knight_card(scene, x, top + 32, 76, 40)
            else:
                room(scene, x, top + 32, card, 0, 76, 40)
            name = (
                "Dragon"
                if kind == DRAGON
                else "Knight"
                if kind == KNIGHT
                else f"R{card} {_room_text(card, 0)}"
            )
            scene.text(x - 2, top + 74, 80, 14, name, WHITE, 11, "center")
            scene.text(x, top + 90, 76, 14, f"slot {i}", PALE, 11, "center")
    scene.text(
        380,
        top + 8,
        300,
        20,
        f"Deck {len(state.deck)} · discard {len(state.discard)}",
        WHITE,
        14,
        bold=True,
    )
    lx = 380
    room(scene, lx, top + 36, 0, 0, 40, 26)
    scene.text(
        lx + 48,
        top + 32,
        WIDTH - lx - 64,
        16,
        "Each side of a Room: stairs (outer) and a corridor (inner), each high or low;",
        PALE,
        12,
    )
    scene.text(
        lx + 48,
        top + 48,
        WIDTH - lx - 64,
        16,
        "a Room fits when its left side matches the right side of the card before it.",
        PALE,
        12,
    )
    helmet_icon(scene, lx + 20, top + 80, 14, 0)
    helmet_icon(scene, lx + 40, top + 80, 14, 1)
    scene.text(
        lx + 54,
        top + 72,
        WIDTH - lx - 70,
        16,
        "A row's helmet: up, or down (cards turned: sides swap, high and low swap).",
        PALE,
        12,
    )


def build_scene(state: CastleRoomsState) -> Scene:
    """A fixed-size picture per player count (so frames make a video)."""
    scene = Scene(WIDTH, height_for(state.num_players))
    if state.is_terminal():
        winners = state.winners
        assert winners is not None  # the game is over
        names = " and ".join(f"player_{w}" for w in winners)
        status = f"{names} win{'s' * (len(winners) == 1)}"
    else:
        status = f"player_{state.player} to act: play cards, then end the turn"
    scene.header(
        "Castle Rooms",
        f"{state.num_players} players · turn {state.turn}",
        status,
        1 if state.is_terminal() else 0,
        title_w=150,
    )
    layout = table_layout(state)
    for seat in range(state.num_players):
        _band(scene, state, seat, layout)
    _bottom(scene, state, TOP + state.num_players * BAND_H)
    return scene


render_rgb, render_svg = scene_renderers(build_scene)


def events(before: CastleRoomsState, after: CastleRoomsState) -> list[str]:
    """What a move set off, in words (the replay viewer lists them under each move)."""
    out = []
    if after.winners is not None:
        names = " and ".join(f"player_{w}" for w in after.winners)
        how = "a row of 10 Rooms" if after.end_reason == "row" else "the longest rows at deck-out"
        out.append(f"game over: {names} win{'s' * (len(after.winners) == 1)} ({how})")
    elif after.player != before.player:
        drawn = len(before.deck) - len(after.deck)
        out.append(
            f"player_{after.player}'s turn: drew {drawn} card{'s' * (drawn != 1)}"
            f" (deck {len(after.deck)})"
        )
    return out
