"""A JSONL / BEIR corpus: one document per line, ``{"_id", "title", "text", ...}``."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.model.ids import canonical_json, sha256_text
from ragwright.sources.base import SourceItem


def record_document(record: dict[str, Any], *, source: str) -> Document:
    """A corpus record as a Document: the title as TITLE element, the text as paragraphs."""
    doc_id = str(record["_id"])
    title = str(record.get("title") or "").strip() or None
    elements: list[Element] = []
    if title:
        elements.append(Element(ElementKind.TITLE, title))
    for para in str(record.get("text") or "").split("\n\n"):
        para = " ".join(para.split())
        if para:
            elements.append(Element(ElementKind.PARAGRAPH, para))
    extra = {k: v for k, v in record.get("metadata", {}).items()} if isinstance(record.get("metadata"), dict) else {}
    return Document(id=doc_id, elements=tuple(elements), title=title, source=source, metadata=extra)


class JsonlSource:
    """Documents from a JSONL file; each line's ``_id`` is the document id."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise ConfigError(f"{path}: no such JSONL file")
        self._records: list[tuple[int, dict[str, Any] | None, str]] = []
        with self.path.open("r", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or "_id" not in rec:
                        raise ValueError('each line must be an object with an "_id"')
                    self._records.append((lineno, rec, ""))
                except ValueError as exc:
                    self._records.append((lineno, None, str(exc)))

    @property
    def root(self) -> str:
        return self.path.resolve().as_posix()

    def items(self) -> Iterator[SourceItem]:
        uri = self.path.resolve().as_uri()
        for lineno, rec, error in self._records:
            if rec is None:
                yield SourceItem(
                    document_id=f"{self.path.name}:{lineno}",
                    uri=f"{uri}#L{lineno}",
                    load=_failing(f"line {lineno} is not a valid corpus record: {error}"),
                )
                continue
            doc = record_document(rec, source=f"{uri}#L{lineno}")
            yield SourceItem(
                document_id=doc.id,
                uri=f"{uri}#L{lineno}",
                load=functools.partial(_identity, doc),
                fingerprint=sha256_text(canonical_json(rec)),
            )

    def __len__(self) -> int:
        return len(self._records)


def _failing(message: str) -> Any:
    def load() -> bytes:
        from ragwright.errors import ParseError

        raise ParseError(message)

    return load


def _identity(doc: Document) -> Document:
    return doc
