"""Castle Siege pictures: a compact text table (``ansi``) and a card table (``rgb_array``).

The picture: the four castles with their defender columns (older defenders higher up, each
card's rank and suit readable), the hand with its slot numbers (moves name slots), the
deck with the recycled cards known to lie at its bottom, the discard pile card by card, the
rule events so far and what the player is deciding now. The deck's order stays hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.scene import BLACK, GOLD, MUTED, PALE, PAPER, SUIT_COLORS, WHITE, Scene, scene_renderers
from .actions import Play, RoyalCapture
from .cards import CASTLE_NAMES, RANK_NAMES, RANKS, card_name
from .rules import BATTLE, DIFFICULTIES, DISCARD, PRECISION, ROYAL, State

#: what the notation means (a terminal player prints it)
LEGEND = (
    "Cards are rank + suit: A 2-10 J Q K (1-13) and ♠ ♣ ♥ ♦ (S C H D also work). "
    "Hand slots count from 0 in the order the hand is shown: by suit (♠ ♣ ♥ ♦), then by "
    "rank within a suit. Attack a defender with cards summing to "
    "at least its rank (exactly: Precision Strike, recycle a discard); capture a castle "
    "with no defenders left by summing exactly to its rank; J+Q+K of three suits: Royal "
    "Assault."
)
#: A terminal player reads card names typed with suit letters (``JD``, ``10h``)
TYPED_CARDS = True


#: the move classes of ``move_order``, most useful first
MOVE_CAPTURE, MOVE_ROYAL, MOVE_EXACT, MOVE_OTHER, MOVE_OVERKILL = range(5)


def move_order(state: State, action: int) -> tuple[int, int, int]:
    """The order a terminal player lists moves in: (class, rank wasted, cards) — captures,
    Royal Assault's castle choices, exact hits (a Precision Strike), then the other moves
    (regroup, end the battle, a recycle, a discard), then over-kill attacks by how far their
    sum exceeds the defender's rank, fewest cards first."""
    move = state.actions.decode(action)
    if isinstance(move, RoyalCapture):
        return (MOVE_ROYAL, 0, 0)
    if not isinstance(move, Play):
        return (MOVE_OTHER, 0, 0)
    cards = len(move.slots)
    if state.castle_index(move.target) >= 0:
        return (MOVE_CAPTURE, 0, cards)
    waste = sum(RANKS[int(state.hand[i])] for i in move.slots) - RANKS[move.target]
    return (MOVE_EXACT, 0, cards) if waste == 0 else (MOVE_OVERKILL, waste, cards)


def render_ansi(state: State) -> str:
    lines = [
        f"Castle Siege  turn {state.turn}  deck {state.deck_size}  "
        f"discard {int(state.discard.sum())}" + ("  [regroup used]" if state.regroup_used else "")
    ]
    depth = max([len(state.column(c)) for c in range(4)] + [0])
    header = []
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
        lines.append(
            "VICTORY: all four castles captured"
            if state.won
            else "DEFEAT: the reinforcement deck ran out"
        )
    else:
        lines.append(f"now: {PROMPTS[state.phase]}")
    return "\n".join(lines)


# --- the picture ----------------------------------------------------------------------------
WIDTH, HEIGHT = 880, 704
CARD_W, CARD_H = 84, 110
COL_PITCH = 136
LEFT = 20
CASTLE_TOP = 76
COLUMN_TOP = CASTLE_TOP + CARD_H + 34
HAND_TOP = HEIGHT - CARD_H - 48
COLUMN_BOTTOM = HAND_TOP - 34  # the lowest column card ends above the hand's label
STEP_MAX, STEP_MIN = 30, 19  # vertical offset of stacked defenders
PANEL = LEFT + 4 * COL_PITCH  # the right-hand panel
CASTLE_PLATES = (BLACK, SUIT_COLORS[1], SUIT_COLORS[2], SUIT_COLORS[3])
CARD_BACK = (46, 70, 150)
PROMPTS = {
    BATTLE: "Battle: attack, capture, regroup or end the battle",
    PRECISION: "Precision Strike: recycle a discard to the deck's bottom",
    ROYAL: "Royal Assault: choose a castle to capture",
    DISCARD: "End of turn: discard down to 5 cards",
}
EVENT_LABELS = (
    ("castles_captured", "castles captured"),
    ("defenders_defeated", "defenders defeated"),
    ("precision_strikes", "precision strikes"),
    ("flush_sieges", "flush sieges"),
    ("royal_assaults", "royal assaults"),
    ("regroups", "regroups"),
)


def card_face(
    scene: Scene,
    x: float,
    y: float,
    card: int,
    w: float = CARD_W,
    h: float = CARD_H,
    dim: bool = False,
    big: bool = True,
) -> None:
    """A face-up card: rank and suit in the top corner (readable when stacked) and, when
    the card shows whole, a large suit in the middle."""
    suit, rank = card // 13, card % 13
    ink = MUTED if dim else SUIT_COLORS[suit]
    scene.rect(x, y, w, h, fill=(214, 214, 210) if dim else PAPER, outline=(90, 90, 90), radius=6)
    scene.text(x + 5, y + 2, 27, 17, RANK_NAMES[rank], ink, 15, "center", bold=True)
    scene.suit(x + 40, y + 10.5, 12, suit, ink)
    if big:
        if rank >= 10:  # court cards: the letter framed, for the Royal Assault
            scene.rect(x + w / 2 - 22, y + h / 2 - 20, 44, 52, outline=GOLD, line=2, radius=4)
            scene.text(
                x + w / 2 - 20,
                y + h / 2 - 16,
                40,
                30,
                RANK_NAMES[rank],
                ink,
                26,
                "center",
                bold=True,
            )
            scene.suit(x + w / 2, y + h / 2 + 23, 12, suit, ink)
        else:
            scene.suit(x + w / 2, y + h / 2 + 8, 38, suit, ink)
        scene.text(x + w - 32, y + h - 19, 27, 17, RANK_NAMES[rank], ink, 15, "center", bold=True)


def card_back(scene: Scene, x: float, y: float, w: float, h: float) -> None:
    scene.rect(x, y, w, h, fill=CARD_BACK, outline=WHITE, line=2, radius=6)
    for k in range(1, 6):
        scene.line([(x + 6, y + k * h / 6), (x + w - 6, y + k * h / 6)], (80, 104, 180), 1.5)


def chip(scene: Scene, x: float, y: float, card: int, w: float = 34, h: float = 20) -> None:
    """A small card: rank and suit, for piles shown card by card."""
    suit = card // 13
    scene.rect(x, y, w, h, fill=PAPER, outline=(90, 90, 90), radius=3)
    scene.text(
        x + 1, y + 1, 19, h - 2, RANK_NAMES[card % 13], SUIT_COLORS[suit], 12, "center", bold=True
    )
    scene.suit(x + 26, y + h / 2, 10, suit)


def _castle(scene: Scene, state: State, c: int) -> None:
    x = LEFT + c * COL_PITCH
    scene.rect(x - 4, CASTLE_TOP - 30, CARD_W + 8, 24, fill=CASTLE_PLATES[c], radius=4)
    scene.text(
        x, CASTLE_TOP - 30, CARD_W, 24, f"{CASTLE_NAMES[c]} castle", WHITE, 14, "center", bold=True
    )
    card = int(state.castles[c])
    for k in range(5):  # battlements on top of the castle card
        scene.rect(x + 4 + k * 17, CASTLE_TOP - 5, 9, 6, fill=(150, 150, 140))
    card_face(scene, x, CASTLE_TOP, card, dim=bool(state.captured[c]), big=not state.captured[c])
    column = state.column(c)
    if state.captured[c]:
        scene.rect(x - 4, CASTLE_TOP + CARD_H / 2 - 11, CARD_W + 8, 22, fill=GOLD, outline=BLACK)
        scene.text(
            x - 2,
            CASTLE_TOP + CARD_H / 2 - 11,
            CARD_W + 4,
            22,
            "CAPTURED",
            BLACK,
            13,
            "center",
            bold=True,
        )
        note = "captured"
    elif column:
        note = f"{len(column)} defender{'s' * (len(column) != 1)}"
    else:
        note = f"capture: exactly {card % 13 + 1}"
    scene.text(x - 6, CASTLE_TOP + CARD_H + 4, CARD_W + 12, 18, note, PALE, 12, "center")
    _column(scene, x, column)


def _column(scene: Scene, x: float, column: Sequence[int]) -> None:
    room = COLUMN_BOTTOM - COLUMN_TOP - CARD_H
    top = COLUMN_TOP
    if len(column) - 1 > room // STEP_MIN:  # the oldest defenders: counted, not drawn
        room -= 20
        keep = int(room // STEP_MIN) + 1
        scene.text(
            x, top, CARD_W, 18, f"+{len(column) - keep} older", WHITE, 12, "center", bold=True
        )
        top += 20
        column = column[-keep:]
    step = STEP_MAX if len(column) < 2 else min(STEP_MAX, room / (len(column) - 1))
    for i, card in enumerate(column):
        card_face(scene, x, top + i * step, card, big=i == len(column) - 1)


def _panel(scene: Scene, state: State) -> None:
    x, w = PANEL, WIDTH - PANEL - 16
    scene.text(
        x,
        46,
        w,
        20,
        f"Deck: {state.deck_size} card{'s' * (state.deck_size != 1)}",
        WHITE,
        15,
        bold=True,
    )
    if state.deck_size:
        card_back(scene, x, 70, 56, 74)
    else:
        scene.rect(x, 70, 56, 74, outline=PALE, radius=6)
    recycled = [c for c in state.deck_cards() if state.recycled[c]]
    note = (
        f"{len(recycled)} known at the bottom:"
        if recycled
        else "order hidden"
        if state.deck_size
        else "empty"
    )
    scene.text(x + 66, 70, w - 66, 18, note, PALE, 12)
    for i, card in enumerate(recycled[:12]):  # top to bottom, as they lie
        chip(scene, x + 66 + (i % 6) * 37, 92 + (i // 6) * 23, card)
    discard = np.flatnonzero(state.discard)
    top = 158
    scene.text(x, top, w, 20, f"Discard pile: {len(discard)}", WHITE, 15, bold=True)
    for i, discarded in enumerate(discard):
        chip(scene, x + (i % 8) * 37, top + 24 + (i // 8) * 23, int(discarded))
    top = 158 + 24 + 6 * 23 + 10
    scene.text(x, top, w, 20, "So far", WHITE, 15, bold=True)
    counts = state.event_counts()
    for i, (key, label) in enumerate(EVENT_LABELS):
        value = f"{counts[key]} / 4" if key == "castles_captured" else str(counts[key])
        scene.text(x + 8, top + 24 + i * 19, w - 60, 18, label, PALE, 13)
        scene.text(x + w - 52, top + 24 + i * 19, 52, 18, value, WHITE, 13, "right", bold=True)


def _hand(scene: Scene, state: State) -> None:
    hand = state.hand_cards()
    scene.text(
        LEFT,
        HAND_TOP - 26,
        220,
        20,
        "Hand" + (" (regroup used)" if state.regroup_used else ""),
        WHITE,
        15,
        bold=True,
    )
    if not hand:
        scene.text(LEFT, HAND_TOP, 300, 20, "(empty)", PALE, 13)
    pitch = min(CARD_W + 12, (PANEL - LEFT - CARD_W - 8) / max(1, len(hand) - 1))
    for i, card in enumerate(hand):
        x = LEFT + i * pitch
        card_face(scene, x, HAND_TOP, card)
        scene.text(x, HAND_TOP + CARD_H + 3, CARD_W, 16, f"slot {i}", PALE, 12, "center")


def build_scene(state: State) -> Scene:
    scene = Scene(WIDTH, HEIGHT)
    level = {v: k for k, v in DIFFICULTIES.items()}[state.rows].replace("_", " ").title()
    if state.is_terminal():
        status = "Victory: all four castles captured" if state.won else "Defeat: the deck ran out"
    else:
        status = PROMPTS[state.phase]
    scene.header("Castle Siege", f"{level} · turn {state.turn}", status, state.outcome, title_w=136)
    for c in range(4):
        _castle(scene, state, c)
    _panel(scene, state)
    _hand(scene, state)
    return scene


render_rgb, render_svg = scene_renderers(build_scene)


_EVENT_WORDS = (
    ("precision_strikes", "Precision Strike"),
    ("flush_sieges", "Flush Siege (drew a card)"),
    ("royal_assaults", "Royal Assault"),
    ("regroups", "Regroup: a new hand"),
)


def events(before: State, after: State) -> list[str]:
    """What a move set off, in words (the replay viewer lists them under each move)."""
    out = []
    b, a = before.event_counts(), after.event_counts()
    defeated = a["defenders_defeated"] - b["defenders_defeated"]
    if defeated:
        out.append(f"{defeated} defender{'s' * (defeated != 1)} defeated")
    for key, words in _EVENT_WORDS:
        if a[key] > b[key]:
            out.append(words)
    for c in range(4):
        if after.captured[c] and not before.captured[c]:
            out.append(
                f"the {CASTLE_NAMES[c]} castle ({card_name(int(after.castles[c]))}) is captured"
            )
    if after.turn > before.turn and not after.is_terminal():
        out.append(
            f"turn {after.turn}: new defenders dealt, hand refilled "
            f"({after.hand_size} cards, deck {after.deck_size})"
        )
    if after.is_terminal():
        out.append("Victory" if after.won else "Defeat: the deck ran out")
    return out
