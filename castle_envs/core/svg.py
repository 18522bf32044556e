"""A ``Scene`` as SVG text (the HTML replay viewer's frames).

Texts are fitted with Pillow's font metrics when Pillow is installed (else an average
glyph width) and carry ``textLength``, so a browser's substitute font cannot overflow a
box; ``font_face_css`` gives the ``@font-face`` rule that embeds the very font the
rasters use, once per page.
"""

from __future__ import annotations

import base64
from functools import lru_cache

from .shapes import Color, Shapes, Text, ellipsize, fit_candidates, pillow_available

_AVERAGE_ADVANCE = 0.56  # em per character, for text measured without Pillow


def _num(v: float) -> str:
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _color(c: Color | None) -> str:
    return "none" if c is None else "#{:02x}{:02x}{:02x}".format(*tuple(int(v) for v in c[:3]))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _baseline_drop(size: float) -> float:
    """How far below the middle of a line its baseline lies (Pillow's "m" anchor sits halfway
    between ascender and descender); written out, since not every SVG renderer honours
    ``dominant-baseline``."""
    if pillow_available():
        from . import pil_raster

        ascent, descent = pil_raster.font(size * pil_raster.SCALE).getmetrics()
        return (ascent - descent) / 2 / pil_raster.SCALE
    return 0.36 * size


def _fit(t: Text) -> tuple[str, float, float]:
    """(text, size, width) for the SVG: Pillow's fit when available."""
    if pillow_available():
        from . import pil_raster

        text, size = pil_raster.fit_size(t)
        return text, size, pil_raster.text_width(text, size, t.bold)

    def width(s: str, size: float) -> float:
        return len(s) * size * _AVERAGE_ADVANCE

    size = t.size
    for size in fit_candidates(t.size):
        if width(t.text, size) <= t.w:
            return t.text, size, width(t.text, size)
    text = ellipsize(t.text, lambda s: width(s, size) <= t.w)
    return text, size, width(text, size)


def to_svg(scene: Shapes, font_family: str) -> str:
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {scene.width} {scene.height}" '
        f'width="{scene.width}" height="{scene.height}" font-family="{font_family}">',
        f'<rect width="{scene.width}" height="{scene.height}" fill="{_color(scene.background)}"/>',
    ]
    for item in scene.items:
        kind = item[0]
        if kind == "rect":
            _, x, y, w, h, fill, outline, line, radius = item
            stroke = (
                f' stroke="{_color(outline)}" stroke-width="{_num(line)}"'
                if outline is not None
                else ""
            )
            if outline is not None:  # SVG strokes straddle the edge; rasters draw inside
                x, y, w, h = x + line / 2, y + line / 2, w - line, h - line
            rx = f' rx="{_num(radius)}"' if radius else ""
            out.append(
                f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}"'
                f'{rx} fill="{_color(fill)}"{stroke}/>'
            )
        elif kind == "polygon":
            _, pts, fill, outline, line = item
            stroke = (
                f' stroke="{_color(outline)}" stroke-width="{_num(line)}"'
                if outline is not None
                else ""
            )
            points = " ".join(f"{_num(a)},{_num(b)}" for a, b in pts)
            out.append(f'<polygon points="{points}" fill="{_color(fill)}"{stroke}/>')
        elif kind == "ellipse":
            _, cx, cy, rx, ry, fill, outline, line = item
            stroke = (
                f' stroke="{_color(outline)}" stroke-width="{_num(line)}"'
                if outline is not None
                else ""
            )
            out.append(
                f'<ellipse cx="{_num(cx)}" cy="{_num(cy)}" rx="{_num(rx)}" '
                f'ry="{_num(ry)}" fill="{_color(fill)}"{stroke}/>'
            )
        elif kind == "line":
            _, pts, color, width = item
            points = " ".join(f"{_num(a)},{_num(b)}" for a, b in pts)
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{_color(color)}" '
                f'stroke-width="{_num(width)}" stroke-linecap="round" '
                f'stroke-linejoin="round"/>'
            )
        elif kind == "text":
            t = item[1]
            text, size, width = _fit(t)
            if not text:
                continue
            anchor = {"left": "start", "center": "middle", "right": "end"}[t.align]
            x = {"left": t.x, "center": t.x + t.w / 2, "right": t.x + t.w}[t.align]
            bold = ' font-weight="bold"' if t.bold else ""
            y = t.y + t.h / 2 + _baseline_drop(size)
            out.append(
                f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" '
                f'fill="{_color(t.color)}" text-anchor="{anchor}" '
                f'textLength="{_num(min(width, t.w))}" '
                f'lengthAdjust="spacingAndGlyphs"{bold}>{_escape(text)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


@lru_cache(maxsize=1)
def font_face_css() -> str:
    """An ``@font-face`` rule embedding the rasters' font (empty without Pillow)."""
    if not pillow_available():
        return ""
    from .pil_raster import font_bytes

    data = base64.b64encode(font_bytes()).decode("ascii")
    return (
        "@font-face { font-family: CastleEnvsSans; "
        f"src: url(data:font/ttf;base64,{data}) format('truetype'); }}"
    )
