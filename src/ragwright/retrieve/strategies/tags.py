"""Tag-based retrieval: the query discovers which tag to filter on.

At ingestion, :class:`TagIndexer` (an ingestion hook) embeds each unique (key, value) tag once per
embedding model and links documents to their tags. At query time, :class:`TagRetriever` embeds the
query, scores it against the tags of documents the caller may see, and merges the best value of the
best ``top_k`` keys scoring at least ``min_score`` into the metadata filter (AND). It only ever adds
to the caller's filter: a key the caller already filters on is left alone, and the security filter
— applied by the store from the identity — is out of its reach. When the added tags leave nothing,
the search runs again without them (``tag_filter_relaxed``). A failure degrades to the plain search.
Recorded: ``outcome.tags`` (:class:`~ragwright.model.outcome.TagDecision`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from ragwright._sync import to_thread
from ragwright.cache.keys import bind_scope
from ragwright.model.chunk import Chunk
from ragwright.model.filters import And, Compare, Eq, Exists, Filter, In, Not, Or, all_of, as_filter
from ragwright.model.identity import Identity
from ragwright.model.metadata import RESERVED_KEYS
from ragwright.model.outcome import RetrievalOutcome, TagDecision
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.models.embedders.base import Embedder
from ragwright.retrieve.strategies.base import RetrievalRequest, RetrievalStage, RetrieverLike, StageBase, as_stage
from ragwright.retrieve.strategies.options import TagRetrievalOptions
from ragwright.stores.tags import TagPair, TagTable, decode_value, encode_value

log = logging.getLogger(__name__)


def _tag_values(value: Any, max_length: int) -> list[Any]:
    if isinstance(value, bool):
        return [value]
    if isinstance(value, int | float):
        return [value] if math.isfinite(value) else []
    if isinstance(value, str):
        return [value.strip()] if value.strip() and len(value) <= max_length else []
    if isinstance(value, list):
        return [v for item in value if not isinstance(item, list) for v in _tag_values(item, max_length)]
    return []


def document_tags(
    record: DocumentRecord, chunks: Sequence[Chunk], options: TagRetrievalOptions | None = None
) -> list[TagPair]:
    """The tags of a document: the caller's ingestion metadata (``record.metadata``, ragwright's own
    ``_`` keys and reserved keys excluded) plus the chunk metadata keys named in ``options.keys``."""
    opts = options or TagRetrievalOptions()
    found: dict[TagPair, None] = {}

    def add(key: str, value: Any) -> None:
        if key.startswith("_") or key in RESERVED_KEYS:
            return
        for v in _tag_values(value, opts.max_value_length):
            found[(key, encode_value(v))] = None

    for key, value in record.metadata.items():
        add(key, value)
    for key in opts.keys or ():
        for chunk in chunks:
            if key in chunk.metadata:
                add(key, chunk.metadata[key])
    return list(found)


def _tag_text(value_json: str) -> str:
    """What is embedded for a tag: its value, as text."""
    value = decode_value(value_json)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TagIndexer:
    """Ingestion hook (``IngestPipeline.hooks``): embeds new tags once, links documents to their tags."""

    def __init__(self, table: TagTable, embedder: Embedder, options: TagRetrievalOptions | None = None) -> None:
        self.table, self.embedder, self.options = table, embedder, options or TagRetrievalOptions()

    def __call__(self, written: Sequence[tuple[DocumentRecord, Sequence[Chunk]]]) -> None:
        per_document = {record.document_id: document_tags(record, chunks, self.options) for record, chunks in written}
        self._embed_new({pair for tags in per_document.values() for pair in tags})
        for document_id, tags in per_document.items():
            self.table.set_document_tags(document_id, tags)

    def _embed_new(self, pairs: set[TagPair]) -> int:
        new = sorted(pairs - self.table.embedded(self.embedder.name))
        if new:
            vectors = self.embedder.embed_documents([_tag_text(v) for _, v in new])
            self.table.add_vectors(self.embedder.name, [(k, v, vec) for (k, v), vec in zip(new, vectors, strict=True)])
        return len(new)

    def backfill(self, records: Sequence[DocumentRecord], chunks_of: Any = None) -> int:
        """Index the tags of documents ingested before the hook was installed; returns new tags embedded.

        *chunks_of* (``store.document_chunks``) is needed only when ``options.keys`` names chunk keys.
        """
        live = [r for r in records if r.status is DocumentStatus.INDEXED]
        written = [(r, chunks_of(r.document_id) if chunks_of and self.options.keys else []) for r in live]
        per_document = {r.document_id: document_tags(r, c, self.options) for r, c in written}
        count = self._embed_new({pair for tags in per_document.values() for pair in tags})
        for document_id, tags in per_document.items():
            self.table.set_document_tags(document_id, tags)
        return count


def filter_keys(flt: Filter | None) -> set[str]:
    """Every metadata key a filter mentions."""
    if flt is None:
        return set()
    if isinstance(flt, Eq | In | Compare | Exists):
        return {flt.key}
    if isinstance(flt, And | Or):
        return {k for clause in flt.clauses for k in filter_keys(clause)}
    if isinstance(flt, Not):
        return filter_keys(flt.clause)
    return set()


class TagRetriever(StageBase):
    """Adds the tags the query matches to the metadata filter, then retrieves with *inner*."""

    def __init__(
        self,
        inner: RetrievalStage | RetrieverLike,
        table: TagTable,
        embedder: Embedder,
        options: TagRetrievalOptions | None = None,
    ) -> None:
        self.inner, self.table, self.embedder = as_stage(inner), table, embedder
        self.options = options or TagRetrievalOptions()

    def match(
        self,
        query: str,
        identity: Identity,
        skip_keys: AbstractSet[str] = frozenset(),
        embedder: Embedder | None = None,
    ) -> dict[str, Any]:
        """The best value per key for *query* among the tags *identity* may see: ``{key: value}``
        (*embedder*: the call's, bound to its cache scope; by default the retriever's own)."""
        import numpy as np

        embedder = embedder or self.embedder
        entries = [e for e in self.table.visible(self.embedder.name, identity) if e[0] not in skip_keys]
        if not entries:
            return {}
        scores = np.stack([np.asarray(vec, dtype=np.float32) for _, _, vec in entries]) @ embedder.embed_query(query)
        best: dict[str, tuple[float, str]] = {}
        for (key, value, _), score in zip(entries, scores.tolist(), strict=True):
            if score >= self.options.min_score and (key not in best or score > best[key][0]):
                best[key] = (score, value)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[: self.options.top_k]
        return {key: decode_value(value) for key, (_, value) in ranked}

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        options, identity = request.options, request.identity
        if not options.use_tag_retrieval:
            return await self.inner.run(request)
        given: Filter | None = options.metadata_filter  # type: ignore[assignment]  # normalised by the options
        embedder = bind_scope(self.embedder, request.cache, fresh=request.fresh_embeddings)
        try:
            tags = await to_thread(self.match, request.query, identity, filter_keys(given), embedder)
        except Exception as exc:  # an optional stage degrades to the plain search
            log.warning("tag_retrieval_failed: %s; searching without tags", exc)
            return (await self.inner.run(request)).degrade("tags")
        if not tags:
            return replace(await self.inner.run(request), tags=TagDecision())
        narrowed = options.merged(metadata_filter=all_of([given, as_filter(tags)]))
        outcome = await self.inner.run(request.with_options(narrowed))
        if not outcome.results and self.options.relax_on_empty:
            log.info("tag_filter_relaxed: %s matched nothing; searching without it", tags)
            relaxed = await self.inner.run(request)
            return replace(relaxed, tags=TagDecision(MappingProxyType(tags), relaxed=True))
        return replace(outcome, tags=TagDecision(MappingProxyType(tags)))
