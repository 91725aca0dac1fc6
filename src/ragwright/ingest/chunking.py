"""A document's chunks with their metadata: the source's, the document's, the caller's, the dates time
decay reads (:mod:`ragwright.ingest.dates`), the title, and each chunk's detected language."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, Protocol

from ragwright.chunk import tokens
from ragwright.index.language import chunk_languages
from ragwright.index.language import load as load_language_detector
from ragwright.ingest.dates import resolve_dates
from ragwright.ingest.scanned import mark_scanned
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.metadata import RESERVED_KEYS, normalize_metadata
from ragwright.sources.base import SourceItem

log = logging.getLogger(__name__)


class Chunker(Protocol):
    """What ingestion needs of a chunker (see :class:`~ragwright.chunk.StructuralChunker`)."""

    @property
    def version(self) -> str: ...

    def chunk(self, document: Document) -> list[Chunk]: ...


def chunk_document(
    chunker: Chunker,
    document: Document,
    item: SourceItem,
    access: tuple[str, tuple[str, ...]],
    user_meta: dict[str, Any],
) -> list[Chunk]:
    """Chunk *document* (of *item*, or one of its children) and give every chunk its metadata and access."""
    doc_meta = {k: v for k, v in normalize_metadata(document.metadata, strict=False).items() if k not in RESERVED_KEYS}
    base: dict[str, Any] = {**normalize_metadata(item.metadata), **doc_meta, **user_meta}
    # created_at / updated_at from the strongest origin, each with its origin (ingest.dates)
    base.update(resolve_dates(user_meta, document.metadata, document.mime_type, item.metadata))
    if document.title:
        base["title"] = document.title
    if document.id != item.document_id:
        base["parent_document_id"] = item.document_id
    out = []
    chunks = chunker.chunk(document)
    # The language each chunk is written in: what BM25 stems it with, and a filter key.
    # Metadata that already names one (the user's, the source's or the parser's) is kept.
    detected: list[str | None] = (
        [None] * len(chunks) if "language" in base else chunk_languages([c.text for c in chunks])
    )
    for c, language in zip(chunks, detected, strict=True):
        meta = {**base, **c.metadata}
        if language is not None and "language" not in meta:
            meta["language"] = language
        out.append(dataclasses.replace(c, metadata=meta, tenant=access[0], acl=access[1]))
    return mark_scanned(document, out)  # OCR text is flagged "from a scanned page" (ingest.scanned)


def warm_up(count_tokens: Callable[[str], int] | None = None) -> None:
    """Load what chunking a first document needs — the language detector, the ``cl100k_base`` encoder and,
    through *count_tokens* (the embedder's counter), the embedder's tokenizer — about 1.5 s of CPU.

    Ingestion calls this on a side thread when it starts parsing its first document, so the loads
    overlap that parse instead of delaying the first chunks (and with them the embedder). A failure
    is left for the stage that needs the model to report.
    """
    loads: list[Callable[[], object]] = [load_language_detector, tokens.encoder]
    if count_tokens is not None:
        loads.append(lambda: count_tokens("warm up"))
    for load in loads:
        try:
            load()
        except Exception as exc:  # reported again, where it matters, by the stage itself
            log.debug("warm_up_failed: %r", exc)
