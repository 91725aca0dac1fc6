"""Keeping the graph in step with the store: extraction at ingestion, cascade on change, resolution.

* :meth:`GraphIndex.annotate` runs in the ingestion pipeline right after chunking (on the producer
  thread, so it overlaps with embedding): it extracts each chunk's entities and relations and writes
  the entity names into ``metadata["entities"]`` after any the caller gave (filterable: ``{"entities": "Contoso"}``).
* :meth:`GraphIndex.on_written` (an ingest hook, after a document's chunks are written) replaces what
  that document contributed to the graph — its mentions, relations and aliases — in one transaction.
* :meth:`GraphIndex.sync` reconciles with the registry: a document removed (or failed) loses its rows,
  a document whose tenant/ACL changed has them updated, an indexed document the graph lacks (ingested
  before the graph was switched on, or under another extractor) is extracted from its stored chunks.
  :class:`~ragwright.rag.Rag` calls it after every ingestion, removal and ACL update; queries never depend
  on it for security (see :mod:`ragwright.graph.visibility`).
* :meth:`GraphIndex.resolve` merges a tenant's entity names whose embeddings are close (same type,
  cosine ≥ ``merge_similarity``), recorded and reversible; acronyms (``European Central Bank (ECB)``)
  are aliases from the chunk that defines them, visible only with that chunk.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.graph.model import ChunkText, Extraction, Extractor, grounded
from ragwright.graph.options import GraphOptions
from ragwright.graph.resolve import merge_targets, normalised
from ragwright.graph.tables import GraphTables, open_graph_tables
from ragwright.model.chunk import Chunk
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.side_tables import follow_documents

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.llms.base import ChatModel
    from ragwright.stores.base import Store

log = logging.getLogger(__name__)
_CACHE = 20_000  # extractions kept between annotate (producer thread) and on_written (writer thread)


def make_extractor(options: GraphOptions, llm: ChatModel | None = None) -> Extractor:
    from ragwright.errors import ConfigError

    if options.extractor == "spacy":
        from ragwright.graph.statistical import SpacyExtractor

        return SpacyExtractor()
    if options.extractor == "llm":
        if llm is None:
            raise ConfigError("GraphOptions(extractor='llm') needs a chat model: Rag(..., llm=load_chat('local'))")
        from ragwright.graph.llm_extract import LlmExtractor

        return LlmExtractor(llm)
    from ragwright.graph.rules import RuleExtractor

    return RuleExtractor()


def chunk_text(chunk: Chunk) -> ChunkText:
    return ChunkText(chunk.id, chunk.text, chunk.section_path)


class GraphIndex:
    """The graph of one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        options: GraphOptions | None = None,
        *,
        llm: ChatModel | None = None,
        extractor: Extractor | None = None,
        tables: GraphTables | None = None,
    ) -> None:
        self.store, self.embedder = store, embedder
        self.options = options or GraphOptions()
        self.extractor = extractor or make_extractor(self.options, llm)
        self.tables = tables or open_graph_tables(store)
        self.tables.on_move = self._moved  # another process's reindex: the new collection's tables
        self._cache: OrderedDict[str, Extraction] = OrderedDict()
        self._lock = threading.Lock()

    # -- ingestion ---------------------------------------------------------------------------------------
    def extract(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        texts = [chunk_text(c) for c in chunks]
        found = self.extractor.extract(texts)
        return [grounded(x, t.text) for x, t in zip(found, texts, strict=True)]

    def annotate(self, chunks: list[Chunk]) -> list[Chunk]:
        """Extract *chunks* (kept for :meth:`on_written`) and return them with ``metadata["entities"]``."""
        if not chunks:
            return chunks
        extractions = self.extract(chunks)
        with self._lock:
            for x in extractions:
                self._cache[x.chunk_id] = x
            while len(self._cache) > _CACHE:
                self._cache.popitem(last=False)
        if not self.options.chunk_metadata:
            return chunks
        return [
            dataclasses.replace(
                c, metadata={**c.metadata, "entities": _with_own(c.metadata.get("entities"), x.names())}
            )
            if x.names()
            else c
            for c, x in zip(chunks, extractions, strict=True)
        ]

    def on_written(self, written: Sequence[tuple[DocumentRecord, Sequence[Chunk]]]) -> None:
        """The ingest hook: replace each written document's graph rows."""
        for record, chunks in written:
            self._write(record, chunks)

    def _write(self, record: DocumentRecord, chunks: Sequence[Chunk]) -> None:
        with self._lock:
            cached = {c.id: self._cache.pop(c.id, None) for c in chunks}
        missing = [c for c in chunks if cached[c.id] is None]
        if missing:
            cached.update({x.chunk_id: x for x in self.extract(missing)})
        extractions = [(record.document_id, x) for c in chunks if (x := cached[c.id]) is not None]
        self.tables.replace_document(record.document_id, record.tenant, record.acl, self.extractor.version, extractions)

    # -- cascade -----------------------------------------------------------------------------------------
    def _moved(self) -> None:
        """The store now reads other tables (on PostgreSQL: another process's reindex moved the alias to a
        new collection): bring the graph there in step with the registry."""
        self.sync()

    def sync(self) -> dict[str, int]:
        """Reconcile with the registry (see the module docstring); returns what changed."""
        records = {r.document_id: r for r in self.store.list_records() if r.status is DocumentStatus.INDEXED}
        done = {"removed": 0, "access": 0, "extracted": 0}
        written = self.tables.extracted_at()
        for doc, (tenant, acl, extractor) in self.tables.documents().items():
            record = records.get(doc)
            if record is None:
                self.tables.remove_document(doc)
                done["removed"] += 1
            elif (record.tenant, tuple(sorted(record.acl))) != (tenant, tuple(sorted(acl))):
                self.tables.update_access(doc, record.tenant, record.acl)
                done["access"] += 1
            # re-indexed after its graph rows were written (by a run without the graph): extract it again
            if record is not None and extractor == self.extractor.version and record.updated_at <= written[doc]:
                records.pop(doc)
        for doc, record in records.items():  # indexed, not (or differently) in the graph: extract now
            chunks = self.store.document_chunks(doc)
            if chunks:
                self._write(record, chunks)
                done["extracted"] += 1
        return done

    def documents_changed(self, document_ids: Sequence[str]) -> None:
        """A removal or an access change of these documents (Rag.remove / Rag.update_acl): follow it now."""
        follow_documents(self.store, self.tables, document_ids)

    # -- entity resolution -------------------------------------------------------------------------------
    def resolve(self, tenant: str | None = None) -> list[tuple[str, str, str, float]]:
        """Merge close names per tenant (never across); returns ``(tenant, alias, key, similarity)`` added."""
        if self.embedder is None or self.options.merge_similarity is None:
            return []
        threshold = self.options.merge_similarity
        added: list[tuple[str, str, str, float]] = []
        for t in [tenant] if tenant is not None else self.tables.tenants():
            merged = {a for a, *_ in self.tables.merges(t)}
            by_type: dict[str, list[tuple[str, str, int]]] = {}
            for key, type_, surface, n in self.tables.tenant_keys(t):
                if type_ not in ("DATE", "MONEY", "PERCENT", "QUANTITY") and key not in merged and len(key) > 2:
                    by_type.setdefault(type_, []).append((key, surface, n))
            for type_, entries in by_type.items():
                if len(entries) < 2 or len(entries) > 5_000:
                    continue
                entries.sort(key=lambda e: (-e[2], e[0]))  # the most mentioned name is the canonical one
                vectors = normalised(self.embedder.embed_documents([s for _, s, _ in entries]))
                for j, i in merge_targets([k for k, _, _ in entries], vectors, threshold).items():
                    score = float(vectors[i] @ vectors[j])
                    self.tables.merge(t, entries[j][0], entries[i][0], f"embedding:{type_}", score)
                    added.append((t, entries[j][0], entries[i][0], score))
        return added

    def unmerge(self, tenant: str, alias: str) -> bool:
        return self.tables.unmerge(tenant, alias)

    def stats(self) -> dict[str, Any]:
        return {"extractor": self.extractor.version, **self.tables.counts()}


def _with_own(own: object, derived: Sequence[str]) -> list[str]:
    """The caller's own ``entities`` (a name or a list of names) first, then the derived names they lack."""
    names = (
        [own]
        if isinstance(own, str)
        else [n for n in own if isinstance(n, str)]
        if isinstance(own, list | tuple)
        else []
    )
    return names + [n for n in derived if n not in names]
