"""The facade: a store, an embedder and options wired together, nothing global.

>>> rag = Rag.open(".ragwright/store.db")          # doctest: +SKIP
>>> rag.ingest(["docs/"])                            # doctest: +SKIP
>>> rag.ask("What is the refund policy?").answer     # doctest: +SKIP

Every method has an async twin (``aingest``, ``asearch``, ``aask``); the sync ones run the same
coroutine. Security filters come from the caller's :class:`Identity` (the ``identity`` given to the
call, else the one the ``Rag`` was built with) and are applied inside every search.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ragwright._sync import run_sync, to_thread
from ragwright.chunk import make_chunker
from ragwright.errors import ConfigError
from ragwright.generate import ExtractiveAnswerer
from ragwright.ingest import IngestPipeline, IngestReport
from ragwright.ingest.pipeline import ProgressCallback
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.model.results import RagResponse, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.options import ChunkingOptions, IngestOptions, ParentOptions, RagOptions, RetrievalOptions
from ragwright.postprocess.rerank import Reranker
from ragwright.retrieve import Retriever
from ragwright.sources import Source, open_source
from ragwright.stores.base import Store


class Rag:
    """Ingest, search and ask over one store."""

    def __init__(
        self,
        store: Store | None = None,
        embedder: Embedder | None = None,
        *,
        retrieval_options: RetrievalOptions | None = None,
        rag_options: RagOptions | None = None,
        chunking: ChunkingOptions | None = None,
        ingest_options: IngestOptions | None = None,
        identity: Identity | None = None,
        reranker: Reranker | None = None,
        parents: ParentOptions | None = None,
    ) -> None:
        if store is None:
            from ragwright.stores.memory import MemoryStore

            store = MemoryStore()
        if embedder is None:
            from ragwright.models.embedders import default_embedder

            embedder = default_embedder()
        self.store, self.embedder = store, embedder
        # Hybrid (dense + BM25, RRF) is the default here: measured better than dense alone on every
        # BEIR collection we have (benchmarks/RESULTS.md). Seed 000's RetrievalOptions() stays pure dense.
        self.retrieval_options = retrieval_options or RetrievalOptions(use_hybrid_search=True)
        self.rag_options = rag_options or RagOptions(use_hybrid_search=True)
        self.identity = identity or Identity()
        self.chunker = make_chunker(embedder, chunking)
        self.ingestion = IngestPipeline(store, embedder, self.chunker, ingest_options, parents)
        self.retriever = Retriever(store, embedder, reranker)
        self.answerer = ExtractiveAnswerer(embedder)
        store.bind_embedder(embedder.name, embedder.dimension)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        collection: str | None = None,
        embedder: Embedder | None = None,
        keyword_analyzer: str = "default",
        **kwargs: Any,
    ) -> Rag:
        """Open (or create) the SQLite store at *path*."""
        from ragwright.stores.sqlite import SqliteStore

        return cls(SqliteStore(path, collection=collection, keyword_analyzer=keyword_analyzer), embedder, **kwargs)

    # -- ingestion -------------------------------------------------------------------------------------
    async def aingest(
        self,
        sources: Source | str | Path | Iterable[Source | str | Path],
        *,
        tenant: str | None = None,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
        sync: bool | None = None,
    ) -> IngestReport:
        """Ingest files, folders, JSONL corpora or :class:`Source` objects; returns the run's report.

        Unchanged documents are skipped without parsing or embedding. ``sync=True`` also removes the
        documents once ingested from a listed folder/corpus that are no longer in it.
        """
        resolved = _resolve_sources(sources)
        tenant = tenant if tenant is not None else self.identity.tenant
        total = IngestReport()
        for source in resolved:
            report = await to_thread(
                self.ingestion.run, source, tenant=tenant, acl=acl, metadata=metadata, progress=progress, sync=sync
            )
            _accumulate(total, report)
        return total

    def ingest(self, sources: Source | str | Path | Iterable[Source | str | Path], **kwargs: Any) -> IngestReport:
        return run_sync(self.aingest(sources, **kwargs))

    # -- retrieval -------------------------------------------------------------------------------------
    async def asearch(
        self, query: str, options: RetrievalOptions | None = None, *, identity: Identity | None = None, **overrides: Any
    ) -> list[SearchResult]:
        """Retrieve the best chunks for *query*; per-call *overrides* are validated like options."""
        opts = (
            (options or self.retrieval_options).merged(**overrides)
            if overrides
            else (options or self.retrieval_options)
        )
        return await self.retriever.retrieve(query, opts, identity or self.identity)

    def search(
        self, query: str, options: RetrievalOptions | None = None, *, identity: Identity | None = None, **overrides: Any
    ) -> list[SearchResult]:
        return run_sync(self.asearch(query, options, identity=identity, **overrides))

    aretrieve = asearch
    retrieve = search

    # -- answers ---------------------------------------------------------------------------------------
    async def aask(
        self, question: str, options: RagOptions | None = None, *, identity: Identity | None = None, **overrides: Any
    ) -> RagResponse:
        """Answer *question* from the indexed documents with ``[Source N]`` citations, or decline."""
        opts = (options or self.rag_options).merged(**overrides) if overrides else (options or self.rag_options)
        results = await self.retriever.retrieve(question, opts.to_retrieval_options(), identity or self.identity)
        return await to_thread(self.answerer.answer, question, results, opts)

    def ask(
        self, question: str, options: RagOptions | None = None, *, identity: Identity | None = None, **overrides: Any
    ) -> RagResponse:
        return run_sync(self.aask(question, options, identity=identity, **overrides))

    # -- administration ----------------------------------------------------------------------------------
    def remove(self, document_id: str) -> int:
        """Remove a document, its chunks and its child documents (attachments); returns how many chunks went.

        Unknown id → ConfigError.
        """
        record = self._record(document_id)
        removed = self.store.remove_document(record.document_id)
        for child in record.metadata.get("_children", []):  # attachments go with their parent
            removed += self.store.remove_document(child)
        return removed

    def update_acl(self, document_id: str, *, groups: Sequence[str] | None, tenant: str | None = None) -> int:
        """Change who may see a document (and its attachments) without re-embedding anything.

        ``groups=None`` makes it public within its tenant; ``[]`` makes it visible to nobody.
        Returns the number of chunks updated.
        """
        from ragwright.model.identity import normalize_acl

        record = self._record(document_id)
        acl = normalize_acl(groups)
        new_tenant = tenant if tenant is not None else record.tenant
        updated = 0
        for doc in (record.document_id, *record.metadata.get("_children", [])):
            updated += self.store.update_access(doc, new_tenant, acl)
        return updated

    def documents(
        self, *, status: DocumentStatus | str | None = None, embedding_model: str | None = None
    ) -> list[DocumentRecord]:
        """Registry query: e.g. every failed document, or every document embedded with a given model."""
        wanted = DocumentStatus(status) if isinstance(status, str) else status
        return [
            r
            for r in self.store.list_records(wanted)
            if embedding_model is None or r.embedding_model == embedding_model
        ]

    def retry_failed(self, **kwargs: Any) -> IngestReport:
        """Ingest again every failed document whose source is a local file that still exists."""
        from ragwright.sources import FileListSource

        paths = []
        for record in self.documents(status=DocumentStatus.FAILED):
            if record.source.startswith("file://"):
                path = Path(unquote(record.source[len("file://") :]))
                if path.is_file():
                    paths.append(path)
        if not paths:
            return IngestReport()
        return self.ingest(FileListSource(paths), **kwargs)

    def check(self) -> list[str]:
        """Integrity problems of the store (empty when consistent): orphan chunks, indexed documents
        whose chunks are missing, a keyword index out of step with the chunks."""
        return self.store.check_integrity()

    def _record(self, document_id: str) -> DocumentRecord:
        record = self.store.get_record(document_id)
        if record is None:
            candidate = Path(document_id).expanduser()
            if candidate.exists():
                record = self.store.get_record(candidate.resolve().as_posix())
        if record is None:
            raise ConfigError(f"no document with id {document_id!r} in this store (see `ragwright status`)")
        return record

    def status(self) -> dict[str, Any]:
        """Registry counts and the failed documents with their stage and reason."""
        records = self.store.list_records()
        counts = {s.value: sum(1 for r in records if r.status is s) for s in DocumentStatus}
        return {
            "documents": counts["indexed"],
            **counts,
            "chunks": self.store.count_chunks(),
            "embedding_model": self.embedder.name,
            "failed_documents": [
                {
                    "document": r.document_id,
                    "stage": r.stage,
                    "reason": r.reason,
                    "error_type": r.metadata.get("_error_type"),
                    "attempts": r.metadata.get("_attempts", 1),
                }
                for r in records
                if r.status is DocumentStatus.FAILED
            ],
        }

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Rag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolve_sources(sources: Source | str | Path | Iterable[Source | str | Path]) -> list[Source]:
    if isinstance(sources, str | Path):
        return [open_source(str(sources))]
    if isinstance(sources, Source):
        return [sources]
    out: list[Source] = []
    for s in sources:
        out.append(open_source(str(s)) if isinstance(s, str | Path) else s)
    if not out:
        raise ConfigError("nothing to ingest: give at least one file, folder or source")
    return out


def _accumulate(total: IngestReport, report: IngestReport) -> None:
    total.added += report.added
    total.updated += report.updated
    total.unchanged += report.unchanged
    total.deleted += report.deleted
    total.failed.extend(report.failed)
    total.chunks += report.chunks
    total.tokens_embedded += report.tokens_embedded
    total.parse_cache_hits += report.parse_cache_hits
    total.seconds += report.seconds
    for stage, secs in report.stage_seconds.items():
        total.stage_seconds[stage] += secs
