"""What a picture is made of, below the backends that draw it: the palette, the ``Text``
and ``Fit`` records, ``Shapes`` (a fixed-size list of drawing commands) and the text-fitting
helpers every backend shares.

``core.scene.Scene`` (a ``Shapes`` with composite symbols and the outputs ``to_rgb``,
``to_svg``, ``layout_problems``) sits above the backends (``raster``, ``pil_raster``,
``svg``), which read only what is here; the renderers import everything from ``scene``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

Color = tuple

# --- the palette every game shares ------------------------------------------------------
WHITE = (255, 255, 255)
BLACK = (20, 20, 20)
FELT = (26, 92, 52)
FELT_DARK = (18, 66, 38)
INK = (34, 34, 40)
MUTED = (120, 120, 128)
PAPER = (250, 248, 240)
GOLD = (214, 170, 40)
RED = (200, 40, 40)
GREEN = (30, 130, 60)
BLUE = (45, 85, 185)
PALE = (205, 225, 210)

SVG_FONT_FAMILY = "CastleEnvsSans, Aileron, 'Helvetica Neue', Arial, sans-serif"

#: suit colours (♠ ♣ ♥ ♦): the castles' colours in Castle Siege
SUIT_COLORS = (BLACK, (22, 122, 52), (204, 30, 36), (206, 140, 0))

# characters the Aileron font lacks, written with ones it has
_ASCII = {
    "×": "x",
    "–": "-",
    "—": "-",
    "→": "->",
    "←": "<-",
    "≥": ">=",
    "≤": "<=",
    "•": "·",
    "’": "'",
    "“": '"',
    "”": '"',
}


def plain_text(text: str) -> str:
    """``text`` in the characters every backend draws: accents dropped, dashes and signs
    the font lacks written in ASCII, anything else as '?'."""
    out = []
    for ch in str(text):
        ch = _ASCII.get(ch, ch)
        if len(ch) == 1 and ch not in _KEEP:
            ch = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode() or "?"
        out.append(ch)
    return "".join(out)


_KEEP = set(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
    "abcdefghijklmnopqrstuvwxyz{|}~·…°"
)


@dataclass
class Text:
    x: float
    y: float
    w: float
    h: float
    text: str
    color: Color
    size: float
    align: str = "left"  # left, center, right (vertically always centred)
    bold: bool = False


@dataclass
class Fit:
    """How a backend drew one text: the string and size it used and the ink's box."""

    item: Text
    text: str
    size: float
    ink: tuple | None  # (left, top, right, bottom) in scene pixels; empty text: None

    @property
    def truncated(self) -> bool:
        return self.text != self.item.text


class Shapes:
    """A fixed-size picture as drawing commands, in pixels (origin top left): what a
    backend draws (``Scene`` adds the composite symbols and the outputs)."""

    def __init__(self, width: int, height: int, background: Color = FELT) -> None:
        self.width, self.height, self.background = int(width), int(height), background
        self.items: list = []

    # --- shapes ------------------------------------------------------------------------
    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: Color | None = None,
        outline: Color | None = None,
        line: float = 1.0,
        radius: float = 0.0,
    ) -> None:
        self.items.append(
            (
                "rect",
                float(x),
                float(y),
                float(w),
                float(h),
                fill,
                outline,
                float(line),
                float(radius),
            )
        )

    def polygon(
        self,
        points: Sequence[tuple[float, float]],
        fill: Color | None = None,
        outline: Color | None = None,
        line: float = 1.0,
    ) -> None:
        pts = tuple((float(a), float(b)) for a, b in points)
        self.items.append(("polygon", pts, fill, outline, float(line)))

    def ellipse(
        self,
        cx: float,
        cy: float,
        rx: float,
        ry: float,
        fill: Color | None = None,
        outline: Color | None = None,
        line: float = 1.0,
    ) -> None:
        self.items.append(
            ("ellipse", float(cx), float(cy), float(rx), float(ry), fill, outline, float(line))
        )

    def circle(
        self,
        cx: float,
        cy: float,
        r: float,
        fill: Color | None = None,
        outline: Color | None = None,
        line: float = 1.0,
    ) -> None:
        self.ellipse(cx, cy, r, r, fill, outline, line)

    def line(self, points: Sequence[tuple[float, float]], color: Color, width: float = 1.0) -> None:
        pts = tuple((float(a), float(b)) for a, b in points)
        self.items.append(("line", pts, color, float(width)))

    def text(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        text: str,
        color: Color = INK,
        size: float = 13,
        align: str = "left",
        bold: bool = False,
    ) -> Text:
        """``text`` in the box (x, y, w, h), vertically centred; backends shrink it (down to
        three quarters of ``size``) and then cut it with an ellipsis when it does not fit."""
        item = Text(
            float(x),
            float(y),
            float(w),
            float(h),
            plain_text(text),
            color,
            float(size),
            align,
            bold,
        )
        self.items.append(("text", item))
        return item

    def texts(self) -> list[Text]:
        return [it[1] for it in self.items if it[0] == "text"]


def pillow_available() -> bool:
    try:
        from PIL import features
    except ImportError:
        return False
    return bool(features.check("freetype2"))


def fit_candidates(size: float) -> Iterator[float]:
    """Font sizes to try, largest first: ``size`` down to three quarters of it."""
    low = size * 0.75
    s = size
    while s >= low - 1e-9:
        yield s
        s -= max(0.5, size * 0.05)


def ellipsize(text: str, fits: Callable[[str], bool]) -> str:
    """The longest ``text[:k] + '…'`` that ``fits``; '' when not even '…' does."""
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the kept length
        mid = (lo + hi + 1) // 2
        if fits(text[:mid].rstrip() + "…"):
            lo = mid
        else:
            hi = mid - 1
    out = text[:lo].rstrip() + "…"
    return out if fits(out) else ""
