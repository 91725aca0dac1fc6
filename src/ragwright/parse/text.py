"""Plain text: paragraphs separated by blank lines."""

from __future__ import annotations

import re

from ragwright.model.document import Document, Element, ElementKind

VERSION = "text/1"
_BLANK = re.compile(r"\n\s*\n")


def parse_text(document_id: str, text: str, *, source: str | None = None) -> Document:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [" ".join(p.split()) for p in _BLANK.split(text)]
    elements = tuple(Element(ElementKind.PARAGRAPH, p) for p in paragraphs if p)
    return Document(id=document_id, elements=elements, source=source, mime_type="text/plain")


def parse_text_bytes(
    document_id: str, data: bytes, *, source: str | None, options: object = None, name_hint: str = ""
) -> Document:
    """The registry entry point: decode, then :func:`parse_text`."""
    from ragwright.parse.detect import text_or_refuse

    return parse_text(document_id, text_or_refuse(data), source=source)
