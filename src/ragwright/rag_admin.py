"""The administration half of :class:`~ragwright.rag.Rag`: registry queries, removal, ACL updates,
retries, integrity checks, status and blue/green reindexing."""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from ragwright._sync import run_sync
from ragwright.errors import ConfigError
from ragwright.ingest import EvalGate, IngestPipeline, IngestReport, ReindexReport
from ragwright.ingest.pipeline import ProgressCallback
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel
from ragwright.options import ChunkingOptions, RetrievalOptions
from ragwright.stores.base import Collections, KeywordSearch, Store

if TYPE_CHECKING:
    from ragwright.retrieve import Retriever

#: Documents whose chunks :meth:`RagAdmin.metadata_keys` reads when the registry does not list their keys.
KEY_SAMPLE = 50


class IngestArgs(TypedDict, total=False):
    """The keywords of ``Rag.ingest`` / ``Rag.aingest`` besides the sources, typed."""

    tenant: str | None
    acl: Sequence[str] | None
    metadata: Mapping[str, Any] | None
    progress: ProgressCallback | None
    sync: bool | None
    cancel: threading.Event | None


class RagAdmin:
    """Mixed into :class:`~ragwright.rag.Rag`; uses its store, embedder and ``ingest``."""

    store: Store
    embedder: Embedder
    chunker: Any
    llm: ChatModel | None
    identity: Identity
    ingestion: IngestPipeline
    retriever: Retriever
    _retired: dict[str, Store]

    if TYPE_CHECKING:

        def ingest(self, sources: Any, **kwargs: Unpack[IngestArgs]) -> IngestReport: ...

        def _adopt(self, store: Store, embedder: Embedder, chunker: Any, *, retired: str | None) -> None: ...

    def remove(self, document_id: str) -> int:
        """Remove a document, its chunks and its child documents (attachments); returns how many chunks went.

        Unknown id → ConfigError.
        """
        record = self._record(document_id)
        removed = self.store.remove_document(record.document_id)
        for child in record.children:  # attachments go with their parent
            removed += self.store.remove_document(child)
        self._graph_follow([record.document_id, *record.children])
        return removed

    def _graph_follow(self, document_ids: list[str]) -> None:
        """The entity graph (when configured) follows a removal or an access change at once."""
        graph = getattr(self, "graph", None)
        if graph is not None:
            graph.index.documents_changed(document_ids)
        hierarchy = getattr(self, "hierarchy", None)
        if hierarchy is not None:
            hierarchy.index.documents_changed(document_ids)

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
        for doc in (record.document_id, *record.children):
            updated += self.store.update_access(doc, new_tenant, acl)
        self._graph_follow([record.document_id, *record.children])
        return updated

    def documents(
        self, *, status: DocumentStatus | str | None = None, embedding_model: str | None = None
    ) -> list[DocumentRecord]:
        """Registry query: e.g. every failed document, or every document embedded with a given model."""
        wanted = DocumentStatus.parse(status)
        return [
            r
            for r in self.store.list_records(wanted)
            if embedding_model is None or r.embedding_model == embedding_model
        ]

    def metadata_keys(self) -> list[str]:
        """Every metadata key the indexed chunks carry (what a metadata filter can match on).

        Ingestion records each document's keys in the registry (``metadata_keys``); for documents ingested
        before it did, the chunks of up to :data:`KEY_SAMPLE` of them are read instead."""
        keys: set[str] = set()
        unrecorded: list[str] = []
        for record in self.store.list_records(DocumentStatus.INDEXED):
            if record.metadata_keys is not None:
                keys.update(record.metadata_keys)
            else:
                unrecorded.append(record.document_id)
        for document_id in unrecorded[:KEY_SAMPLE]:
            for chunk in self.store.document_chunks(document_id):
                keys.update(chunk.metadata)
        return sorted(keys)

    def unknown_filter_keys(self, metadata_filter: Any) -> tuple[list[str], list[str]]:
        """``(keys of the filter no indexed chunk has, the keys that exist)``; both empty when the filter
        reads only existing keys (or the store holds no document)."""
        from ragwright.model.filters import as_filter, filter_keys

        wanted = filter_keys(as_filter(metadata_filter))
        if not wanted:
            return [], []
        known = self.metadata_keys()
        unknown = sorted(wanted - set(known))
        return (unknown, known) if unknown and known else ([], [])

    def retry_failed(self, *, progress: ProgressCallback | None = None) -> IngestReport:
        """Ingest again every failed document whose source is a local file that still exists.

        Each keeps its id, tenant, ACL, metadata and folder: a dead letter carries the access it was
        ingested with, and a retry never moves it to another tenant or widens who may see it.
        """
        from ragwright.ingest.retry import retry_groups

        report = IngestReport()
        for group in retry_groups(self.documents(status=DocumentStatus.FAILED)):
            # sync=False: the retry lists only the failed documents of a folder, never the whole folder
            report.add(
                self.ingest(
                    group.source,
                    tenant=group.tenant,
                    acl=list(group.acl),
                    metadata=group.metadata or None,
                    progress=progress,
                    sync=False,
                )
            )
        return report

    def check(self) -> list[str]:
        """Integrity problems of the store (empty when consistent): orphan chunks, indexed documents
        whose chunks are missing, a keyword index out of step with the chunks."""
        return self.store.check_integrity()

    def reindex(
        self,
        embedder: Embedder | None = None,
        chunking: ChunkingOptions | None = None,
        evaluate: EvalGate | None = None,
        *,
        drop_old: bool = False,
    ) -> ReindexReport:
        """Blue/green: rebuild every document beside the live collection with a new embedder and/or
        chunking (from staged bytes: no source re-read, no OCR), optionally gate it on an evaluation,
        and switch only on success. Queries keep working throughout; a rejected reindex says why in
        ``report.reason`` and leaves the live collection as it was. See :mod:`ragwright.ingest.reindex`."""
        from ragwright.chunk import make_chunker
        from ragwright.ingest.reindex import reindex

        new_embedder = embedder or self.embedder
        chunker = (
            make_chunker(new_embedder, chunking or getattr(self.chunker, "options", None), llm=self.llm)
            if (embedder or chunking)
            else self.chunker
        )
        ingestion = self.ingestion
        outcome = reindex(
            self.store,
            lambda target: IngestPipeline(target, new_embedder, chunker, ingestion.options, ingestion.parents),
            evaluate=evaluate,
            searcher_for=lambda target: _RetrieverSearcher(self.retriever, self.identity, target, new_embedder),
            live_searcher=_RetrieverSearcher(self.retriever, self.identity),
        )
        report = outcome.report
        if outcome.store is not None:
            self._adopt(outcome.store, new_embedder, chunker, retired=report.previous)
            if drop_old and report.previous is not None:
                report.dropped = self.drop_collection(report.previous)
        return report

    def collections(self) -> list[dict[str, Any]]:
        """The store's physical collections (name, live, model, sizes); none for a store without
        collections (:class:`~ragwright.stores.base.Collections`)."""
        return [c.to_dict() for c in self.store.collections()] if isinstance(self.store, Collections) else []

    def drop_collection(self, name: str) -> list[str]:
        """Drop a collection that is no longer live (e.g. the one a reindex replaced)."""
        if not isinstance(self.store, Collections):
            raise ConfigError(f"{type(self.store).__name__} has no collections to drop")
        retired = self._retired.pop(name, None)
        if retired is not None:
            retired.close()
        self.store.drop_collection(name)
        return [name]

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
            # BM25 is derived state: a new analyzer rebuilds the keyword index from the stored chunks
            # when the store opens, and never re-embeds anything.
            "keyword_analyzer": self.store.keyword_analyzer if isinstance(self.store, KeywordSearch) else None,
            "failed_documents": [
                {
                    "document": r.document_id,
                    "stage": r.stage,
                    "reason": r.reason,
                    "error_type": r.error_type,
                    "attempts": max(r.attempts, 1),
                    "tenant": r.tenant,
                    "acl": list(r.acl),
                }
                for r in records
                if r.status is DocumentStatus.FAILED
            ],
        }


class _RetrieverSearcher:
    """A searcher over one retriever (the evaluation gate's view of a Rag), optionally over another
    collection and embedder than the Rag's."""

    def __init__(
        self, retriever: Retriever, identity: Identity, store: Store | None = None, embedder: Embedder | None = None
    ) -> None:
        if store is not None:
            retriever = copy.copy(retriever)
            retriever.store, retriever.embedder = store, embedder or retriever.embedder
        self.retriever, self.identity = retriever, identity

    def search(self, query: str, options: RetrievalOptions, *, identity: Identity | None = None) -> Any:
        return run_sync(self.retriever.retrieve(query, options, identity or self.identity))
