"""The embedding step of ingestion: vectors for a batch of documents' chunks.

A chunk whose embedded text (``Chunk.text_for_embedding``) and model are those of a chunk of the
document's previous version keeps that vector: editing one chunk, or a setting that changes only some
chunks' embedded text (contextual enrichment), re-embeds only those chunks. With late chunking
(:mod:`ragwright.chunk.late`) a vector depends on the whole document: each document's chunks are
embedded together and nothing is reused, to or from a late-chunked version.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.chunk.late import VERSION as LATE_VERSION
from ragwright.errors import RagwrightError
from ragwright.ingest.report import IngestReport
from ragwright.model.chunk import Chunk
from ragwright.models.embedders.base import Embedder
from ragwright.stores.base import Store

if TYPE_CHECKING:
    from ragwright.chunk.late import LateChunkEmbedder

log = logging.getLogger(__name__)

#: ``(document id, its chunks, whether a previous version was indexed)``
DocChunks = tuple[str, Sequence[Chunk], bool]


def reusable_vectors(store: Store, embedder: Embedder, docs: Sequence[DocChunks]) -> dict[str, Any]:
    """The stored vectors of the previous version of each document, by embedded text, for the texts
    the new chunks embed."""
    out: dict[str, Any] = {}
    for document_id, chunks, existed in docs:
        if not existed:
            continue
        previous = store.get_record(document_id)
        if previous is None or previous.embedding_model != embedder.name:
            continue
        if LATE_VERSION.split("/")[0] + "/" in previous.chunker_version:  # its vectors hold document context
            continue
        wanted = {c.text_for_embedding for c in chunks}
        old = {c.id: c.text_for_embedding for c in store.document_chunks(document_id)}
        ids = [cid for cid, text in old.items() if text in wanted and text not in out]
        for cid, vector in store.get_vectors(ids).items() if ids else ():
            if len(vector) == embedder.dimension:
                out[old[cid]] = vector
    return out


def embed_chunks(
    store: Store,
    embedder: Embedder,
    docs: Sequence[DocChunks],
    texts: Sequence[str],
    report: IngestReport,
    late: LateChunkEmbedder | None = None,
) -> tuple[Any, set[int]]:
    """The vectors of *texts* (the chunks of *docs*, in order) and the indexes of those reused."""
    import numpy as np

    if late is not None:
        with report.timed("embed"):
            parts = [late.embed(chunks) for _, chunks, _ in docs]
        return (np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), np.float32)), set()
    try:
        known = reusable_vectors(store, embedder, docs)
    except RagwrightError as exc:  # reuse is an optimisation: without it everything is embedded
        log.warning("vector_reuse_failed: %s", exc)
        known = {}
    todo = [i for i, t in enumerate(texts) if t not in known]
    with report.timed("embed"):
        fresh = embedder.embed_documents([texts[i] for i in todo]) if todo or not known else None
    if not known:
        return fresh, set()
    vectors = np.empty((len(texts), embedder.dimension), dtype=np.float32)
    for k, i in enumerate(todo):
        vectors[i] = fresh[k]  # type: ignore[index]
    reused = {i for i, t in enumerate(texts) if t in known}
    for i in reused:
        vectors[i] = known[texts[i]]
    return vectors, reused
