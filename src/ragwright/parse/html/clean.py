"""Removing what a reader never sees from an HTML tree: hidden content (counted) and page chrome.

Hidden text is a prompt-injection vector. An element is dropped (and counted once, with everything in
it) when the ``hidden`` attribute, ``aria-hidden="true"`` or ``<input type=hidden>`` says so, or when
its cascaded style (stylesheet rules, inline style and presentational attributes, see
:mod:`ragwright.parse.html.css`) hides it:

* ``display:none``, ``visibility:hidden``/``collapse``, ``opacity`` at or near 0;
* a font too small to read (``font-size`` under 2pt — 2.67px — or 0.2em, or 0), ``transform: scale(0)``;
* clipped away (``clip: rect(0 0 0 0)`` and the like, ``clip-path: inset(50%)``/``circle(0)``), or a
  box of at most 1px (or 0 height) with ``overflow: hidden`` — the ``.sr-only`` pattern;
* far off-screen (``left``/``top``/``right``/``text-indent``/margins of -999px and beyond), or under
  the page (a negative ``z-index``);
* text that cannot be told from its background: a transparent colour (unless the background is clipped
  to the text), or a colour whose contrast with the background it sits on is under 1.25 — white on the
  white page, say (:mod:`ragwright.parse.visibility`). A background image makes the background
  unknown, and the text is kept.
"""

from __future__ import annotations

import re
from typing import Any

from ragwright.parse.html.css import computed_styles
from ragwright.parse.visibility import blend, indistinct, tiny

_NON_CONTENT = (
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed", "svg",
    "canvas", "button", "select", "textarea", "dialog", "map", "applet", "audio", "video",
)  # fmt: skip
_CHROME = ("nav", "aside", "footer", "menu")
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menubar"})
_LENGTH = re.compile(r"^(-?\d*\.?\d+)(px|pt|em|rem|ex|ch|vw|vh|%|)$")
_OFFSCREEN_PROPS = ("left", "top", "right", "text-indent", "margin-left", "margin-top")
_SCALE_ZERO = re.compile(r"scale[xyz3d]*\((?:[^)]*,)?-?0*\.?0+(?:,|\))")
_NUMBER = re.compile(r"-?\d*\.?\d+%?")
_NAMED = {
    "white": (255, 255, 255), "black": (0, 0, 0), "snow": (255, 250, 250), "ivory": (255, 255, 240),
    "whitesmoke": (245, 245, 245), "ghostwhite": (248, 248, 255), "azure": (240, 255, 255),
    "mintcream": (245, 255, 250), "seashell": (255, 245, 238), "floralwhite": (255, 250, 240),
    "red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255), "gray": (128, 128, 128),
    "grey": (128, 128, 128), "silver": (192, 192, 192), "lightgray": (211, 211, 211),
    "lightgrey": (211, 211, 211), "gainsboro": (220, 220, 220), "yellow": (255, 255, 0),
    "navy": (0, 0, 128), "maroon": (128, 0, 0), "purple": (128, 0, 128), "teal": (0, 128, 128),
    "orange": (255, 165, 0),
}  # fmt: skip
Color = tuple[float, float, float, float]  # r, g, b (0-255), alpha (0-1)
_WHITE: Color = (255.0, 255.0, 255.0, 1.0)
_BLACK: Color = (0.0, 0.0, 0.0, 1.0)


def _length(value: str) -> tuple[float, str] | None:
    match = _LENGTH.match(value)
    return (float(match.group(1)), match.group(2) or "px") if match else None


def parse_color(value: str) -> Color | None:
    """A CSS colour (hex, ``rgb[a]()``, ``hsl[a]()``, ``transparent``, common names); None if unknown."""
    value = value.strip().lower()
    if value == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    if value in _NAMED:
        return (*map(float, _NAMED[value]), 1.0)  # type: ignore[return-value]
    if value.startswith("#") and len(value) in (4, 5, 7, 9):
        digits = value[1:]
        if len(digits) in (3, 4):
            digits = "".join(ch * 2 for ch in digits)
        try:
            parts = [int(digits[i : i + 2], 16) for i in range(0, len(digits), 2)]
        except ValueError:
            return None
        return (float(parts[0]), float(parts[1]), float(parts[2]), parts[3] / 255 if len(parts) == 4 else 1.0)
    if value.startswith(("rgb", "hsl")) and value.endswith(")"):
        nums = _NUMBER.findall(value[value.find("(") :])
        if len(nums) < 3:
            return None
        alpha = 1.0
        if len(nums) >= 4:
            alpha = float(nums[3][:-1]) / 100 if nums[3].endswith("%") else float(nums[3])
        if value.startswith("hsl"):
            return (*_hsl(nums[:3]), alpha)
        rgb = [float(n[:-1]) * 2.55 if n.endswith("%") else float(n) for n in nums[:3]]
        return (rgb[0], rgb[1], rgb[2], alpha)
    return None


def _hsl(nums: list[str]) -> tuple[float, float, float]:
    import colorsys

    h = float(nums[0].rstrip("%")) / 360 % 1.0
    s, light = (float(n.rstrip("%")) / 100 for n in nums[1:3])
    r, g, b = colorsys.hls_to_rgb(h, light, s)
    return (r * 255, g * 255, b * 255)


def _blend(top: Color, below: Color) -> Color:
    return (*blend(top[:3], top[3], below[:3]), 1.0)


def _tiny_font(value: str) -> bool:
    size = _length(value)
    if size is None:
        return False
    number, unit = size
    if unit in ("px", "pt"):  # 1px = 0.75pt
        return number <= 0 or tiny(number * (0.75 if unit == "px" else 1.0))
    limit = {"em": 0.2, "rem": 0.2, "ex": 0.4, "ch": 0.4, "%": 20.0}.get(unit, 0.0)
    return number <= 0 or number < limit


def _opaque(value: str) -> bool:
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return True
    return number > 0.05


def hiding_style(css: dict[str, str]) -> bool:
    """Whether cascaded declarations hide an element and everything in it (colours aside)."""
    if css.get("display") == "none" or css.get("visibility") in ("hidden", "collapse"):
        return True
    if "opacity" in css and not _opaque(css["opacity"]):
        return True
    if "font-size" in css and _tiny_font(css["font-size"]):
        return True
    if _SCALE_ZERO.search(css.get("transform", "")):
        return True
    clip = css.get("clip", "")
    if clip.startswith("rect(") and all(
        (n := _length(v)) is not None and n[0] <= 1 for v in re.split(r"[,\s]+", clip[5:-1]) if v and v != "auto"
    ):
        return True
    path = css.get("clip-path", "")
    if re.match(r"inset\((?:5\d|[6-9]\d|100)%", path) or re.match(r"(circle|ellipse)\(0", path):
        return True
    overflow = css.get("overflow", "")
    if overflow in ("hidden", "clip") and any(
        (n := _length(css.get(prop, ""))) is not None and n[1] in ("px", "pt") and n[0] <= 1
        for prop in ("width", "height", "max-height", "max-width")
    ):
        return True
    z_index = css.get("z-index", "")
    if z_index.lstrip("-").isdigit() and int(z_index) < 0:
        return True
    for prop in _OFFSCREEN_PROPS:
        n = _length(css.get(prop, ""))
        if n is not None and n[0] <= -(999 if n[1] in ("px", "pt") else 99):
            return True
    return False


def _attribute_hidden(el: Any) -> bool:
    if el.get("hidden") is not None or (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(el.tag == "input" and (el.get("type") or "").strip().lower() == "hidden")


def _has_text(el: Any) -> bool:
    if (el.text or "").strip():
        return True
    return any((child.tail or "").strip() for child in el)


def strip_hidden(root: Any) -> int:
    """Remove hidden elements in place (their tails stay); returns how many that held text were removed
    (outermost ones only)."""
    styles = computed_styles(root)
    hidden: list[Any] = []
    # (element, inherited text colour, background below it: None when unknown (an image))
    stack: list[tuple[Any, Color, Color | None]] = [(root, _BLACK, _WHITE)]
    while stack:
        el, color, background = stack.pop()
        if not isinstance(el.tag, str):
            continue
        css = styles.get(el, {})
        if el is not root and (_attribute_hidden(el) or hiding_style(css)):
            hidden.append(el)
            continue
        background = _background(css, background)
        own = parse_color(css.get("-webkit-text-fill-color") or css.get("color", "")) if css else None
        if own is not None:
            color = own
        if el is not root and _has_text(el) and _invisible(color, background, css):
            hidden.append(el)
            continue
        stack.extend((child, color, background) for child in el)
    counted = sum(1 for el in hidden if _holds_text(el))
    for el in hidden:
        el.drop_tree()
    return counted


def _holds_text(el: Any) -> bool:
    """Whether a hidden element hid any text (an empty spacer is not counted)."""
    return bool("".join(el.itertext()).strip() or (el.tag == "input" and (el.get("value") or "").strip()))


def _background(css: dict[str, str], below: Color | None) -> Color | None:
    """The colour under an element's text: its own background over the one below (None: unknown)."""
    shorthand = css.get("background", "")
    image = shorthand + " " + css.get("background-image", "")
    if "url(" in image or "gradient(" in image:
        return None  # an image: the colour under the text is unknown
    value = css.get("background-color")
    color = parse_color(value) if value else None
    if color is None and shorthand:
        color = next((c for c in map(parse_color, shorthand.replace(",", " ").split()) if c is not None), None)
    if color is None or color[3] == 0:
        return below
    if color[3] >= 1:
        return color
    return None if below is None else _blend(color, below)


def _invisible(color: Color, background: Color | None, css: dict[str, str]) -> bool:
    if "text" in (css.get("background-clip", "") + css.get("-webkit-background-clip", "")):
        return False  # gradient text: the background shows through the glyphs
    if color[3] <= 0.05:
        return True
    if background is None:
        return False
    return indistinct(_blend(color, background)[:3], background[:3])


def strip_chrome(root: Any, *, page_chrome: bool) -> None:
    """Remove non-content elements; with *page_chrome* also navigation, page headers/footers, asides.

    A ``<form>`` wrapping the main content (ASP.NET pages wrap everything in one) is kept.
    """
    doomed = [el for el in root.iter(*_NON_CONTENT)]
    doomed += [f for f in root.iter("form") if not f.xpath(".//main|.//article|.//h1|.//*[@role='main']")]
    if page_chrome:
        doomed += list(root.iter(*_CHROME))
        for el in root.iter("header"):
            if not any(a.tag in ("article", "main") or a.get("role") == "main" for a in el.iterancestors()):
                doomed.append(el)
        doomed += [el for el in root.iter() if isinstance(el.tag, str) and el.get("role") in _CHROME_ROLES]
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()
