"""Drawing a ``Scene`` with numpy alone: the fallback when Pillow is not installed.

Shapes are filled by testing pixel centres (polygons by the even-odd rule), without
anti-aliasing; text uses a 3x5 bitmap font (lower case drawn as upper case) at a whole
multiple of its size, the largest that fits the box. The core package depends on numpy
alone, so every env renders ``rgb_array`` frames with or without the ``pictures`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .shapes import Color, Fit, Shapes, Text, ellipsize

# 3 columns x 5 rows per glyph, rows top to bottom
_FONT_ROWS = {
    "0": "111 101 101 101 111",
    "1": "010 110 010 010 111",
    "2": "111 001 111 100 111",
    "3": "111 001 111 001 111",
    "4": "101 101 111 001 001",
    "5": "111 100 111 001 111",
    "6": "111 100 111 101 111",
    "7": "111 001 010 010 010",
    "8": "111 101 111 101 111",
    "9": "111 101 111 001 111",
    "A": "010 101 111 101 101",
    "B": "110 101 110 101 110",
    "C": "011 100 100 100 011",
    "D": "110 101 101 101 110",
    "E": "111 100 110 100 111",
    "F": "111 100 110 100 100",
    "G": "011 100 101 101 011",
    "H": "101 101 111 101 101",
    "I": "111 010 010 010 111",
    "J": "001 001 001 101 010",
    "K": "101 101 110 101 101",
    "L": "100 100 100 100 111",
    "M": "101 111 111 101 101",
    "N": "110 101 101 101 101",
    "O": "010 101 101 101 010",
    "P": "110 101 110 100 100",
    "Q": "010 101 101 110 011",
    "R": "110 101 110 101 101",
    "S": "011 100 010 001 110",
    "T": "111 010 010 010 010",
    "U": "101 101 101 101 111",
    "V": "101 101 101 101 010",
    "W": "101 101 111 111 101",
    "X": "101 101 010 101 101",
    "Y": "101 101 010 010 010",
    "Z": "111 001 010 100 111",
    " ": "000 000 000 000 000",
    ".": "000 000 000 000 010",
    ":": "000 010 000 010 000",
    "-": "000 000 111 000 000",
    "+": "000 010 111 010 000",
    "/": "001 001 010 100 100",
    "?": "111 001 010 000 010",
    "!": "010 010 010 000 010",
    "#": "101 111 101 111 101",
    "(": "010 100 100 100 010",
    ")": "010 001 001 001 010",
    "=": "000 111 000 111 000",
    "*": "000 101 010 101 000",
    "<": "001 010 100 010 001",
    ">": "100 010 001 010 100",
    "'": "010 010 000 000 000",
    ",": "000 000 000 010 100",
    "_": "000 000 000 000 111",
    "[": "110 100 100 100 110",
    "]": "011 001 001 001 011",
    "|": "010 010 010 010 010",
    "…": "000 000 000 000 101",
    "·": "000 000 010 000 000",
    "°": "010 101 010 000 000",
    "%": "101 001 010 100 101",
    "&": "010 101 010 101 011",
    '"': "101 101 000 000 000",
    ";": "000 010 000 010 100",
    "^": "010 101 000 000 000",
    "~": "000 011 110 000 000",
}
GLYPHS = {
    ch: np.array([[c == "1" for c in row] for row in rows.split()], dtype=bool)
    for ch, rows in _FONT_ROWS.items()
}


def glyph_scale(size: float) -> int:
    """Bitmap scale for a font size: 11 px and less draw at 1, 12-17 px at 2, and so on."""
    return max(1, int(size // 6))


def bitmap_width(text: str, scale: int) -> int:
    return max(0, 4 * scale * len(text) - scale)


def _fit(t: Text) -> tuple[str, int]:
    scale = glyph_scale(t.size)
    while scale > 1 and (bitmap_width(t.text, scale) > t.w or 5 * scale > t.h):
        scale -= 1
    if bitmap_width(t.text, scale) <= t.w:
        return t.text, scale
    return ellipsize(t.text, lambda s: bitmap_width(s, scale) <= t.w), scale


class _Pixels:
    def __init__(self, scene: Shapes) -> None:
        self.p = np.empty((scene.height, scene.width, 3), dtype=np.uint8)
        self.p[:] = scene.background
        self.h, self.w = scene.height, scene.width

    def _grid(self, x0: float, y0: float, x1: float, y1: float) -> tuple | None:
        """Pixel-centre coordinates of the clipped box, or None when it is empty."""
        c0, c1 = max(0, int(np.floor(x0))), min(self.w, int(np.ceil(x1)) + 1)
        r0, r1 = max(0, int(np.floor(y0))), min(self.h, int(np.ceil(y1)) + 1)
        if c0 >= c1 or r0 >= r1:
            return None
        ys, xs = np.mgrid[r0:r1, c0:c1]
        return (r0, r1, c0, c1), xs + 0.5, ys + 0.5

    def paint(self, box: tuple[int, int, int, int], mask: np.ndarray, color: Color) -> None:
        r0, r1, c0, c1 = box
        self.p[r0:r1, c0:c1][mask] = color

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: Color | None,
        outline: Color | None,
        line: float,
    ) -> None:
        x0, y0 = int(round(x)), int(round(y))
        x1, y1 = int(round(x + w)), int(round(y + h))
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, self.w), min(y1, self.h)
        if cx0 >= cx1 or cy0 >= cy1:
            return
        if fill is not None:
            self.p[cy0:cy1, cx0:cx1] = fill
        if outline is not None:
            k = max(1, int(round(line)))
            for sl in (
                (slice(cy0, cy1), slice(cx0, min(cx1, x0 + k))),
                (slice(cy0, cy1), slice(max(cx0, x1 - k), cx1)),
                (slice(cy0, min(cy1, y0 + k)), slice(cx0, cx1)),
                (slice(max(cy0, y1 - k), cy1), slice(cx0, cx1)),
            ):
                self.p[sl] = outline

    def polygon(
        self,
        pts: Sequence[tuple[float, float]],
        fill: Color | None,
        outline: Color | None,
        line: float,
    ) -> None:
        xs_, ys_ = [p[0] for p in pts], [p[1] for p in pts]
        if fill is not None:
            g = self._grid(min(xs_), min(ys_), max(xs_), max(ys_))
            if g is not None:
                box, px, py = g
                inside = np.zeros(px.shape, dtype=bool)
                n = len(pts)
                for i in range(n):
                    (x1, y1), (x2, y2) = pts[i], pts[(i + 1) % n]
                    if y1 == y2:
                        continue
                    crosses = (y1 > py) != (y2 > py)
                    x_at = x1 + (py - y1) * (x2 - x1) / (y2 - y1)
                    inside ^= crosses & (px < x_at)
                self.paint(box, inside, fill)
        if outline is not None:
            self.line(list(pts) + [pts[0]], outline, line)

    def ellipse(
        self,
        cx: float,
        cy: float,
        rx: float,
        ry: float,
        fill: Color | None,
        outline: Color | None,
        line: float,
    ) -> None:
        g = self._grid(cx - rx, cy - ry, cx + rx, cy + ry)
        if g is None or rx <= 0 or ry <= 0:
            return
        box, px, py = g
        d = ((px - cx) / rx) ** 2 + ((py - cy) / ry) ** 2
        if fill is not None:
            self.paint(box, d <= 1, fill)
        if outline is not None:
            k = max(1.0, line)
            inner = ((px - cx) / max(rx - k, 0.5)) ** 2 + ((py - cy) / max(ry - k, 0.5)) ** 2
            self.paint(box, (d <= 1) & (inner > 1), outline)

    def line(self, pts: Sequence[tuple[float, float]], color: Color, width: float) -> None:
        r = max(0.5, width / 2)
        for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
            g = self._grid(min(x1, x2) - r, min(y1, y2) - r, max(x1, x2) + r, max(y1, y2) + r)
            if g is None:
                continue
            box, px, py = g
            dx, dy = x2 - x1, y2 - y1
            length2 = dx * dx + dy * dy
            t = (
                np.zeros_like(px)
                if length2 == 0
                else np.clip(((px - x1) * dx + (py - y1) * dy) / length2, 0, 1)
            )
            dist2 = (px - x1 - t * dx) ** 2 + (py - y1 - t * dy) ** 2
            self.paint(box, dist2 <= r * r, color)

    def text(self, fit: Fit) -> None:
        if not fit.text:
            return
        t, scale = fit.item, int(fit.size)
        assert fit.ink is not None  # a text has ink
        left, top = int(fit.ink[0]), int(fit.ink[1])
        x = left
        for ch in fit.text.upper():
            glyph = GLYPHS.get(ch, GLYPHS["?"])
            big = np.kron(glyph, np.ones((scale, scale), dtype=bool))
            if t.bold and scale > 1:  # thicken the strokes one pixel to the right
                big = big | np.pad(big, ((0, 0), (1, 0)))[:, :-1]
            r0, c0 = max(top, 0), max(x, 0)
            r1, c1 = min(top + big.shape[0], self.h), min(x + big.shape[1], self.w)
            if r0 < r1 and c0 < c1:
                region = self.p[r0:r1, c0:c1]
                region[big[r0 - top : r1 - top, c0 - x : c1 - x]] = t.color
            x += 4 * scale


def fit_text(t: Text) -> Fit:
    """How ``t`` is drawn: its string, scale (as ``size``) and ink box, without drawing."""
    text, scale = _fit(t)
    if not text:
        return Fit(t, text, float(scale), None)
    width = bitmap_width(text, scale)
    left = {"left": t.x, "center": t.x + (t.w - width) / 2, "right": t.x + t.w - width}[t.align]
    left = int(round(left))
    top = int(round(t.y + (t.h - 5 * scale) / 2))
    return Fit(t, text, float(scale), (left, top, left + width, top + 5 * scale))


def draw(scene: Shapes) -> tuple[np.ndarray, list[Fit]]:
    px = _Pixels(scene)
    fits = []
    for item in scene.items:
        kind = item[0]
        if kind == "rect":
            _, x, y, w, h, fill, outline, line, _radius = item
            px.rect(x, y, w, h, fill, outline, line)
        elif kind == "polygon":
            px.polygon(*item[1:])
        elif kind == "ellipse":
            px.ellipse(*item[1:])
        elif kind == "line":
            px.line(*item[1:])
        elif kind == "text":
            fit = fit_text(item[1])
            px.text(fit)
            fits.append(fit)
    return px.p, fits
