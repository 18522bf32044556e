"""Drawing a ``Scene`` with Pillow: shapes and text at twice the size, then reduced, which
anti-aliases everything (Pillow's polygons have no anti-aliasing of their own).

The font is the Aileron Regular that Pillow (10.1 and later) ships inside itself, so every
install draws the same letters; bold is a one-pixel stroke at the doubled size.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .shapes import Fit, Shapes, Text, ellipsize, fit_candidates

SCALE = 2


@lru_cache(maxsize=64)
def font(px: float) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=px)  # type: ignore[return-value]  # with FreeType


def font_bytes() -> bytes:
    """The TrueType file of the font (the SVG pages embed it)."""
    return font(12).font_bytes


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Advance width of ``text`` at ``size`` scene pixels."""
    return (font(size * SCALE).getlength(text) + (2 if bold else 0)) / SCALE


def fit_size(t: Text) -> tuple[str, float]:
    """The string and size a text is drawn with: the largest size (down to 3/4) at which the
    ink fits the box, else the smallest size with the text cut to fit."""

    def fits(text: str, size: float) -> bool:
        return text_width(text, size, t.bold) <= t.w and _line_height(size) <= t.h + 0.5

    size = t.size
    for size in fit_candidates(t.size):
        if fits(t.text, size):
            return t.text, size
    return ellipsize(t.text, lambda s: fits(s, size)), size


def _line_height(size: float) -> float:
    ascent, descent = font(size * SCALE).getmetrics()
    return (ascent + descent) / SCALE * 0.86


_ANCHORS = {"left": "lm", "center": "mm", "right": "rm"}


def _anchor_point(t: Text) -> tuple[float, float]:
    x = {"left": t.x, "center": t.x + t.w / 2, "right": t.x + t.w}[t.align]
    return x * SCALE, (t.y + t.h / 2) * SCALE


def fit_text(t: Text) -> Fit:
    """How ``t`` is drawn: its string, size and ink box (scene pixels), without drawing."""
    text, size = fit_size(t)
    if not text:
        return Fit(t, text, size, None)
    box = font(size * SCALE).getbbox(
        text, anchor=_ANCHORS[t.align], stroke_width=1 if t.bold else 0
    )
    ax, ay = _anchor_point(t)
    return Fit(
        t,
        text,
        size,
        (
            (ax + box[0]) / SCALE,
            (ay + box[1]) / SCALE,
            (ax + box[2]) / SCALE,
            (ay + box[3]) / SCALE,
        ),
    )


@lru_cache(maxsize=4096)
def _text_mask(text: str, px: float, anchor: str, bold: bool) -> tuple[Image.Image, Any, Any]:
    """The text's coverage as an "L" image and its offset from the anchor point: labels
    repeat from frame to frame, so each is rasterized once."""
    stroke = 1 if bold else 0
    left, top, right, bottom = font(px).getbbox(text, anchor=anchor, stroke_width=stroke)
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)  # type: ignore[arg-type]  # whole pixels
    ImageDraw.Draw(mask).text(
        (-left, -top),
        text,
        fill=255,
        font=font(px),
        anchor=anchor,
        stroke_width=stroke,
        stroke_fill=255 if stroke else None,
    )
    return mask, left, top


def draw(scene: Shapes) -> tuple[np.ndarray, list[Fit]]:
    S = SCALE
    img = Image.new("RGB", (scene.width * S, scene.height * S), tuple(scene.background))
    d = ImageDraw.Draw(img)
    fits = []

    def xy(points: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * S, y * S) for x, y in points]

    for item in scene.items:
        kind = item[0]
        if kind == "rect":
            _, x, y, w, h, fill, outline, line, radius = item
            if w <= 0 or h <= 0:
                continue
            box = (x * S, y * S, (x + w) * S - 1, (y + h) * S - 1)
            width = max(1, round(line * S)) if outline is not None else 0
            if radius > 0:
                d.rounded_rectangle(box, radius * S, fill=fill, outline=outline, width=width)
            else:
                d.rectangle(box, fill=fill, outline=outline, width=width)
        elif kind == "polygon":
            _, pts, fill, outline, line = item
            d.polygon(
                xy(pts),
                fill=fill,
                outline=outline,
                width=max(1, round(line * S)) if outline is not None else 0,
            )
        elif kind == "ellipse":
            _, cx, cy, rx, ry, fill, outline, line = item
            d.ellipse(
                ((cx - rx) * S, (cy - ry) * S, (cx + rx) * S, (cy + ry) * S),
                fill=fill,
                outline=outline,
                width=max(1, round(line * S)) if outline is not None else 0,
            )
        elif kind == "line":
            _, pts, color, width = item
            d.line(xy(pts), fill=color, width=max(1, round(width * S)), joint="curve")
        elif kind == "text":
            fit = fit_text(item[1])
            if fit.text:
                t = fit.item
                mask, dx, dy = _text_mask(fit.text, fit.size * S, _ANCHORS[t.align], t.bold)
                ax, ay = _anchor_point(t)
                img.paste(tuple(t.color), (round(ax) + dx, round(ay) + dy), mask)
            fits.append(fit)
    small = img.reduce(S)
    return np.asarray(small, dtype=np.uint8).copy(), fits
