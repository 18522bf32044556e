"""A tiny numpy raster for ``render_mode="rgb_array"``: filled boxes and a 3x5 bitmap font.

The core package depends on numpy alone for pictures (no Pillow, no pygame), so every game
draws its table with these few primitives and the result works with Gymnasium's
``RecordVideo``.
"""
from __future__ import annotations

import numpy as np

# 3 columns x 5 rows per glyph, rows top to bottom; lower-case text is drawn upper-case.
_FONT_ROWS = {
    "0": "111 101 101 101 111", "1": "010 110 010 010 111", "2": "111 001 111 100 111",
    "3": "111 001 111 001 111", "4": "101 101 111 001 001", "5": "111 100 111 001 111",
    "6": "111 100 111 101 111", "7": "111 001 010 010 010", "8": "111 101 111 101 111",
    "9": "111 101 111 001 111", "A": "010 101 111 101 101", "B": "110 101 110 101 110",
    "C": "011 100 100 100 011", "D": "110 101 101 101 110", "E": "111 100 110 100 111",
    "F": "111 100 110 100 100", "G": "011 100 101 101 011", "H": "101 101 111 101 101",
    "I": "111 010 010 010 111", "J": "001 001 001 101 010", "K": "101 101 110 101 101",
    "L": "100 100 100 100 111", "M": "101 111 111 101 101", "N": "110 101 101 101 101",
    "O": "010 101 101 101 010", "P": "110 101 110 100 100", "Q": "010 101 101 110 011",
    "R": "110 101 110 101 101", "S": "011 100 010 001 110", "T": "111 010 010 010 010",
    "U": "101 101 101 101 111", "V": "101 101 101 101 010", "W": "101 101 111 111 101",
    "X": "101 101 010 101 101", "Y": "101 101 010 010 010", "Z": "111 001 010 100 111",
    " ": "000 000 000 000 000", ".": "000 000 000 000 010", ":": "000 010 000 010 000",
    "-": "000 000 111 000 000", "+": "000 010 111 010 000", "/": "001 001 010 100 100",
    "?": "111 001 010 000 010", "!": "010 010 010 000 010", "#": "101 111 101 111 101",
    "(": "010 100 100 100 010", ")": "010 001 001 001 010", "=": "000 111 000 111 000",
    "*": "000 101 010 101 000", "<": "001 010 100 010 001", ">": "100 010 001 010 100",
    "'": "010 010 000 000 000", ",": "000 000 000 010 100", "_": "000 000 000 000 111",
    "[": "110 100 100 100 110", "]": "011 001 001 001 011", "|": "010 010 010 010 010",
}
GLYPHS = {ch: np.array([[c == "1" for c in row] for row in rows.split()], dtype=bool)
          for ch, rows in _FONT_ROWS.items()}

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
FELT = (24, 96, 48)
RED = (200, 30, 30)
GREEN = (20, 130, 40)
GOLD = (200, 160, 20)
GREY = (150, 150, 150)
BLUE = (40, 70, 170)


class Canvas:
    def __init__(self, height: int, width: int, background=FELT):
        self.pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.pixels[:] = background

    def box(self, top: int, left: int, height: int, width: int, color, border=None):
        top, left = max(top, 0), max(left, 0)
        self.pixels[top:top + height, left:left + width] = color
        if border is not None:
            self.pixels[top:top + height, left:left + 1] = border
            self.pixels[top:top + height, left + width - 1:left + width] = border
            self.pixels[top:top + 1, left:left + width] = border
            self.pixels[top + height - 1:top + height, left:left + width] = border

    def text(self, top: int, left: int, text: str, color=BLACK, scale: int = 2) -> int:
        """Draw ``text``; return the x just past it. Unknown characters draw as '?'."""
        x = left
        for ch in text.upper():
            glyph = GLYPHS.get(ch, GLYPHS["?"])
            big = np.kron(glyph, np.ones((scale, scale), dtype=bool))
            region = self.pixels[top:top + big.shape[0], x:x + big.shape[1]]
            region[big[:region.shape[0], :region.shape[1]]] = color
            x += 4 * scale
        return x

    @staticmethod
    def text_width(text: str, scale: int = 2) -> int:
        return 4 * scale * len(text)

    def image(self) -> np.ndarray:
        return self.pixels
