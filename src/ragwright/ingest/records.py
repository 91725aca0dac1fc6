"""The registry records one ingestion writes for a document: the attempt a failure records, the indexed
record a successful parse starts from, and the finished records of the document and its attachments
(children) once they are chunked."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragwright.ingest.changes import metadata_keys
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.ids import sha256_text
from ragwright.model.metadata import normalize_metadata
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.sources.base import SourceItem

Access = tuple[str, tuple[str, ...]]


def failed_attempt(item: SourceItem, access: Access, root: str | None, user_meta: Mapping[str, Any]) -> DocumentRecord:
    """What a failure records: this attempt's tenant, ACL, metadata and root (see ingest.deadletter)."""
    return DocumentRecord(
        item.document_id,
        item.uri,
        "",
        DocumentStatus.FAILED,
        tenant=access[0],
        acl=access[1],
        source_root=root,
        metadata=dict(user_meta),
    )


def indexed_record(
    item: SourceItem,
    content_hash: str,
    versions: tuple[str, str, str],
    access: Access,
    root: str | None,
    user_meta: Mapping[str, Any],
    previous: DocumentRecord | None,
) -> DocumentRecord:
    """The record of a document about to be parsed: its hash and pipeline versions (parser, chunker,
    embedding model), who may see it, and its first-seen time kept from *previous*."""
    now = time.time()
    parser_version, chunker_version, embedding_model = versions
    return DocumentRecord(
        document_id=item.document_id,
        source=item.uri,
        content_hash=content_hash,
        status=DocumentStatus.INDEXED,
        parser_version=parser_version,
        chunker_version=chunker_version,
        embedding_model=embedding_model,
        tenant=access[0],
        acl=access[1],
        source_root=root,
        created_at=previous.created_at if previous else now,
        updated_at=now,
        metadata=dict(user_meta),
    )


def finished_records(
    record: DocumentRecord,
    item: SourceItem,
    document: Document,
    chunks: list[Chunk],
    children: Sequence[tuple[Document, list[Chunk]]],
) -> list[tuple[DocumentRecord, list[Chunk]]]:
    """The document's record with what parsing and chunking found, then one record per attachment that
    yielded chunks (its own id, source and hash, ``parent`` set), each with its chunks."""
    child_ids = [child.id for child, child_chunks in children if child_chunks]
    record = dataclasses.replace(
        record,
        title=document.title,
        chunk_count=len(chunks),
        metadata_keys=metadata_keys(chunks),  # what a filter can match (Rag.metadata_keys)
        children=tuple(child_ids),
        warnings=tuple(document.warnings),
        name_hint=item.name_hint,  # a reindex parses staged bytes with the same hint …
        source_meta=normalize_metadata(item.metadata),  # … and gives the chunks the same metadata
    )
    out = [(record, chunks)]
    for child, child_chunks in children:
        if not child_chunks:
            continue
        out.append(
            (
                dataclasses.replace(
                    record,
                    document_id=child.id,
                    source=f"{item.uri}#{child.id.rsplit('/', 1)[-1]}",
                    content_hash=sha256_text(f"{record.content_hash}\x1f{child.id}"),
                    title=child.title,
                    chunk_count=len(child_chunks),
                    metadata_keys=metadata_keys(child_chunks),
                    children=(),
                    parent=record.document_id,
                    warnings=tuple(child.warnings),
                ),
                child_chunks,
            )
        )
    return out
