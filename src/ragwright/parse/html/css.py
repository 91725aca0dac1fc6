"""The CSS a reader's browser would apply, as far as hiding text goes: stylesheets, inline styles and
presentational attributes, cascaded per element.

Only the properties that can hide text are kept (:data:`RELEVANT`). Stylesheet rules come from the
page's ``<style>`` elements (``@media print`` and other non-screen media are skipped; external sheets
are not fetched). Selectors made of type, ``#id``, ``.class`` and ``[attr]``/``[attr=value]`` parts
joined by descendant or child combinators are matched (translated to XPath); a selector with anything
else (pseudo-classes such as ``:hover``, sibling combinators) is ignored, so a rule that only applies
on interaction never hides content. The cascade orders declarations by ``!important``, specificity and
source order, inline styles last, as browsers do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: The properties that can make text invisible (see :mod:`ragwright.parse.html.clean`).
RELEVANT = frozenset(
    {
        "display", "visibility", "opacity", "font-size", "transform", "clip", "clip-path", "position",
        "width", "height", "max-height", "max-width", "overflow", "z-index", "left", "top", "right",
        "text-indent", "margin-left", "margin-top", "color", "background", "background-color",
        "background-image", "background-clip", "-webkit-background-clip", "-webkit-text-fill-color",
    }
)  # fmt: skip
#: Most stylesheet rules looked at on one page (a bound on the work a hostile page can cause).
MAX_RULES = 5000

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_WS = re.compile(r"\s+")
_SIMPLE = re.compile(
    r"""^(?P<tag>\*|[a-zA-Z][\w-]*)?(?P<rest>(?:\#[\w-]+|\.[\w-]+|\[[\w-]+(?:[~|^$*]?=(?:"[^"]*"|'[^']*'|[\w-]+))?\])*)$"""
)
_PART = re.compile(r"""\#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:([~|^$*]?=)("[^"]*"|'[^']*'|[\w-]+))?\]""")
_SCREEN_MEDIA = re.compile(r"^\s*(only\s+)?(all|screen)\b|^\s*\(|^\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Rule:
    """One stylesheet rule, for one selector of its selector list."""

    xpath: str
    specificity: tuple[int, int, int]
    order: int
    declarations: tuple[tuple[str, str, bool], ...]  # (property, value, important)


def declarations(text: str) -> list[tuple[str, str, bool]]:
    """The relevant declarations of a style block: ``(property, value, important)``, names and values
    lower-cased, whitespace removed from values."""
    out = []
    for decl in text.split(";"):
        name, sep, value = decl.partition(":")
        name = name.strip().lower()
        if not sep or name not in RELEVANT:
            continue
        value = _WS.sub("", value.lower())
        important = value.endswith("!important")
        out.append((name, value.removesuffix("!important"), important))
    return out


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """``(prelude, body)`` of the top-level blocks of *css*: rules and at-rules."""
    i, n = 0, len(css)
    while i < n:
        open_ = css.find("{", i)
        if open_ < 0:
            return
        semi = css.find(";", i, open_)
        if semi >= 0 and css[i:semi].lstrip().startswith("@"):  # @import …; @charset …;
            i = semi + 1
            continue
        depth, j = 1, open_ + 1
        while j < n and depth:
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        yield css[i:open_].strip(), css[open_ + 1 : j - 1]
        i = j


def _rules(css: str, counter: Iterator[int]) -> Iterator[tuple[str, str, int]]:
    for prelude, body in _blocks(css):
        if prelude.startswith("@"):
            keyword, _, condition = prelude[1:].partition(" ")
            keyword = keyword.lower()
            screen = keyword == "media" and all(_SCREEN_MEDIA.match(q) for q in condition.split(","))
            if screen or keyword in ("supports", "layer", "container"):
                yield from _rules(body, counter)
            continue  # @font-face, @keyframes, @page, print media …
        yield prelude, body, next(counter)


def selector_xpath(selector: str) -> tuple[str, tuple[int, int, int]] | None:
    """XPath and specificity of a CSS selector of the supported subset; ``None`` for anything else."""
    tokens = re.split(r"\s*(>)\s*|\s+", selector.strip())
    steps: list[str] = []
    axis = "//"
    ids = classes = tags = 0
    for token in tokens:
        if token is None or token == "":
            continue
        if token == ">":
            if not steps or axis != "//":
                return None
            axis = "/"
            continue
        match = _SIMPLE.match(token)
        if match is None or not (match.group("tag") or match.group("rest")):
            return None
        tag = (match.group("tag") or "*").lower()
        tags += tag != "*"
        predicates = []
        for id_, cls, attr, op, value in _PART.findall(match.group("rest")):
            if id_:
                ids += 1
                predicates.append(f"@id={_literal(id_)}")
            elif cls:
                classes += 1
                predicates.append(f"contains(concat(' ', normalize-space(@class), ' '), {_literal(' ' + cls + ' ')})")
            else:
                classes += 1
                predicates.append(_attribute(attr.lower(), op, value.strip("\"'")))
        steps.append(axis + tag + "".join(f"[{p}]" for p in predicates))
        axis = "//"
    if not steps or axis == "/":
        return None
    return "." + "".join(steps), (ids, classes, tags)


def _attribute(name: str, op: str, value: str) -> str:
    attr, lit = f"@{name}", _literal(value)
    if not op:
        return attr
    if op == "=":
        return f"{attr}={lit}"
    if op == "~=":
        return f"contains(concat(' ', normalize-space({attr}), ' '), {_literal(' ' + value + ' ')})"
    if op == "^=":
        return f"starts-with({attr}, {lit})"
    if op == "*=":
        return f"contains({attr}, {lit})"
    if op == "$=":
        return f"substring({attr}, string-length({attr}) - string-length({lit}) + 1) = {lit}"
    return f"({attr}={lit} or starts-with({attr}, {_literal(value + '-')}))"  # |=


def _literal(text: str) -> str:
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in text.split("'")) + ")"


def stylesheet_rules(root: Any) -> list[Rule]:
    """The relevant rules of the page's ``<style>`` elements, one per supported selector."""
    counter = iter(range(1 << 30))
    rules: list[Rule] = []
    for style in root.iter("style"):
        media = (style.get("media") or "").strip()
        if media and not all(_SCREEN_MEDIA.match(q) for q in media.split(",")):
            continue
        css = _COMMENT.sub("", style.text or "")
        for prelude, body, order in _rules(css, counter):
            decls = tuple(declarations(body))
            if not decls:
                continue
            for selector in prelude.split(","):
                compiled = selector_xpath(selector)
                if compiled is not None:
                    rules.append(Rule(compiled[0], compiled[1], order, decls))
                if len(rules) >= MAX_RULES:
                    return rules
    return rules


def _presentational(el: Any) -> list[tuple[str, str, bool]]:
    out = []
    if el.tag == "font" and el.get("color"):
        out.append(("color", el.get("color").strip().lower(), False))
    if el.get("bgcolor"):
        out.append(("background-color", el.get("bgcolor").strip().lower(), False))
    return out


def computed_styles(root: Any) -> dict[Any, dict[str, str]]:
    """The cascaded relevant declarations of every element that has any (elements without none are
    absent): stylesheet rules by importance, specificity and order, then presentational attributes
    below them and the ``style`` attribute above them."""
    matched: dict[Any, list[tuple[tuple[int, int, int], int, tuple[tuple[str, str, bool], ...]]]] = {}
    for rule in stylesheet_rules(root):
        try:
            found = root.xpath(rule.xpath)
        except Exception:  # a selector lxml cannot evaluate: ignored like an unsupported one
            continue
        for el in found:
            matched.setdefault(el, []).append((rule.specificity, rule.order, rule.declarations))
    out: dict[Any, dict[str, str]] = {}
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        inline = el.get("style")
        rules = matched.get(el)
        extra = _presentational(el)
        if not rules and not inline and not extra:
            continue
        normal: dict[str, str] = {name: value for name, value, _ in extra}
        important: dict[str, str] = {}
        for _spec, _order, decls in sorted(rules or (), key=lambda r: (r[0], r[1])):
            for name, value, imp in decls:
                (important if imp else normal)[name] = value
        for name, value, imp in declarations(inline or ""):
            if imp:
                important[name] = value
            else:
                normal[name] = value
        normal.update(important)
        if normal:
            out[el] = normal
    return out
