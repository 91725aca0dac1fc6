"""Format → parser. Formats without a parser yet are refused with a reason (and dead-lettered)."""

from __future__ import annotations

from ragwright.errors import ParseError
from ragwright.model.document import Document
from ragwright.options import ParseOptions
from ragwright.parse import markdown, text
from ragwright.parse.detect import decode_text, detect

_VERSIONS = {"markdown": markdown.VERSION, "text": text.VERSION}
_LATER = {
    "pdf": "PDF",
    "zip": "Office/ZIP container (DOCX, XLSX, PPTX)",
    "ole": "legacy Office or Outlook (OLE) file",
    "html": "HTML",
}


def parser_version_for(data: bytes, name_hint: str = "") -> str:
    fmt = detect(data, name_hint)
    return _VERSIONS.get(fmt, f"{fmt}/none")


def parse_bytes(
    document_id: str,
    data: bytes,
    *,
    name_hint: str = "",
    source: str | None = None,
    options: ParseOptions | None = None,
) -> Document:
    """Parse *data* into a Document, or raise :class:`ParseError` saying why not."""
    if not data.strip():
        raise ParseError("the file is empty")
    fmt = detect(data, name_hint)
    if fmt in _LATER:
        raise ParseError(f"unsupported format: {_LATER[fmt]} documents are not supported by this release")
    if fmt == "binary":
        raise ParseError("unsupported format: binary content that is not a known document type")
    decoded = decode_text(data)
    if decoded is None:  # pragma: no cover - detect() already said text
        raise ParseError("the file is not decodable text")
    if fmt == "markdown":
        doc = markdown.parse_markdown(document_id, decoded, source=source)
    else:
        doc = text.parse_text(document_id, decoded, source=source)
    if not doc.elements:
        raise ParseError("no text could be extracted")
    return doc
