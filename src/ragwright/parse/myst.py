"""MyST, the Markdown of Sphinx sites: roles, directive fences and targets read as a reader sees them.

CommonMark reads ``{exc}`Abort``` as the text "{exc}" and the code "Abort", a ```` ```{warning} ```` fence
as a code block and ``(exit-codes)=`` as a paragraph. Here a role reads as its title (``Abort``;
``{doc}`Entry points <entry-points>``` as "Entry points"), a code directive (``code-block``, ``code``) stays
code, ``eval-rst`` is parsed as reStructuredText, a table of contents or diagram is dropped, and any other
directive (``note``, ``warning``, ``versionadded``, ``tab-item`` …) is parsed as Markdown in its place —
its prose is the document's prose. A target line is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ragwright.model.document import Element, ElementKind
from ragwright.parse.rst import DROPPED_DIRECTIVES, role_title

#: Text that ends in a role name, right before the role's code span: "{exc}" in "{exc}`Abort`".
ROLE_SUFFIX: Final = re.compile(r"\{[A-Za-z][\w:.+-]*\}$")
_TARGET: Final = re.compile(r"^\([^()\s]+\)=$")
_OPTION: Final = re.compile(r"^:[\w-]+:")
_CODE_DIRECTIVES: Final = frozenset({"code-block", "code", "sourcecode", "code-cell"})
_MAX_DEPTH: Final = 20


def is_target(text: str) -> bool:
    """Whether *text* is a MyST target line ("(exception-handling)="), a link anchor and no prose."""
    return bool(_TARGET.match(text.strip()))


def role_text(before: str, code: str) -> tuple[str, str]:
    """The text before a code span and the span's text, read as MyST: when *before* ends in a role name
    ("… handles {exc}"), the name goes and the span reads as the role's title."""
    if ROLE_SUFFIX.search(before):
        return ROLE_SUFFIX.sub("", before), role_title(code)
    return before, code


def _body(content: str) -> str:
    """A directive's content without its options (":caption: x" lines, or a "---" YAML block)."""
    lines = content.split("\n")
    if lines and lines[0].strip() == "---":
        end = next((n for n, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
        lines = lines[end + 1 :] if end is not None else lines
    while lines and (_OPTION.match(lines[0].strip()) or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).rstrip("\n")


def directive_elements(
    info: str, content: str, parse_markdown: Callable[[str, int], list[Element]], depth: int
) -> list[Element] | None:
    """The elements of a fence whose info string names a MyST directive ("{note}", "{code-block} python"),
    or ``None`` when the fence is plain code."""
    match = re.match(r"^\{([A-Za-z][\w:.+-]*)\}\s*(.*)$", info.strip())
    if match is None:
        return None
    name, argument = match.group(1), match.group(2).strip()
    body = _body(content)
    if not body.strip() or name.split(":")[-1] in DROPPED_DIRECTIVES:
        return []
    if depth > _MAX_DEPTH:  # nesting this deep is no documentation: its text, unparsed, loses nothing
        return [Element(ElementKind.PARAGRAPH, " ".join(body.split()))]
    if name in _CODE_DIRECTIVES:
        language = argument.split(" ")[0] if argument else None
        return [Element(ElementKind.CODE, body, attributes={"language": language} if language else {})]
    if name == "eval-rst":
        from ragwright.parse.rst import parse_rst

        return list(parse_rst("eval-rst", body).elements)
    return parse_markdown(body, depth + 1)
