"""The embedded default store: one SQLite file in WAL mode.

Holds documents (the registry), chunks, typed metadata (JSON) and vectors (float32 BLOBs). Reopening
the file restores everything without re-ingestion. Metadata and security filters are compiled to SQL
and applied before top-k; scoring runs on an in-memory matrix of the vectors, reloaded when the file
changes (also when another process wrote it: ``PRAGMA data_version``); past the ANN threshold the
float32 vectors stay in the file and only the HNSW graph is in memory (see ``dense.py``).

``collection`` is a stale-data guard: when a name is given and the file holds a
different one, every persisted row is wiped before use (logged as ``collection_mismatch_wiped``).

Several processes may use one file. Readers never wait for a writer (WAL: a read sees the last
committed state; opening a file whose schema is in place, and binding the embedder it is already
bound to, write nothing). A write waits up to *busy_timeout* seconds for another process's write
transaction, then raises :class:`~ragwright.errors.StoreBusyError` ("busy, retry"); only a file that
is not an SQLite database, or is damaged, is called unreadable.

The store is composed of parts that share one :class:`~ragwright.stores.sqlite.handle.SqliteHandle`
(the connection, lock, transactions, metadata, versions and the collection read now): the chunk table
and registry (``chunks.py``), the row sets every search arm filters through (``rows.py``), dense,
keyword and sparse search (``dense.py``, ``keyword_search.py``, ``sparse.py``), the collections and
their alias (``collections.py``) and staging (:mod:`ragwright.stores.sql_staging`). This class opens
the file, wires the parts and delegates its public methods to them.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragwright.errors import ConfigError, StoreError
from ragwright.index.analyzers import DEFAULT_ANALYZER
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import CollectionInfo, Hit, ScoreScale
from ragwright.stores.common import STAGING_LEASE_S, check_vectors
from ragwright.stores.sql_integrity import integrity_problems
from ragwright.stores.sql_staging import SqlStaging
from ragwright.stores.sqlite.chunks import SqliteChunks
from ragwright.stores.sqlite.collections import SqliteCollections, live_hash_sql
from ragwright.stores.sqlite.dense import SqliteDense
from ragwright.stores.sqlite.dialect import SQLITE_DIALECT, SQLITE_REGISTRY
from ragwright.stores.sqlite.keyword_search import SqliteKeyword
from ragwright.stores.sqlite.opening import connect, init_schema, unreadable
from ragwright.stores.sqlite.rows import SqliteRows
from ragwright.stores.sqlite.sparse import SqliteSparse
from ragwright.stores.sqlite.tags import SqliteTagTable
from ragwright.stores.sqlite.transaction import BUSY_TIMEOUT_S

if TYPE_CHECKING:
    import threading

    import numpy as np
    import numpy.typing as npt

    from ragwright.index.ann import AnnParams, DenseIndex
    from ragwright.index.bm25 import KeywordQuery
    from ragwright.models.sparse.base import SparseVector

__all__ = ["SQLITE_DIALECT", "SQLITE_REGISTRY", "SqliteStore"]

log = logging.getLogger(__name__)


class SqliteStore:
    """A ragwright store in one SQLite file. Thread-safe (one connection behind a lock)."""

    def __init__(
        self,
        path: str | Path,
        *,
        collection: str | None = None,
        keyword_analyzer: str = DEFAULT_ANALYZER,
        ann: AnnParams | None = None,
        busy_timeout: float = BUSY_TIMEOUT_S,
        pinned: str | None = None,
    ) -> None:
        """*ann*: when the dense arm switches from exact search to the HNSW graph (default: 20k vectors).
        *busy_timeout*: seconds a write waits for another process's write to finish before it raises
        :class:`~ragwright.errors.StoreBusyError` (reads never wait). *pinned*: read and write that
        physical collection, never following the ``live`` alias (:meth:`open_collection`)."""
        from ragwright.index import get_analyzer

        if not busy_timeout >= 0:
            raise ConfigError.invalid("busy_timeout", busy_timeout, "a number of seconds >= 0")
        self.path = Path(path)
        analyzer = get_analyzer(keyword_analyzer)  # refuses an unknown name before touching the file
        h = self._h = connect(self.path, float(busy_timeout))
        chunks = self._chunks = SqliteChunks(h)
        rows = self._rows = SqliteRows(h)
        self._dense = SqliteDense(h, rows, ann)
        self._keyword = SqliteKeyword(h, rows, chunks, analyzer)
        self._sparse = SqliteSparse(h, rows, chunks)
        # Staging is shared by every collection of the file; so are the leases.
        live = lambda: live_hash_sql(h.conn)
        staging = self._staging = SqlStaging(
            SQLITE_DIALECT, write=h.writing, read=h.reading, live_hashes=live, lease_s=STAGING_LEASE_S
        )
        self._collections = SqliteCollections(h, prune=lambda: staging.prune(None))
        #: Where opening an older store file backed it up before upgrading it (``None``: no upgrade).
        self.upgrade_backup: Path | None = None
        try:
            self.upgrade_backup = init_schema(h, self._collections, collection)
        except sqlite3.DatabaseError as exc:
            h.conn.close()
            raise unreadable(self.path, exc, h.busy_timeout) from exc
        if pinned is not None:
            try:
                with h.lock:
                    self._collections.pin(pinned)
            except StoreError:
                h.conn.close()
                raise
        try:
            self.drop_abandoned_builds()  # a reindex killed mid-build leaves no half-built collection
        except (StoreError, sqlite3.Error) as exc:  # never a reason not to open the store
            log.warning("abandoned_build_check_failed: %s: %s", self.path, exc)

    # -- what code outside the parts still reads (tests, benchmarks) ----------------------------------------
    @property
    def _conn(self) -> sqlite3.Connection:
        return self._h.conn

    @property
    def _lock(self) -> threading.RLock:
        return self._h.lock

    def _dense_index(self) -> DenseIndex:
        return self._dense.index()

    # -- the file ---------------------------------------------------------------------------------------
    def index_version(self) -> int:
        """Bumped by every chunk write, delete and ACL update (by any process); cache keys include it."""
        with self._h.lock:
            value = self._h.meta("index_version")
        return int(value) if value else 0

    def tag_table(self) -> SqliteTagTable:
        """The tag vectors of tag-based retrieval (tables of :mod:`ragwright.stores.sqlite.tags`)."""
        h = self._h
        return SqliteTagTable(h.conn, h.transaction, h.lock, lambda: h.tables.documents)

    @property
    def collection(self) -> str | None:
        with self._h.lock:
            return self._h.meta("collection")

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        return self._h.embedding_model()  # follows the alias first

    @property
    def embedder_spec(self) -> str | None:
        return self._collections.embedder_spec()

    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None:
        self._collections.bind_embedder(name, dimension, spec)

    @property
    def score_scale(self) -> ScoreScale:
        return ScoreScale.SIMILARITY

    def check_integrity(self) -> list[str]:
        """Problems found (empty when consistent): orphan chunks, indexed documents whose chunk count is
        wrong, vectors of the wrong size, a keyword index out of step with the chunks (sql_integrity.py)."""
        h = self._h
        with h.read_snapshot():  # one committed state: a concurrent writer never shows as a problem
            h.version()
            bound = self.embedding_model
            return integrity_problems(
                h.conn.execute,
                SQLITE_DIALECT,
                chunks=h.tables.chunks,
                documents=h.tables.documents,
                dimension=None if bound is None else bound[1],
                keyword_index=self._keyword.index,
            )

    def close(self) -> None:
        with self._h.lock:
            self._dense.save()  # the ANN graph's snapshot, when it changed since it was last written
            try:
                self._keyword.save_snapshot()  # the BM25 index's, likewise (large stores only)
            except (sqlite3.Error, StoreError) as exc:  # never a reason not to close
                log.warning("keyword_snapshot_failed: %s: %s", self.path, exc)
            self._h.conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- chunk writes: the chunk table's, then the keyword index follows (chunks.py) ---------------------
    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32],
        parents: Sequence[Chunk] = (),
    ) -> None:
        bound = self.embedding_model
        arr = check_vectors(len(chunks), vectors, bound[1] if bound else None)
        with self._h.lock:
            in_sync = self._keyword.in_sync()
            self._keyword.apply(in_sync, self._chunks.replace(record, chunks, arr, parents))

    def remove_document(self, document_id: str) -> int:
        with self._h.lock:
            in_sync = self._keyword.in_sync()
            write = self._chunks.remove(document_id)
            self._keyword.apply(in_sync, write)
        return len(write.removed)

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        """Re-sync a document's tenant and ACL onto its chunks and record; no vector is touched."""
        with self._h.lock:
            in_sync = self._keyword.in_sync()
            count, write = self._chunks.update_access(document_id, tenant, acl)
            self._keyword.apply(in_sync, write)
        return count

    # -- the registry and chunk lookups (chunks.py) ----------------------------------------------------
    def record(self, record: DocumentRecord) -> None:
        self._chunks.record(record)

    def get_record(self, document_id: str) -> DocumentRecord | None:
        return self._chunks.get_record(document_id)

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        return self._chunks.list_records(status)

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        return self._chunks.get_chunks(chunk_ids, identity)

    def document_chunks(self, document_id: str) -> list[Chunk]:
        return self._chunks.document_chunks(document_id)

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        """Parent chunks by id that *identity* may see (the security filter applies here too)."""
        return self._chunks.get_parents(parent_ids, identity)

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by chunk id (for redundancy filtering and MMR)."""
        return self._chunks.get_vectors(chunk_ids)

    def count_chunks(self) -> int:
        return self._chunks.count()

    # -- search (dense.py, keyword_search.py, sparse.py) -----------------------------------------------
    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        """Retried when a concurrent write or alias switch replaced rows it chose (dense.py)."""
        return self._dense.search_dense(
            vector, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    @property
    def keyword_analyzer(self) -> str:
        return self._keyword.analyzer.name

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        return self._keyword.search_keyword(
            query, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    @property
    def sparse_encoder(self) -> str | None:
        """The name of the encoder whose vectors this collection holds (``None``: none yet)."""
        return self._sparse.sparse_encoder

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        """Store sparse vectors by chunk id; vectors of a different encoder are dropped first."""
        self._sparse.put_sparse(vectors, encoder=encoder)

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """Chunks without a vector from *encoder* (all of them when another encoder wrote the table)."""
        return self._sparse.missing_sparse(encoder)

    def search_sparse(
        self,
        query: SparseVector,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        """The best *k* chunks by dot product with *query*, filtered before the cut (like BM25)."""
        return self._sparse.search_sparse(
            query, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    # -- staging: raw bytes and parsed documents by content hash (stores/sql_staging.py) ----------------
    def stage(self, content_hash: str, data: bytes) -> None:
        """Keep the raw bytes of a source document (compressed) so a re-run never re-reads the source."""
        self._staging.stage(content_hash, data)

    def staged(self, content_hash: str) -> bytes | None:
        return self._staging.staged(content_hash)

    def cache_parsed(self, content_hash: str, parser_version: str, document: Document) -> None:
        """Keep a parsed document, so a new chunker or embedding model re-runs without parsing (or OCR)."""
        self._staging.cache_parsed(content_hash, parser_version, document)

    def cached_parsed(self, content_hash: str, parser_version: str) -> Document | None:
        return self._staging.cached_parsed(content_hash, parser_version)

    def lease_staging(self, run_id: str, content_hash: str) -> None:
        """Protect a content hash's staged rows from pruning until the run *run_id* releases it."""
        self._staging.lease(run_id, content_hash)

    def prune_staging(self, *, release: str | None = None) -> int:
        """Release *release*'s leases; drop staged bytes and parsed documents that no live registry
        record refers to and no live lease protects (see :class:`~ragwright.stores.base.Staging`)."""
        return self._staging.prune(release)

    # -- collections and the live alias (collections.py) ------------------------------------------------
    @property
    def live_collection(self) -> str:
        """The physical collection the ``live`` alias names now."""
        with self._h.lock:
            return self._h.alias_target()

    @property
    def current_collection(self) -> str:
        """The physical collection this store object reads (the live one unless pinned or stale)."""
        with self._h.lock:
            return self._h.tables.name

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the file, with its model and sizes."""
        return self._collections.collections()

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty physical collection beside the others (not live); returns its name.

        *building*: this process is about to build it; if the process ends before the alias moves to
        it, the collection is dropped as abandoned (see :mod:`ragwright.stores.sqlite.collections`)."""
        return self._collections.create_collection(note, building=building)

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder process ended before the alias moved to them (a reindex
        killed mid-build); returns their names. A build still running, or on another host, is kept."""
        return self._collections.drop_abandoned_builds()

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point the ``live`` alias at *name* in one transaction; returns the previous collection.

        *check* runs inside the transaction (no other writer can interleave); when it returns a reason,
        the transaction is rolled back, the alias stays, and :class:`StoreError` carries the reason.
        """
        return self._collections.switch_alias(name, check=check)

    def drop_collection(self, name: str) -> None:
        """Delete a physical collection that is not live (its tables and binding); staged bytes and
        parsed documents no remaining collection refers to are pruned."""
        self._collections.drop_collection(name)

    def open_collection(self, name: str) -> SqliteStore:
        """A store object (its own connection) pinned to the physical collection *name*: it never follows
        the alias. Used to build and evaluate a collection before it goes live."""
        return self._reopen(pinned=name)

    def open_live(self) -> SqliteStore:
        """A new store object (its own connection) over the live collection, following the alias."""
        return self._reopen(pinned=None)

    def _reopen(self, *, pinned: str | None) -> SqliteStore:
        if str(self.path) == ":memory:":
            raise StoreError("an in-memory SQLite store has one connection only; reindex a store file")
        return SqliteStore(self.path, keyword_analyzer=self._keyword.analyzer.name, ann=self._dense.ann, pinned=pinned)
