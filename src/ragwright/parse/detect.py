"""Format detection by content (magic bytes, container inspection), not by extension alone.

Text formats carry no magic number; for them the file name is a *hint* that chooses between
Markdown and plain text once the content has been found to be text.
"""

from __future__ import annotations

import codecs
from typing import Final, Literal

Format = Literal["markdown", "text", "pdf", "zip", "ole", "html", "binary"]

_MAGIC: Final = (
    (b"%PDF-", "pdf"),
    (b"PK\x03\x04", "zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
)
_MARKDOWN_SUFFIXES: Final = (".md", ".markdown", ".mdown", ".mkd")
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(data: bytes) -> str | None:
    """Decode bytes that are text (BOM-aware UTF-8/16, then UTF-8); ``None`` when they are not text."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    sample = data[:8192]
    # Legacy 8-bit text: accept when almost every byte is printable.
    printable = sum(1 for b in sample if b in b"\t\n\r" or 32 <= b < 127 or b >= 160)
    if sample and printable / len(sample) > 0.97:
        return data.decode("cp1252", errors="replace")
    return None


def detect(data: bytes, name_hint: str = "") -> Format:
    """The format of *data*; *name_hint* (a file name) only separates Markdown from plain text."""
    for magic, fmt in _MAGIC:
        if data.startswith(magic):
            return fmt  # type: ignore[return-value]
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    text = decode_text(data)
    if text is None:
        return "binary"
    if name_hint.lower().endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    return "text"
