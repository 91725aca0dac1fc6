"""The ingestion loop: incremental, idempotent, fault-isolated.

For every item of a source: hash the raw bytes; skip it when the hash and every pipeline version
(parser, chunker, embedding model) match the registry; otherwise parse → chunk → embed (batched across
documents) → write the new chunks and *then* delete the superseded ones. A failure at any stage is
recorded for that document alone (stage + reason) and the batch goes on; a document that was indexed
before keeps its previous chunks. Documents once listed under the source's root and now absent are
removed (deletion reconciliation).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from queue import Full, Queue
from typing import Any

from ragwright.chunk.parents import VERSION as PARENTS_VERSION
from ragwright.chunk.parents import attach_parents
from ragwright.errors import ConfigError, ParseError, RagwrightError, StoreBusyError
from ragwright.ingest.changes import children_intact, reconcile, update_access
from ragwright.ingest.chunking import Chunker, chunk_document, warm_up
from ragwright.ingest.dates import caller_dates
from ragwright.ingest.deadletter import dead_letter
from ragwright.ingest.parse_ahead import ParseAhead
from ragwright.ingest.records import failed_attempt, finished_records, indexed_record
from ragwright.ingest.report import IngestFailure, IngestReport
from ragwright.ingest.schedule import cheap_first
from ragwright.ingest.sparse import backfill_sparse, store_sparse
from ragwright.ingest.vectors import embed_chunks
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.identity import DEFAULT_TENANT, normalize_acl
from ragwright.model.ids import sha256_bytes
from ragwright.model.metadata import RESERVED_KEYS, normalize_metadata
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.models.embedders.base import Embedder, embedder_spec
from ragwright.models.sparse.base import SparseEncoder
from ragwright.options import IngestOptions, ParentOptions
from ragwright.parse import parse_bytes, parser_version_for
from ragwright.sources.base import Source, SourceItem, load_within
from ragwright.stores.base import Store

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
#: Called after each flush with the documents just written (tag indexing …); failures are logged.
IngestHook = Callable[[Sequence[tuple[DocumentRecord, Sequence[Chunk]]]], None]
#: Called on a document's chunks right after chunking (graph extraction …); returns them, perhaps with
#: more metadata. Runs on the producer thread; a failure is logged and the chunks go on unchanged.
ChunkAnnotator = Callable[[list[Chunk]], list[Chunk]]
RECORD_PARSER_VERSION = "record/1"


@dataclass
class _Done:
    """End of the producer's stream, with the error that stopped it, if any."""

    error: BaseException | None = None


def _put(queue: Queue[Any], entry: Any, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            queue.put(entry, timeout=0.1)
            return
        except Full:
            continue


@dataclass
class _Pending:
    record: DocumentRecord
    chunks: list[Chunk]
    existed: bool
    parents: list[Chunk] = dataclasses.field(default_factory=list)


class IngestPipeline:
    """Runs sources into a store. One instance per store/embedder/chunker wiring."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        chunker: Chunker,
        options: IngestOptions | None = None,
        parents: ParentOptions | None = None,
    ) -> None:
        self.store, self.embedder, self.chunker = store, embedder, chunker
        self.options = options or IngestOptions()
        if parents is not None and getattr(chunker, "propositions", None) is not None:
            raise ConfigError(
                "propositions and parent chunks cannot be combined: a proposition's parent is the chunk it came "
                "from; drop parents= (--parents) or ChunkingOptions.propositions"
            )
        self.parents = parents
        self.hooks: list[IngestHook] = []
        self.annotators: list[ChunkAnnotator] = []
        self.sparse_encoder: SparseEncoder | None = None  # when set, chunks also get SPLADE vectors
        self._warmed = False  # the chunking stage's models were loaded (see _warm_up)

    @property
    def chunker_version(self) -> str:
        """The chunking recorded in the registry: the chunker's fingerprint (version + options + window)
        and the parent settings, so changing any of them re-processes exactly the affected documents."""
        base = str(getattr(self.chunker, "fingerprint", self.chunker.version))
        if self.parents is None:
            return base
        return f"{base}+{PARENTS_VERSION}:{self.parents.chunk_size}/{self.parents.overlap}"

    def run(
        self,
        source: Source,
        *,
        tenant: str = DEFAULT_TENANT,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
        sync: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestReport:
        """Ingest *source*. Setting *cancel* (Ctrl-C) stops the run early (``report.interrupted``): the
        document being parsed is finished, the documents already written stay committed and the batch in
        hand is written too; nothing new is read and nothing is deleted for being unlisted."""
        started = time.perf_counter()
        cancelled = cancel.is_set if cancel is not None else (lambda: False)
        report = IngestReport()
        ledger = getattr(self.chunker, "ledger", None)  # chat calls of the chunking stages (enrichment …)
        llm_before = ledger.snapshot() if ledger is not None else None
        access = (tenant, normalize_acl(acl))
        # The caller's dates are kept (checked: a value that is no date is refused); other reserved keys not.
        user_meta = {
            **{k: v for k, v in normalize_metadata(metadata).items() if k not in RESERVED_KEYS},
            **caller_dates(metadata),
        }
        self.store.bind_embedder(self.embedder.name, self.embedder.dimension, spec=embedder_spec(self.embedder))
        bind = getattr(source, "bind_registry", None)  # URL sources ask conditionally for known pages
        if callable(bind):
            bind(self.store.get_record, self.store.staged)
        bind_limit = getattr(source, "bind_limit", None)  # … and download no body over the size limit
        if callable(bind_limit):
            bind_limit(self.options.parse.max_file_bytes)
        listed: set[str] = set()
        run_id = uuid.uuid4().hex  # the staging leases of this run (see stores.base.Staging)
        # Reading, parsing and chunking run on a producer thread while this thread embeds and writes:
        # the embedder releases the GIL, so parsing the next documents overlaps with embedding these.
        # The queue is bounded, so a slow embedder holds the producer back (backpressure).
        queue: Queue[_Pending | _Done] = Queue(maxsize=self.options.queue_size)
        stop = threading.Event()
        ahead = ParseAhead(self.store, self.options.parse)  # the next files parsed while cores allow

        def produce() -> None:
            error: BaseException | None = None
            try:
                total = len(source)
                for done, item in enumerate(ahead.wrap(cheap_first(source.items())), start=1):
                    if stop.is_set() or cancelled():
                        return
                    listed.add(item.document_id)
                    for entry in self._prepare(item, source.root, access, user_meta, report, run_id, ahead):
                        _put(queue, entry, stop)
                    if progress is not None:
                        progress(done, total)
            except BaseException as exc:  # re-raised on the calling thread
                error = exc
            finally:
                _put(queue, _Done(error), stop)

        producer = threading.Thread(target=produce, name="ragwright-ingest", daemon=True)
        producer.start()
        pending: list[_Pending] = []
        busy = False
        try:
            try:
                while True:
                    entry = queue.get()
                    if isinstance(entry, _Done):
                        if entry.error is not None:
                            raise entry.error
                        break
                    if cancelled():
                        break  # what waits in the queue is dropped; what is pending is written below
                    pending.append(entry)
                    # Embed what is here as soon as nothing more is ready: waiting for a full batch while
                    # the producer parses (OCR, a long PDF) would leave the embedder idle. When the
                    # producer runs ahead, what queued during the last flush makes the next batch.
                    if sum(len(p.chunks) for p in pending) >= self.options.batch_size * 4 or queue.empty():
                        self._flush(pending, report)
                        pending = []
                self._flush(pending, report)
            finally:
                stop.set()
                producer.join()
            if cancelled():
                report.interrupted = True
                return report
            for path, reason in getattr(source, "skipped", ()):  # what the source listed but refused to offer
                report.skipped.append(IngestFailure(str(path), "list", str(reason)))
            if source.root is not None and (self.options.delete_missing if sync is None else sync):
                with report.timed("delete"):
                    report.deleted += reconcile(self.store, source.root, listed)
            backfill_sparse(self.store, self.sparse_encoder)  # chunks written before the encoder was configured
        except StoreBusyError:
            busy = True  # another process holds the write lock: the run stops, its leases simply expire
            raise
        finally:
            # Every record this run wrote refers to what it needs: its leases go, and only what no record
            # refers to (and no other run in flight has leased) is pruned.
            if not busy:
                self._release(run_id)
            if ledger is not None and llm_before is not None:
                report.add_llm(llm_before, ledger.snapshot())
            report.seconds = time.perf_counter() - started
        return report

    # -- per document --------------------------------------------------------------------------------
    def _prepare(
        self,
        item: SourceItem,
        root: str | None,
        access: tuple[str, tuple[str, ...]],
        user_meta: dict[str, Any],
        report: IngestReport,
        run_id: str,
        ahead: ParseAhead | None = None,
    ) -> list[_Pending]:
        doc_id = item.document_id
        stage = "read"
        previous = self.store.get_record(doc_id)
        attempt = failed_attempt(item, access, root, user_meta)  # what a failure records
        try:
            with report.timed("read"):
                loaded = load_within(item, self.options.parse.max_file_bytes)  # a known size: refused unread
                content_hash = item.fingerprint or (
                    sha256_bytes(bytes(loaded)) if isinstance(loaded, bytes | bytearray) else ""
                )
                parser_version = (
                    RECORD_PARSER_VERSION
                    if isinstance(loaded, Document)
                    else parser_version_for(bytes(loaded), item.name_hint)
                )
            record = indexed_record(
                item,
                content_hash,
                (parser_version, self.chunker_version, self.embedder.name),
                access,
                root,
                user_meta,
                previous,
            )
            if (
                previous is not None
                and previous.status is DocumentStatus.INDEXED
                and previous.pipeline_key() == record.pipeline_key()
                and previous.metadata == record.metadata
                and children_intact(self.store, previous)
            ):
                if (previous.tenant, previous.acl) == access:
                    report.unchanged += 1
                else:  # only who may see it changed (new --tenant/--groups): no parse, no embedding
                    update_access(self.store, previous, access)
                    report.access_updated += 1
                return []
            stage = "parse"
            self._warm_up()
            with report.timed("parse"):
                document = (
                    loaded
                    if isinstance(loaded, Document)
                    else self._parse(item, bytes(loaded), record, report, run_id, ahead)
                )
                if isinstance(loaded, Document) and self.options.stage_raw:  # a reindex re-reads no source
                    self.store.lease_staging(run_id, record.content_hash)
                    self.store.cache_parsed(record.content_hash, record.parser_version, loaded)
            stage = "chunk"
            with report.timed("chunk"):
                chunks = self._annotate(chunk_document(self.chunker, document, item, access, user_meta))
                children = [
                    (child, self._annotate(chunk_document(self.chunker, child, item, access, user_meta)))
                    for child in document.children
                ]
            if not chunks and not any(c for _, c in children):
                raise ParseError("no text could be extracted")
        except StoreBusyError:
            raise  # the store, not the document: the run stops (busy, retry) and nothing is dead-lettered
        except (RagwrightError, OSError, ValueError, UnicodeError) as exc:
            dead_letter(self.store, attempt, stage, exc, previous, report)
            return []
        records = finished_records(record, item, document, chunks, children)
        pending = []
        for n, (done, done_chunks) in enumerate(records):
            before = previous if n == 0 else self.store.get_record(done.document_id)
            if n and before is not None:  # an attachment keeps the time it was first seen
                done = dataclasses.replace(done, created_at=before.created_at)
            pending.append(self._pending(done, done_chunks, _existed(before)))
        child_ids = [done.document_id for done, _ in records[1:]]
        stale = set(previous.children) - set(child_ids) if previous else set()
        for gone in sorted(stale):
            self.store.remove_document(gone)
            report.deleted += 1
        return pending

    def _warm_up(self) -> None:
        """The first time a document is parsed, load the chunking stage's models on a side thread: the
        loads then overlap that parse (in the worker process) instead of delaying the first chunks. A run
        that parses nothing (every file unchanged) loads nothing."""
        if not self._warmed:
            self._warmed = True
            count = getattr(self.embedder, "count_tokens", None)
            threading.Thread(target=warm_up, args=(count,), name="ragwright-warm-up", daemon=True).start()

    def _annotate(self, chunks: list[Chunk]) -> list[Chunk]:
        for annotate in self.annotators:
            try:
                chunks = annotate(chunks)
            except Exception as exc:  # an optional stage never fails ingestion
                log.warning("chunk_annotator_failed: %s: %s", getattr(annotate, "__qualname__", "annotator"), exc)
        return chunks

    def _release(self, run_id: str) -> None:
        try:
            self.store.prune_staging(release=run_id)
        except RagwrightError as exc:  # staging is a cache: a failed prune never fails the run
            log.warning("prune_staging_failed: %s", exc)

    def _pending(self, record: DocumentRecord, chunks: list[Chunk], existed: bool) -> _Pending:
        splitter = getattr(self.chunker, "propositions", None)
        if splitter is not None:  # propositions are searched, their source chunks stored as parents
            propositions, sources = splitter.split(record.title, chunks)
            return _Pending(dataclasses.replace(record, chunk_count=len(propositions)), propositions, existed, sources)
        if self.parents is None:
            return _Pending(record, chunks, existed)
        linked, parents = attach_parents(
            record.document_id, chunks, chunk_size=self.parents.chunk_size, overlap=self.parents.overlap
        )
        return _Pending(record, linked, existed, parents)

    def _parse(
        self,
        item: SourceItem,
        data: bytes,
        record: DocumentRecord,
        report: IngestReport,
        run_id: str,
        ahead: ParseAhead | None = None,
    ) -> Document:
        """Parse, reusing the parsed document cached for this content hash and parser version. The hash is
        leased first, so a concurrent run's pruning never removes what this run stages."""
        self.store.lease_staging(run_id, record.content_hash)
        if self.options.stage_raw:
            self.store.stage(record.content_hash, data)
        cached = self.store.cached_parsed(record.content_hash, record.parser_version)
        if cached is not None and cached.id == record.document_id:
            report.parse_cache_hits += 1
            return cached
        document = (ahead.take(record.document_id, record.content_hash) if ahead is not None else None) or parse_bytes(
            record.document_id, data, name_hint=item.name_hint, source=item.uri, options=self.options.parse
        )
        self.store.cache_parsed(record.content_hash, record.parser_version, document)
        for doc in (document, *document.children):
            report.ocr_pages += int(doc.metadata.get("ocr_pages") or 0)
            report.hidden_elements += int(doc.metadata.get("hidden_elements") or 0)
        return document

    # -- batched embedding + indexing ------------------------------------------------------------------
    def _flush(self, pending: list[_Pending], report: IngestReport) -> None:
        if not pending:
            return
        texts = [c.text_for_embedding for p in pending for c in p.chunks]
        try:
            docs = [(p.record.document_id, p.chunks, p.existed) for p in pending]
            late = getattr(self.chunker, "late", None)  # late chunking: vectors pooled over each document
            vectors, reused = embed_chunks(self.store, self.embedder, docs, texts, report, late)
        except Exception:  # isolate the failing document(s) by embedding one at a time
            if len(pending) == 1:
                p = pending[0]
                exc = _last_error(lambda: self.embedder.embed_documents(texts))
                dead_letter(self.store, p.record, "embed", exc, self.store.get_record(p.record.document_id), report)
                return
            for p in pending:
                self._flush([p], report)
            return
        offset = 0
        written: list[tuple[DocumentRecord, Sequence[Chunk]]] = []
        for p in pending:
            n = len(p.chunks)
            try:
                with report.timed("index"):
                    self.store.replace_document(p.record, p.chunks, vectors[offset : offset + n], p.parents)
            except StoreBusyError:
                raise
            except RagwrightError as exc:
                dead_letter(self.store, p.record, "index", exc, self.store.get_record(p.record.document_id), report)
            else:
                report.chunks += n
                fresh = [c for k, c in enumerate(p.chunks, start=offset) if k not in reused]
                report.embeddings_reused += n - len(fresh)
                report.tokens_embedded += sum(self.embedder.count_tokens(c.text_for_embedding) for c in fresh)
                if p.existed:
                    report.updated += 1
                else:
                    report.added += 1
                written.append((p.record, p.chunks))
            offset += n
        store_sparse(self.store, self.sparse_encoder, [c for _, chunks in written for c in chunks])
        for hook in self.hooks if written else ():
            try:
                hook(written)
            except Exception as exc:  # an optional stage never fails ingestion
                log.warning("ingest_hook_failed: %s: %s", getattr(hook, "__qualname__", type(hook).__name__), exc)


def _existed(previous: DocumentRecord | None) -> bool:
    return previous is not None and previous.status is not DocumentStatus.DELETED and previous.chunk_count > 0


def _last_error(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as exc:
        return exc
    return RuntimeError("embedding failed")
