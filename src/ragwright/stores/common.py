"""Helpers the store implementations share."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.model.chunk import Chunk
from ragwright.model.records import DocumentRecord, DocumentStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: How long a staging lease protects staged bytes when its run never releases it (a crashed process).
STAGING_LEASE_S = 24 * 3600.0


def keyword_entry(chunk: Chunk) -> tuple[str, str, str | None]:
    """What the BM25 index gets for *chunk*: its id, its embedded text (section path included) and the
    language ingestion detected for it (``metadata["language"]``; ``None``: the analyzer detects it)."""
    language = chunk.metadata.get("language")
    return chunk.id, chunk.text_for_embedding, language if isinstance(language, str) and language else None


def check_vectors(chunk_count: int, vectors: Any, dimension: int | None) -> npt.NDArray[np.float32]:
    """Validate a batch of vectors for *chunk_count* chunks: 2-D float32, finite, right width."""
    import numpy as np

    arr = np.asarray(vectors, dtype=np.float32)
    if chunk_count == 0:
        return arr.reshape(0, dimension or (arr.shape[1] if arr.ndim == 2 else 0))
    if arr.ndim != 2 or arr.shape[0] != chunk_count:
        raise StoreError(f"expected {chunk_count} vectors, got an array of shape {arr.shape}")
    if dimension is not None and arr.shape[1] != dimension:
        raise StoreError(f"vectors have dimension {arr.shape[1]}, this store holds dimension {dimension}")
    if not np.isfinite(arr).all():
        raise StoreError("vectors contain NaN or infinite values")
    return arr


def check_embedder(bound: tuple[str, int] | None, name: str, dimension: int, where: str) -> None:
    """Refuse an embedder other than the one the store was built with."""
    if bound is not None and bound != (name, dimension):
        raise StoreError(
            f"{where} was built with the embedding model {bound[0]!r} (dimension {bound[1]}), "
            f"but it was opened with {name!r} (dimension {dimension}); open it with the same model, "
            "or re-ingest into a new store"
        )


def deleted_record(record: DocumentRecord) -> DocumentRecord:
    return dataclasses.replace(record, status=DocumentStatus.DELETED, chunk_count=0, updated_at=time.time())


def record_from_columns(row: Sequence[Any], decode: Callable[[Any], Any] | None = None) -> DocumentRecord:
    """A :class:`DocumentRecord` from a documents row, its columns in the order :func:`record_columns` writes.

    *decode* turns the stored ``acl`` and ``metadata`` into Python values (SQLite keeps them as JSON text).
    """
    (doc, source, chash, status, pv, cv, em, count, stage, reason, tenant, acl, root, title, ca, ua, meta) = row
    if decode is not None:
        acl, meta = decode(acl), decode(meta)
    return DocumentRecord(
        document_id=doc,
        source=source,
        content_hash=chash,
        status=DocumentStatus(status),
        parser_version=pv,
        chunker_version=cv,
        embedding_model=em,
        chunk_count=count,
        stage=stage,
        reason=reason,
        tenant=tenant,
        acl=tuple(acl),
        source_root=root,
        title=title,
        created_at=ca,
        updated_at=ua,
        metadata=meta,
    )


def record_columns(r: DocumentRecord, acl: Any, metadata: Any) -> tuple[Any, ...]:
    """The documents row of *r*, with *acl* and *metadata* already encoded for the database."""
    return (
        r.document_id,
        r.source,
        r.content_hash,
        r.status.value,
        r.parser_version,
        r.chunker_version,
        r.embedding_model,
        r.chunk_count,
        r.stage,
        r.reason,
        r.tenant,
        acl,
        r.source_root,
        r.title,
        r.created_at,
        r.updated_at,
        metadata,
    )


def chunk_from_columns(row: Sequence[Any], decode: Callable[[Any], Any] | None = None) -> Chunk:
    """A :class:`Chunk` from the first 14 columns of a chunk row (``CHUNK_COLUMNS`` order).

    *decode* turns the stored section path, metadata and ``acl`` into Python values (SQLite keeps them
    as JSON text; PostgreSQL returns them decoded).
    """
    (cid, doc, pos, text, embed_text, section, page, page_end, parent, prev, nxt, meta, tenant, acl) = row[:14]
    if decode is not None:
        section, meta, acl = decode(section), decode(meta), decode(acl)
    return Chunk(
        id=cid,
        document_id=doc,
        text=text,
        position=pos,
        section_path=tuple(section),
        page=page,
        page_end=page_end,
        parent_id=parent,
        prev_id=prev,
        next_id=nxt,
        metadata=meta,
        tenant=tenant,
        acl=tuple(acl),
        embed_text=embed_text,
    )
