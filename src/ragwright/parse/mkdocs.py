"""MkDocs blocks: admonitions and content tabs read as the prose they hold.

Python-Markdown's admonitions (``!!! note "Title"``, collapsible ``??? tip`` / ``???+ tip``) and Material for
MkDocs' content tabs (``=== "Sync"``) put their body four spaces in. CommonMark reads that body as an indented
code block and the marker line as a paragraph ("!!! note"), so a page's notes, version lines ("Added in 19.2")
and whole tabs would be indexed as code under a marker. Here each block becomes its title as a line of its own
(no title: nothing — the type is styling) followed by its body, dedented so it is parsed as Markdown in its
place. Fenced code is left as it is; nested blocks are read the same way, up to 20 levels (deeper ones keep
their text as CommonMark reads it).
"""

from __future__ import annotations

import re
from typing import Final

#: "!!! note", '!!! info "Added in 19.2"', "???+ tip inline end", '=== "Tab title"' (indent, marker, rest).
_MARKER: Final = re.compile(
    r'^( *)(!!!|\?\?\?\+?|===\+?)[ \t]+(?:([\w-]+(?:[ \t]+[\w-]+)*)[ \t]*)?(?:"([^"]*)")?[ \t]*$'
)
_FENCE: Final = re.compile(r"^ *(`{3,}|~{3,})")
_MAX_DEPTH: Final = 20


def has_blocks(text: str) -> bool:
    """Whether *text* may hold an admonition or a content tab (a cheap test before :func:`expand_blocks`)."""
    return "!!!" in text or "???" in text or "===" in text


def expand_blocks(text: str) -> str:
    """*text* with every admonition and content tab replaced by its title line and its dedented body."""
    return "\n".join(_expand(text.split("\n"), 0))


def _expand(lines: list[str], depth: int) -> list[str]:
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            out.append(line)
            i += 1
            continue
        if fence_match:
            fence = fence_match.group(1)
            out.append(line)
            i += 1
            continue
        match = _MARKER.match(line)
        if match is None or depth > _MAX_DEPTH or (match.group(2).startswith("=") and match.group(4) is None):
            out.append(line)
            i += 1
            continue
        indent = len(match.group(1))
        body, i = _body(lines, i + 1, indent + 4)
        title = (match.group(4) or "").strip()
        out.append("")
        if title:
            out.append(" " * indent + title)
            out.append("")
        out.extend(" " * indent + inner if inner else "" for inner in _expand(body, depth + 1))
        out.append("")
    return out


def _body(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines of a block's body from *start* (indented at least *indent*; blank lines inside kept), dedented,
    and the index of the first line after it."""
    body: list[str] = []
    end = start
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            body.append("")
        elif len(line) - len(line.lstrip(" ")) >= indent:
            body.append(line[indent:])
            end = i + 1
        else:
            break
        i += 1
    return body[: end - start], end
