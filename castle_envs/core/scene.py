"""Pictures as a list of shapes: one layout per game, drawn three ways.

A game's renderer builds a ``Scene`` (boxes, polygons, ellipses, lines and text, each text in
the box it must fit) and the scene is drawn by

- Pillow (``pip install "castle-envs[pictures]"``): anti-aliased shapes and the Aileron
  font Pillow ships, drawn at twice the size and reduced;
- the numpy raster (``core.raster``) when Pillow is missing: the same shapes, a 3x5
  bitmap font;
- SVG (``to_svg``), for the HTML replay viewer: the same font, embedded once by the page.

The three agree on the layout: every backend fits each text to its box (a smaller size
first, then an ellipsis), and ``Scene.layout_problems`` reports any text that had to be
cut, any ink outside its box, boxes off the canvas and text boxes that overlap; the tests
run it over random positions of every game. Pick a backend with ``set_raster`` or the
``CASTLE_ENVS_RASTER`` environment variable (``pillow``, ``numpy``; default: Pillow when
installed).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .shapes import (  # noqa: F401  (re-exported: the renderers import them from here)
    BLACK,
    BLUE,
    FELT,
    FELT_DARK,
    GOLD,
    GREEN,
    INK,
    MUTED,
    PALE,
    PAPER,
    RED,
    SUIT_COLORS,
    SVG_FONT_FAMILY,
    WHITE,
    Color,
    Fit,
    Shapes,
    Text,
    ellipsize,
    fit_candidates,
    pillow_available,
    plain_text,
)


class Scene(Shapes):
    """A fixed-size picture as drawing commands, in pixels (origin top left)."""

    # --- composite symbols --------------------------------------------------------------
    def suit(
        self, cx: float, cy: float, size: float, suit: int, color: Color | None = None
    ) -> None:
        """A card suit (0 ♠, 1 ♣, 2 ♥, 3 ♦) of height ``size`` centred at (cx, cy)."""
        color = SUIT_COLORS[suit] if color is None else color
        s = float(size)
        if suit == 3:  # diamond
            self.polygon(
                [(cx, cy - s / 2), (cx + 0.38 * s, cy), (cx, cy + s / 2), (cx - 0.38 * s, cy)],
                color,
            )
        elif suit == 2:  # heart
            r = 0.26 * s
            for dx in (-r * 0.95, r * 0.95):
                self.circle(cx + dx, cy - 0.2 * s, r, color)
            self.polygon(
                [(cx - 0.5 * s, cy - 0.14 * s), (cx + 0.5 * s, cy - 0.14 * s), (cx, cy + 0.5 * s)],
                color,
            )
        elif suit == 0:  # spade
            r = 0.24 * s
            for dx in (-r * 0.95, r * 0.95):
                self.circle(cx + dx, cy + 0.1 * s, r, color)
            self.polygon(
                [
                    (cx - 0.47 * s, cy + 0.06 * s),
                    (cx + 0.47 * s, cy + 0.06 * s),
                    (cx, cy - 0.5 * s),
                ],
                color,
            )
            self.polygon(
                [(cx, cy + 0.05 * s), (cx + 0.17 * s, cy + 0.5 * s), (cx - 0.17 * s, cy + 0.5 * s)],
                color,
            )
        else:  # club
            r = 0.21 * s
            self.circle(cx, cy - 0.25 * s, r, color)
            self.circle(cx - 0.23 * s, cy + 0.07 * s, r, color)
            self.circle(cx + 0.23 * s, cy + 0.07 * s, r, color)
            self.polygon(
                [(cx, cy - 0.05 * s), (cx + 0.17 * s, cy + 0.5 * s), (cx - 0.17 * s, cy + 0.5 * s)],
                color,
            )

    def header(
        self,
        title: str,
        subtitle: str,
        status: str,
        outcome: int = 0,
        title_w: float = 150,
        height: float = 36,
    ) -> None:
        """The band across the top: the game's name, a subtitle and what happens now.
        ``outcome`` 1 (won) or -1 (lost) colours the band and shows ``status`` in bold."""
        band, ink = {1: (GOLD, BLACK), -1: ((176, 48, 40), WHITE)}.get(outcome, (FELT_DARK, WHITE))
        self.rect(0, 0, self.width, height, fill=band)
        self.text(16, 4, title_w, height - 8, title, ink, 20, bold=True)
        self.text(20 + title_w, 4, 200, height - 8, subtitle, ink if outcome else PALE, 15)
        self.text(
            228 + title_w,
            4,
            self.width - 244 - title_w,
            height - 8,
            status,
            ink,
            17 if outcome else 15,
            "right",
            bold=bool(outcome),
        )

    # --- output -------------------------------------------------------------------------
    def to_rgb(self, backend: str | None = None) -> np.ndarray:
        """The picture as an ``(height, width, 3)`` uint8 array."""
        return self.draw(backend)[0]

    def draw(self, backend: str | None = None) -> tuple[np.ndarray, list[Fit]]:
        """The pixels and how each text was fitted."""
        return _backend(backend).draw(self)

    def to_svg(self, font_family: str = SVG_FONT_FAMILY) -> str:
        from .svg import to_svg

        return to_svg(self, font_family)

    def layout_problems(self, backend: str | None = None) -> list[str]:
        """Every way the drawn picture breaks its layout: text cut short, ink outside its
        box, a text box off the canvas, two text boxes overlapping. Empty when it is clean."""
        fit_text = _backend(backend).fit_text
        fits = [fit_text(t) for t in self.texts()]
        problems = []
        for fit in fits:
            t = fit.item
            where = f"{t.text!r} in box ({t.x:.0f}, {t.y:.0f}, {t.w:.0f}, {t.h:.0f})"
            if fit.truncated:
                problems.append(f"{where} was cut to {fit.text!r}")
            if (
                t.x < -0.5
                or t.y < -0.5
                or t.x + t.w > self.width + 0.5
                or t.y + t.h > self.height + 0.5
            ):
                problems.append(f"{where} is off the {self.width}x{self.height} canvas")
            if fit.ink is not None:
                left, top, right, bottom = fit.ink
                if (
                    left < t.x - 1
                    or top < t.y - 1
                    or right > t.x + t.w + 1
                    or bottom > t.y + t.h + 1
                ):
                    problems.append(
                        f"{where} inks ({left:.0f}, {top:.0f}, {right:.0f}, "
                        f"{bottom:.0f}), outside its box"
                    )
        boxes = [f.item for f in fits if f.item.text.strip()]
        if len(boxes) > 1:
            a = np.array([(t.x, t.y, t.x + t.w, t.y + t.h) for t in boxes])
            ox = np.minimum(a[:, None, 2], a[None, :, 2]) - np.maximum(a[:, None, 0], a[None, :, 0])
            oy = np.minimum(a[:, None, 3], a[None, :, 3]) - np.maximum(a[:, None, 1], a[None, :, 1])
            overlap = np.triu((ox > 0.5) & (oy > 0.5), 1)
            for i, j in zip(*np.nonzero(overlap)):
                problems.append(f"text boxes overlap: {boxes[i].text!r} and {boxes[j].text!r}")
        return problems


_BACKEND: str | None = None


def _backend(name: str | None) -> ModuleType:
    name = name or raster_backend()
    if name == "pillow":
        from . import pil_raster

        return pil_raster
    if name == "numpy":
        from . import raster

        return raster
    raise ValueError(f"unknown raster backend {name!r}; choose pillow or numpy")


def raster_backend() -> str:
    """The backend ``to_rgb`` uses: ``set_raster``'s choice, else ``CASTLE_ENVS_RASTER``,
    else Pillow when it is installed with FreeType, else numpy."""
    global _BACKEND
    if _BACKEND is None:
        choice = os.environ.get("CASTLE_ENVS_RASTER", "auto")
        set_raster(choice)
    assert _BACKEND is not None  # set_raster set it
    return _BACKEND


def set_raster(backend: str) -> None:
    """``"pillow"``, ``"numpy"`` or ``"auto"``."""
    global _BACKEND
    if backend not in ("auto", "pillow", "numpy"):
        raise ValueError(f"unknown raster backend {backend!r}; choose auto, pillow or numpy")
    if backend == "pillow" and not pillow_available():
        raise ValueError(
            'the pillow raster needs Pillow with FreeType: pip install "castle-envs[pictures]"'
        )
    _BACKEND = ("pillow" if pillow_available() else "numpy") if backend == "auto" else backend


def regular_polygon(
    cx: float, cy: float, r: float, sides: int, rotation: float = -math.pi / 2
) -> list[tuple[float, float]]:
    return [
        (
            cx + r * math.cos(rotation + 2 * math.pi * k / sides),
            cy + r * math.sin(rotation + 2 * math.pi * k / sides),
        )
        for k in range(sides)
    ]


def scene_renderers(build_scene: Callable[[Any], Scene]) -> tuple[Callable, Callable]:
    """A game's ``render_rgb(state) -> (H, W, 3) uint8`` and ``render_svg(state) -> str``
    for the picture ``build_scene(state)``. They are named as the functions of the game's
    render module (which binds them), so that pickle finds them there."""

    def render_rgb(state: Any) -> np.ndarray:
        return build_scene(state).to_rgb()

    def render_svg(state: Any) -> str:
        return build_scene(state).to_svg()

    for func in (render_rgb, render_svg):
        func.__module__ = build_scene.__module__
        func.__qualname__ = func.__name__
    return render_rgb, render_svg
