"""The unified document model every parser produces: a Document of typed Elements."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ragwright.errors import ConfigError


class ElementKind(StrEnum):
    """What an element is. Chunkers treat structure (tables, code, lists) as indivisible units."""

    TITLE = "title"
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE = "table"
    CODE = "code"
    IMAGE = "image"
    HEADER = "header"
    FOOTER = "footer"
    QUOTE = "quote"


@dataclass(frozen=True, slots=True)
class Element:
    """One structural element of a document.

    ``level`` is the heading level (1 = top) for headings and the nesting depth for list items;
    ``page`` is 1-based where the source has pages; ``attributes`` hold format-specific facts
    (a code block's language, a table's caption, OCR provenance …).
    """

    kind: ElementKind
    text: str
    level: int | None = None
    page: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind is ElementKind.HEADING and (self.level is None or self.level < 1):
            raise ConfigError(f"a heading needs a level >= 1, got {self.level!r}", field="level", value=self.level)
        if self.page is not None and self.page < 1:
            raise ConfigError(f"pages are 1-based, got {self.page}", field="page", value=self.page)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed document: its id, its elements in reading order, and document metadata.

    ``children`` are documents contained in this one (an email's attachments), already parsed, with ids
    derived from the parent's (``parent_id + "/" + name``); ingestion indexes them as documents of their
    own linked to the parent. ``warnings`` are non-fatal findings (hidden text stripped, pages flagged
    for low OCR confidence, "probably scanned" …) reported by ``ragwright parse`` and the registry.
    """

    id: str
    elements: tuple[Element, ...]
    title: str | None = None
    source: str | None = None
    mime_type: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    children: tuple[Document, ...] = ()
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            raise ConfigError("a document needs a non-empty id", field="id", value=self.id)

    def to_dict(self) -> dict[str, Any]:
        """The whole document as JSON-ready data (``ragwright parse --json``)."""
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "mime_type": self.mime_type,
            "metadata": self.metadata,
            "warnings": list(self.warnings),
            "elements": [
                {"kind": e.kind.value, "text": e.text, "level": e.level, "page": e.page, "attributes": e.attributes}
                for e in self.elements
            ],
            "children": [c.to_dict() for c in self.children],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        """The inverse of :meth:`to_dict` (used by the parsed-document cache)."""
        return cls(
            id=data["id"],
            elements=tuple(
                Element(
                    ElementKind(e["kind"]), e["text"], e.get("level"), e.get("page"), dict(e.get("attributes") or {})
                )
                for e in data["elements"]
            ),
            title=data.get("title"),
            source=data.get("source"),
            mime_type=data.get("mime_type"),
            metadata=dict(data.get("metadata") or {}),
            children=tuple(cls.from_dict(c) for c in data.get("children") or ()),
            warnings=tuple(data.get("warnings") or ()),
        )

    @property
    def text(self) -> str:
        """All element text, blank-line separated (for diagnostics and simple consumers)."""
        return "\n\n".join(e.text for e in self.elements if e.text)
