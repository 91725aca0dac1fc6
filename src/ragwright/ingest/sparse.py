"""Sparse (SPLADE) vectors at ingestion: encoded beside the dense embeddings, back-filled for chunks
that have none (a store ingested before the encoder was configured, or after an encoder change).

Degraded, never broken: an encoding or storage failure is logged as ``sparse_ingest_failed``
and the chunks stay dense-only; the next run back-fills them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ragwright.model.chunk import Chunk
from ragwright.models.sparse.base import SparseEncoder
from ragwright.stores.base import SparseSearch

__all__ = ["backfill_sparse", "store_sparse"]

log = logging.getLogger(__name__)

_BATCH = 128


def _put(store: SparseSearch, encoder: SparseEncoder, items: Sequence[tuple[str, str]]) -> int:
    try:
        vectors = encoder.encode_documents([text for _, text in items])
        store.put_sparse([(cid, v) for (cid, _), v in zip(items, vectors, strict=True)], encoder=encoder.name)
    except Exception as exc:
        log.warning("sparse_ingest_failed: %d chunks stay dense-only (%s: %s)", len(items), type(exc).__name__, exc)
        return 0
    return len(items)


def store_sparse(store: object, encoder: SparseEncoder | None, chunks: Sequence[Chunk]) -> int:
    """Encode and store the sparse vectors of *chunks*; returns how many were stored."""
    if encoder is None or not chunks or not isinstance(store, SparseSearch):
        return 0
    items = [(c.id, c.text_for_embedding) for c in chunks]
    return sum(_put(store, encoder, items[i : i + _BATCH]) for i in range(0, len(items), _BATCH))


def backfill_sparse(store: object, encoder: SparseEncoder | None) -> int:
    """Encode every stored chunk that has no sparse vector from *encoder*; returns how many were stored."""
    if encoder is None or not isinstance(store, SparseSearch):
        return 0
    try:
        missing = store.missing_sparse(encoder.name)
    except Exception as exc:
        log.warning("sparse_ingest_failed: could not list chunks without sparse vectors (%s)", exc)
        return 0
    if missing:
        log.info("sparse_backfill: encoding %d chunks without sparse vectors", len(missing))
    return sum(_put(store, encoder, missing[i : i + _BATCH]) for i in range(0, len(missing), _BATCH))
