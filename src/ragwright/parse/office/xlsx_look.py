"""Whether a spreadsheet cell can be read: its font's size and colour against its fill.

A cell is unreadable when its font is under :data:`~ragwright.parse.visibility.MIN_FONT_PT` or its font
colour cannot be told from its fill (no fill: white). Explicit RGB colours and the legacy palette's
black and white are resolved; theme colours, patterns and gradients are not, and then colour hides
nothing.
"""

from __future__ import annotations

from typing import Any

from ragwright.parse.visibility import WHITE, Rgb, hex_rgb, indistinct, tiny

_PALETTE: dict[int, Rgb] = {0: (0.0, 0.0, 0.0), 1: WHITE, 8: (0.0, 0.0, 0.0), 9: WHITE}


def _color(color: Any) -> Rgb | None:
    """An openpyxl colour as RGB when it is explicit (ARGB, or the legacy palette's black and white)."""
    if color is None:
        return None
    kind = getattr(color, "type", None)
    if kind == "rgb" and isinstance(color.rgb, str):
        return hex_rgb(color.rgb)
    if kind == "indexed" and isinstance(color.indexed, int):
        return _PALETTE.get(color.indexed)
    return None


class Unseen:
    """Whether a cell's style makes its text unreadable, per (font, fill) pair (cached)."""

    def __init__(self, book: Any) -> None:
        self.fonts, self.fills = getattr(book, "_fonts", []), getattr(book, "_fills", [])
        self.cache: dict[tuple[int, int], bool] = {}

    def __call__(self, style: Any) -> bool:
        key = (style.fontId, style.fillId)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = self._judge(*key)
        return found

    def _judge(self, font_id: int, fill_id: int) -> bool:
        font = self.fonts[font_id] if 0 <= font_id < len(self.fonts) else None
        if font is None:
            return False
        if font.sz is not None and tiny(float(font.sz)):
            return True
        color = _color(font.color)
        if color is None:
            return False
        fill = self.fills[fill_id] if 0 <= fill_id < len(self.fills) else None
        if fill is None or getattr(fill, "patternType", None) in (None, "none"):
            under: Rgb | None = WHITE
        elif fill.patternType == "solid":
            under = _color(fill.fgColor)
        else:
            under = None  # a pattern or gradient: unknown
        return under is not None and indistinct(color, under)
