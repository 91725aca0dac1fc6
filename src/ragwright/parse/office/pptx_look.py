"""What a viewer of a PPTX slide show sees: hidden and off-slide shapes, unreadable runs.

Colours are resolved as PowerPoint resolves them, far enough to tell text from what is under it:
explicit RGB (``a:srgbClr``), and scheme colours (``a:schemeClr``) through the master's colour map and
the theme's colour scheme; a colour with modifiers (``lumMod`` …), a gradient, a picture or a pattern
is not resolved, and then colour hides nothing. The colour under a shape's text is its solid fill, else
the slide's background (the slide's, else its layout's, else its master's: ``p:bgPr`` solid fills and
``p:bgRef`` references to a solid background style), white when none is set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ragwright.parse.safexml import parse_xml
from ragwright.parse.visibility import WHITE, Rgb, hex_rgb, indistinct, tiny

_A: Final = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P: Final = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_UNRESOLVED: Final = ("gradFill", "blipFill", "pattFill", "grpFill")


@dataclass(frozen=True)
class Theme:
    """A master's scheme colours (``dk1``, ``lt1``, ``accent1`` … and its aliases ``bg1``, ``tx1`` …) and
    which background styles (``p:bgRef idx``) are plain solid fills."""

    colors: dict[str, Rgb] = field(default_factory=dict)
    solid_backgrounds: frozenset[str] = frozenset()


def master_theme(master: Any) -> Theme:
    """The theme of a slide master (an empty one when it cannot be read)."""
    try:
        from pptx.opc.constants import RELATIONSHIP_TYPE as RT

        root = parse_xml(master.part.part_related_by(RT.THEME).blob)
    except Exception:  # no theme, or one that cannot be read: scheme colours stay unresolved
        return Theme()
    colors: dict[str, Rgb] = {}
    scheme = root.find(f".//{_A}clrScheme")
    for child in [] if scheme is None else list(scheme):
        srgb, system = child.find(_A + "srgbClr"), child.find(_A + "sysClr")
        value = srgb.get("val") if srgb is not None else system.get("lastClr") if system is not None else None
        rgb = hex_rgb(value)
        if rgb is not None:
            colors[child.tag.rsplit("}", 1)[-1]] = rgb
    color_map = master._element.find(_P + "clrMap")
    for alias, target in ({} if color_map is None else dict(color_map.attrib)).items():
        if target in colors:
            colors[alias] = colors[target]
    fills = root.find(f".//{_A}bgFillStyleLst")
    solid = frozenset(
        str(1001 + i) for i, child in enumerate([] if fills is None else list(fills)) if child.tag == _A + "solidFill"
    )
    return Theme(colors, solid)


def color_of(parent: Any, theme: Theme) -> Rgb | None:
    """The colour of a fill element (``a:solidFill``, ``p:bgRef`` …) with no modifiers, or None."""
    if parent is None:
        return None
    srgb = parent.find(_A + "srgbClr")
    if srgb is not None:
        return None if len(srgb) else hex_rgb(srgb.get("val"))
    ref = parent.find(_A + "schemeClr")
    if ref is not None and not len(ref):
        return theme.colors.get(ref.get("val", ""))
    return None


def shape_fill(shape: Any, below: Rgb | None, theme: Theme) -> Rgb | None:
    """The colour a shape's text sits on: its solid fill, else what is below it (None: unknown)."""
    sppr = shape._element.find(f"{_P}spPr")
    if sppr is None:
        return below
    if sppr.find(_A + "solidFill") is not None:
        return color_of(sppr.find(_A + "solidFill"), theme)
    if any(sppr.find(_A + kind) is not None for kind in _UNRESOLVED):
        return None
    return below


def slide_background(slide: Any, theme: Theme) -> Rgb | None:
    """The slide's background colour through its layout and master (see the module docstring)."""
    layout = slide.slide_layout
    for part in (slide, layout, layout.slide_master):
        bg = part._element.find(f"{_P}cSld/{_P}bg")
        if bg is None:
            continue
        pr, ref = bg.find(_P + "bgPr"), bg.find(_P + "bgRef")
        if pr is not None and pr.find(_A + "solidFill") is not None:
            return color_of(pr.find(_A + "solidFill"), theme)
        if ref is not None and ref.get("idx", "") in theme.solid_backgrounds:  # a solid background style
            return color_of(ref, theme)
        return None
    return WHITE


def hidden_flag(shape: Any) -> bool:
    """Whether a shape is marked hidden (``p:cNvPr hidden="1"``)."""
    c_nv_pr = shape._element.find(f".//{_P}cNvPr")
    return c_nv_pr is not None and c_nv_pr.get("hidden") in ("1", "true")


def off_slide(shape: Any, look: SlideLook) -> bool:
    """Whether a (top-level) shape lies wholly outside the slide."""
    try:
        left, top, width, height = shape.left, shape.top, shape.width, shape.height
    except (AttributeError, ValueError):
        return False
    if left is None or top is None:
        return False
    x0, y0 = int(left), int(top)
    x1, y1 = x0 + int(width or 0), y0 + int(height or 0)
    return x1 <= 0 or y1 <= 0 or x0 >= look.width or y0 >= look.height


@dataclass
class SlideLook:
    """What one slide's text is drawn on, and the count of what was hidden on it."""

    background: Rgb | None
    width: int
    height: int
    theme: Theme = field(default_factory=Theme)
    hidden: int = 0

    @classmethod
    def of(cls, slide: Any, width: int, height: int) -> SlideLook:
        theme = master_theme(slide.slide_layout.slide_master)
        return cls(slide_background(slide, theme), width, height, theme)

    def paragraph_text(self, para: Any, under: Rgb | None) -> str:
        """A paragraph's visible text: runs, fields and line breaks, hidden runs dropped (one count per
        stretch of consecutive hidden runs)."""
        parts: list[str] = []
        hiding = False
        for child in para._p:
            tag = child.tag
            if tag == _A + "br":
                parts.append("\n")
            elif tag in (_A + "r", _A + "fld"):
                if self.run_hidden(child, under):
                    self.hidden += not hiding
                    hiding = True
                    continue
                hiding = False
                t = child.find(_A + "t")
                parts.append("" if t is None else t.text or "")
        return " ".join("".join(parts).split())

    def run_hidden(self, run: Any, under: Rgb | None) -> bool:
        """A run smaller than 2 pt, or coloured like what is under it."""
        rpr = run.find(_A + "rPr")
        if rpr is None:
            return False
        size = rpr.get("sz")
        if size is not None and size.isdigit() and tiny(int(size) / 100):
            return True
        color = color_of(rpr.find(_A + "solidFill"), self.theme)
        return color is not None and under is not None and indistinct(color, under)
