"""When text cannot be seen: the thresholds and colour arithmetic every format's hidden-text check shares.

Text is hidden when it is too small to read (under :data:`MIN_FONT_PT` points) or when its colour
cannot be told from the background it sits on: a WCAG contrast ratio under :data:`MIN_CONTRAST`
(white on white is 1.0; light grey on white, 1.5, stays). Parsers drop such text and count it in
``Document.metadata["hidden_elements"]`` (summed into the ingest report).
"""

from __future__ import annotations

from typing import Final

#: Text smaller than this (points) is not readable: 1 pt text is a hiding trick, 6 pt footnotes are not.
MIN_FONT_PT: Final = 2.0
#: Contrast ratio below which a text colour is indistinguishable from its background.
MIN_CONTRAST: Final = 1.25

Rgb = tuple[float, float, float]
WHITE: Final[Rgb] = (255.0, 255.0, 255.0)


def hex_rgb(value: str | None) -> Rgb | None:
    """``"FFFFFF"`` / ``"#fff"`` / ``"FF00FF00"`` (ARGB) → RGB; None for ``auto``, theme names, garbage."""
    if not value:
        return None
    digits = value.strip().lstrip("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) == 8:  # ARGB (spreadsheets)
        digits = digits[2:]
    if len(digits) != 6:
        return None
    try:
        return (float(int(digits[0:2], 16)), float(int(digits[2:4], 16)), float(int(digits[4:6], 16)))
    except ValueError:
        return None


def _luminance(c: Rgb) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else float(((v + 0.055) / 1.055) ** 2.4)

    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2])


def contrast(a: Rgb, b: Rgb) -> float:
    """WCAG contrast ratio of two opaque colours (1 = the same, 21 = black on white)."""
    la, lb = _luminance(a), _luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def blend(top: Rgb, alpha: float, below: Rgb) -> Rgb:
    """*top* with opacity *alpha* over *below*."""
    return (
        top[0] * alpha + below[0] * (1 - alpha),
        top[1] * alpha + below[1] * (1 - alpha),
        top[2] * alpha + below[2] * (1 - alpha),
    )


def indistinct(color: Rgb, background: Rgb) -> bool:
    """Whether text of *color* cannot be seen on *background*."""
    return contrast(color, background) < MIN_CONTRAST


def tiny(points: float) -> bool:
    """Whether a font of *points* is too small to read."""
    return points < MIN_FONT_PT
