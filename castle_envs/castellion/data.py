"""Castellion's components: tiles, pile composition and the 24 Ordeal cards.

Tile kinds are small ints: a Defender is ``faction * 3 + shape`` (0-11), then the normal
Traitor (12) and the black-bordered Traitor (13). Defenders of one faction and shape are
interchangeable, so piles, discard pile and castle hold kinds, not tile serial numbers.

The Simulation cards (academy level) appear in no source: the seven below are
*reconstructed* (see RULES.md, "Reconstructed components") and marked so in ``ORDEALS``.
"""

from __future__ import annotations

from typing import NamedTuple

FACTIONS = ("seer", "chameleon", "juggler", "pyro")
SHAPES = ("triangle", "square", "circle")
SEER, CHAMELEON, JUGGLER, PYRO = range(4)
FACTION_LETTERS = "SCJP"
SHAPE_GLYPHS = "^#o"

NUM_DEFENDER_KINDS = 12
TRAITOR = 12
BLACK_TRAITOR = 13
NUM_KINDS = 14
NO_TILE = -1

KIND_NAMES = tuple(f"{f}-{s}" for f in FACTIONS for s in SHAPES) + ("traitor", "black-traitor")
KIND_BY_NAME = {name: k for k, name in enumerate(KIND_NAMES)}

#: tiles per kind in the brown-back regular pile: 5 of each Defender, 9 normal and 3 black
#: Traitors (components.md; 72 tiles)
REGULAR_COUNTS = (5,) * NUM_DEFENDER_KINDS + (9, 3)
#: tiles per kind in the blue-back safe pile: one of each Defender (12 tiles)
SAFE_COUNTS = (1,) * NUM_DEFENDER_KINDS + (0, 0)
TOTAL_COUNTS = tuple(r + s for r, s in zip(REGULAR_COUNTS, SAFE_COUNTS))
NUM_TILES = sum(TOTAL_COUNTS)  # 84

LEVELS = ("school", "academy", "menace")
SCHOOL, ACADEMY, MENACE = range(3)


def faction_of(kind: int) -> int:
    return kind // 3


def shape_of(kind: int) -> int:
    return kind % 3


def short_name(kind: int) -> str:
    """Two characters for text boards: faction letter + shape glyph; T = Traitor, B = black."""
    if kind == TRAITOR:
        return "T "
    if kind == BLACK_TRAITOR:
        return "B "
    return FACTION_LETTERS[kind // 3] + SHAPE_GLYPHS[kind % 3]


# --- Ordeal cards --------------------------------------------------------------------------
FORMATIONS, ROWS, ASSAULT = "formations", "rows", "assault"


class Ordeal(NamedTuple):
    name: str
    title: str
    level: int
    slot: int  # 0, 1, 2 = the card's numeral I, II, III
    traitors: int  # Traitor tiles that force the encounter
    kind: str  # FORMATIONS (fail = loss), ROWS (destroy bottom rows), ASSAULT
    towers: int = 0  # formations required (at least this many of each)
    bastions: int = 0
    lines: int = 0
    rows: int = 0  # ROWS: bottom rows destroyed
    penalty: int = 0  # ASSAULT: tiles destroyed when the formations are missing
    reconstructed: bool = False


def _assaults() -> list:
    cards = []
    for slot, (need, penalty) in enumerate(((2, 16), (3, 32), (5, 42))):
        numeral = "I" * (slot + 1)
        cards += [
            Ordeal(
                f"assault-{slot + 1}-behemoth",
                f"Assault {numeral}: Behemoth",
                MENACE,
                slot,
                2,
                ASSAULT,
                bastions=need,
                penalty=penalty,
            ),
            Ordeal(
                f"assault-{slot + 1}-horde",
                f"Assault {numeral}: Horde",
                MENACE,
                slot,
                2,
                ASSAULT,
                lines=need,
                penalty=penalty,
            ),
            Ordeal(
                f"assault-{slot + 1}-harpy",
                f"Assault {numeral}: Harpy",
                MENACE,
                slot,
                2,
                ASSAULT,
                towers=need,
                penalty=penalty,
            ),
            Ordeal(
                f"assault-{slot + 1}-earthworm",
                f"Assault {numeral}: Earthworm",
                MENACE,
                slot,
                2,
                ROWS,
                rows=slot + 1,
            ),
        ]
    return cards


ORDEALS = tuple(
    [
        Ordeal("exam-1", "Exam I", SCHOOL, 0, 5, FORMATIONS, towers=1, bastions=1, lines=1),
        Ordeal("exam-2", "Exam II", SCHOOL, 1, 2, ROWS, rows=1),
        Ordeal("exam-3a", "Exam III a", SCHOOL, 2, 5, FORMATIONS, bastions=3, lines=2),
        Ordeal("exam-3b", "Exam III b", SCHOOL, 2, 5, FORMATIONS, lines=3, towers=2),
        Ordeal("exam-3c", "Exam III c", SCHOOL, 2, 5, FORMATIONS, towers=3, bastions=2),
        # reconstructed: no source gives the Simulation cards (RULES.md explains the grading)
        Ordeal(
            "sim-1",
            "Simulation I",
            ACADEMY,
            0,
            3,
            FORMATIONS,
            towers=1,
            bastions=1,
            lines=1,
            reconstructed=True,
        ),
        Ordeal(
            "sim-2a",
            "Simulation II a",
            ACADEMY,
            1,
            3,
            FORMATIONS,
            bastions=2,
            lines=1,
            reconstructed=True,
        ),
        Ordeal(
            "sim-2b",
            "Simulation II b",
            ACADEMY,
            1,
            3,
            FORMATIONS,
            lines=2,
            towers=1,
            reconstructed=True,
        ),
        Ordeal(
            "sim-2c",
            "Simulation II c",
            ACADEMY,
            1,
            3,
            FORMATIONS,
            towers=2,
            bastions=1,
            reconstructed=True,
        ),
        Ordeal(
            "sim-3a",
            "Simulation III a",
            ACADEMY,
            2,
            3,
            FORMATIONS,
            bastions=2,
            lines=2,
            reconstructed=True,
        ),
        Ordeal(
            "sim-3b",
            "Simulation III b",
            ACADEMY,
            2,
            3,
            FORMATIONS,
            lines=2,
            towers=2,
            reconstructed=True,
        ),
        Ordeal(
            "sim-3c",
            "Simulation III c",
            ACADEMY,
            2,
            3,
            FORMATIONS,
            towers=2,
            bastions=2,
            reconstructed=True,
        ),
    ]
    + _assaults()
)
NUM_ORDEALS = len(ORDEALS)  # 24
ORDEAL_BY_NAME = {card.name: i for i, card in enumerate(ORDEALS)}
#: card ids per level and slot: the setup draws one card for each of the three slots
ORDEALS_BY_SLOT = tuple(
    tuple(
        tuple(i for i, c in enumerate(ORDEALS) if c.level == level and c.slot == slot)
        for slot in range(3)
    )
    for level in range(3)
)


def ordeal_requirement(card: Ordeal) -> str:
    if card.kind == ROWS:
        return f"destroy the bottom {card.rows} row{'s' if card.rows > 1 else ''}"
    parts = [
        f"{n} {name}{'s' if n > 1 else ''}"
        for n, name in ((card.towers, "tower"), (card.bastions, "bastion"), (card.lines, "line"))
        if n
    ]
    text = " + ".join(parts)
    if card.kind == ASSAULT:
        text += f", else destroy {card.penalty}"
    return text
