"""Removing what a reader never sees from an HTML tree: hidden content (counted) and page chrome.

Hidden text is a prompt-injection vector: elements with ``hidden``, ``aria-hidden="true"``,
``<input type=hidden>`` and inline styles that hide (``display:none``, ``visibility:hidden``,
``opacity:0``, ``font-size:0``, far off-screen positioning) are dropped and counted.
"""

from __future__ import annotations

import re
from typing import Any

_NON_CONTENT = (
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed", "svg",
    "canvas", "button", "select", "textarea", "dialog", "map", "applet", "audio", "video",
)  # fmt: skip
_CHROME = ("nav", "aside", "footer", "menu")
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menubar"})
_WS = re.compile(r"\s+")
_OFFSCREEN = re.compile(r"^-\s*(\d+(?:\.\d+)?)(px|em|rem|pt|vw|vh|%)?$")


def _style(value: str) -> dict[str, str]:
    """Inline CSS declarations, names and values lower-cased, whitespace and ``!important`` removed."""
    out: dict[str, str] = {}
    for decl in value.split(";"):
        name, sep, val = decl.partition(":")
        if sep:
            out[name.strip().lower()] = _WS.sub("", val.lower()).replace("!important", "")
    return out


def _hiding_style(value: str) -> bool:
    css = _style(value)
    if css.get("display") == "none" or css.get("visibility") in ("hidden", "collapse"):
        return True
    if css.get("opacity") in ("0", "0.0", "0%") or css.get("font-size") in ("0", "0px", "0em", "0rem", "0pt", "0%"):
        return True
    for prop in ("left", "top", "text-indent", "margin-left"):
        match = _OFFSCREEN.match(css.get(prop, ""))
        if match and float(match.group(1)) >= (999 if match.group(2) in (None, "px", "pt") else 99):
            return True
    return False


def is_hidden(el: Any) -> bool:
    """Whether an element is hidden from a reader of the rendered page (so its text must not be indexed)."""
    if el.get("hidden") is not None or (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if el.tag == "input" and (el.get("type") or "").strip().lower() == "hidden":
        return True
    style = el.get("style")
    return bool(style) and _hiding_style(style)


def strip_hidden(root: Any) -> int:
    """Remove hidden elements in place (their tails stay); returns how many were removed (outermost)."""
    hidden: list[Any] = []
    stack = [root]
    while stack:
        el = stack.pop()
        if not isinstance(el.tag, str):
            continue
        if el is not root and is_hidden(el):
            hidden.append(el)
            continue
        stack.extend(el)
    for el in hidden:
        el.drop_tree()
    return len(hidden)


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
