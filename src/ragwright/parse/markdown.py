"""Markdown: headings with levels, paragraphs, lists, code blocks, tables, front matter.

Parsed with markdown-it-py (CommonMark + tables); structure is kept so the chunker can start chunks
at headings and never split a table, list or code block.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Final

from ragwright._deps import require
from ragwright.model.document import Document, Element, ElementKind
from ragwright.parse.mkdocs import expand_blocks, has_blocks
from ragwright.parse.myst import directive_elements, is_target, role_text

VERSION = "markdown/4"  # 2: front-matter dates as created_at / updated_at; 3: Hugo shortcodes, MyST; 4: MkDocs blocks
#: A Hugo shortcode tag ("{{% note %}}", "{{< tab tabID=\"fish\" >}}", "{{% /warning %}}"): site markup
#: around prose, never content (docs built with Hugo write notes and tabs so).
_SHORTCODE: Final = re.compile(r"\{\{([<%])\s*/?\s*[A-Za-z][\w.-]*(?:\s[^{}]*?)?\s*\1?[>%]\}\}")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(\n|\Z)", re.DOTALL)
#: Front-matter keys of static site generators and blogs that name a page's dates.
_DATE_ALIASES: Final = {
    "created_at": frozenset({"date", "created", "published", "publishdate", "pubdate", "date_created"}),
    "updated_at": frozenset({"updated", "modified", "lastmod", "last_modified", "datemodified", "date_modified"}),
}


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter as a mapping (empty when absent or unreadable) and the remaining text."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    yaml = require("yaml", "markdown", "Markdown front matter")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(data, dict):
        return {}, text
    meta: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, datetime | date):  # an unquoted date: YAML reads it as a date, not a string
            value = value.isoformat()
        if isinstance(value, str | int | float | bool):
            meta[str(key)] = value
    for target, aliases in _DATE_ALIASES.items():  # `date:` / `lastmod:` are what time decay reads
        if target not in meta:
            found = next((meta[k] for k in meta if k.lower() in aliases and isinstance(meta[k], str)), None)
            if found is not None:
                meta[target] = found
    return meta, text[match.end() :]


def _prose(text: str) -> str:
    """*text* without Hugo shortcode tags (the prose between them stays)."""
    return " ".join(_SHORTCODE.sub(" ", text).split()) if "{{" in text else text


def _inline_text(token: Any) -> str:
    """Plain text of an inline token (links keep their text, images their alt text)."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type == "code_inline" and parts:  # a MyST role: "{exc}" before the span names it
            parts[-1], code = role_text(parts[-1], child.content)
            parts.append(code)
        elif child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n" if child.type == "hardbreak" else " ")
        elif child.type == "image":
            parts.append(child.content or "")
    return "".join(parts).strip()


def _table_markdown(tokens: list[Any], start: int) -> tuple[str, int]:
    """Render the table starting at ``tokens[start]`` back to Markdown; returns (text, end index)."""
    rows: list[list[str]] = []
    header_rows = 0
    i = start + 1
    in_head = False
    while tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            rows.append([])
            if in_head:
                header_rows += 1
        elif tok.type == "inline":
            rows[-1].append(_inline_text(tok).replace("|", "\\|"))
        i += 1
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(row) + " |")
        if n == header_rows - 1:
            lines.append("|" + "|".join(" --- " for _ in row) + "|")
    return "\n".join(lines), i


def parse_markdown(document_id: str, text: str, *, source: str | None = None) -> Document:
    front, body = split_front_matter(text.replace("\r\n", "\n"))
    elements = _elements(body, 0)
    title: str | None = front["title"].strip() or None if isinstance(front.get("title"), str) else None
    if title is None:
        title = next((e.text for e in elements if e.kind is ElementKind.HEADING and e.level == 1), None)
    return Document(
        id=document_id,
        elements=tuple(elements),
        title=title,
        source=source,
        mime_type="text/markdown",
        metadata=front,
    )


def _elements(body: str, depth: int) -> list[Element]:
    """The elements of Markdown *body* (a MyST directive's body is read at *depth* + 1)."""
    mdit = require("markdown_it", "markdown", "Markdown parsing")
    tokens = mdit.MarkdownIt("commonmark").enable("table").parse(expand_blocks(body) if has_blocks(body) else body)
    elements: list[Element] = []
    list_depth = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            level = int(tok.tag[1:])
            heading = _prose(_inline_text(tokens[i + 1]))
            if heading:
                elements.append(Element(ElementKind.HEADING, heading, level=level))
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "inline" and i > 0 and tokens[i - 1].type == "paragraph_open":
            content = _prose(_inline_text(tok))
            if content and not is_target(content):
                in_item = list_depth > 0
                elements.append(
                    Element(
                        ElementKind.LIST_ITEM if in_item else ElementKind.PARAGRAPH,
                        content,
                        level=list_depth if in_item else None,
                    )
                )
        elif kind in ("fence", "code_block"):
            directive = directive_elements(tok.info or "", tok.content, _elements, depth) if kind == "fence" else None
            code = tok.content.rstrip("\n")
            if directive is not None:
                elements.extend(directive)
            elif code.strip():
                lang = (tok.info or "").strip().split(" ")[0] or None
                attrs = {"language": lang} if lang else {}
                elements.append(Element(ElementKind.CODE, code, attributes=attrs))
        elif kind == "table_open":
            table, i = _table_markdown(tokens, i)
            elements.append(Element(ElementKind.TABLE, table))
        elif kind == "html_block":
            stripped = re.sub(r"<[^>]+>", " ", tok.content)
            stripped = " ".join(stripped.split())
            # an icon or separator alone ("<div class=\"icon\">⚖️</div>") is decoration, not prose
            if any(c.isalnum() for c in stripped) and not tok.content.lstrip().startswith("<!--"):
                elements.append(Element(ElementKind.PARAGRAPH, stripped))
        i += 1
    return elements


def parse_markdown_bytes(
    document_id: str, data: bytes, *, source: str | None, options: object = None, name_hint: str = ""
) -> Document:
    """The registry entry point: decode, then :func:`parse_markdown`."""
    from ragwright.parse.detect import text_or_refuse

    return parse_markdown(document_id, text_or_refuse(data), source=source)
