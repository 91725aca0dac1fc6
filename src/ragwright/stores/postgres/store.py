"""The scale-out store: PostgreSQL with pgvector.

Chunks (metadata as JSONB, tenant and ACL as ``text[]`` with a GIN index), the registry, parent
chunks, staging and the ingestion queue live in one schema of the user's database. Vectors live in a
``vector(d)`` column with an HNSW index (cosine); the security and metadata filters are compiled to
SQL with bound parameters and applied inside the ANN query (see :mod:`.search`); learned sparse
vectors live in ``sparsevec`` (:mod:`.sparse`). Every write is one
transaction — new chunks upserted first, then the superseded ones deleted — that bumps the change
counter other processes follow. The API is synchronous like the protocols; async callers go through
``ragwright._sync.to_thread`` higher up.

The store is composed of parts that share one :class:`~.state.PostgresState` (the pool, the options,
the collection read and its derived state): the chunk table (:mod:`.chunks`), search (:mod:`.search`),
sparse vectors (:mod:`.sparse`), collections and the alias (:mod:`.collections`, :mod:`.follow`), the
registry (:class:`~ragwright.stores.sql_registry.SqlRegistry`) and staging
(:class:`~ragwright.stores.sql_staging.SqlStaging`). :class:`PostgresStore` delegates to them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.index.analyzers import DEFAULT_ANALYZER
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import CollectionInfo, Hit, ScoreScale
from ragwright.stores.common import STAGING_LEASE_S
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.collections import PostgresCollections, live_hashes_sql
from ragwright.stores.postgres.connection import PostgresOptions, connect, open_pool, redact
from ragwright.stores.postgres.dialect import POSTGRES_DIALECT, POSTGRES_REGISTRY
from ragwright.stores.postgres.follow import AliasFollower
from ragwright.stores.postgres.keyword import KeywordMirror
from ragwright.stores.postgres.migrate import migrate, wipe
from ragwright.stores.postgres.schemas import MAIN_COLLECTION, search_path
from ragwright.stores.postgres.search import PostgresSearch
from ragwright.stores.postgres.sparse import PostgresSparse
from ragwright.stores.postgres.state import PostgresState, get_meta
from ragwright.stores.postgres.tags import PostgresTagTable
from ragwright.stores.sql_dialect import Execute
from ragwright.stores.sql_staging import SqlStaging

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import psycopg

    from ragwright.index.bm25 import KeywordQuery
    from ragwright.models.sparse.base import SparseVector
    from ragwright.stores.postgres.side_tables import PostgresSideDatabase

log = logging.getLogger(__name__)


class PostgresStore:
    """A ragwright store in a PostgreSQL database (pgvector). Thread-safe; many processes may share it.

    *pinned*: work on that physical collection and never follow the ``live`` alias (a reindex builds
    through such an object, see :mod:`.collections`)."""

    def __init__(
        self,
        dsn: str,
        *,
        collection: str | None = None,
        keyword_analyzer: str = DEFAULT_ANALYZER,
        options: PostgresOptions | None = None,
        pinned: str | None = None,
    ) -> None:
        from ragwright.index import get_analyzer

        self.dsn = dsn
        self.options = options = options or PostgresOptions()
        analyzer = get_analyzer(keyword_analyzer)  # refuses an unknown name before touching the server
        with connect(dsn, options) as conn:
            store_id = migrate(conn, options, collection, redact(dsn))
            conn.execute("SELECT set_config('search_path', %s, false)", (search_path(options.schema, MAIN_COLLECTION),))
            state = PostgresState(dsn, options, KeywordMirror(analyzer, options.keyword_snapshot), store_id)
            state.follower = AliasFollower(state, conn, pinned)  # the collection read and written (follow.py)
        state.pool = open_pool(dsn, options)
        self._state = state
        self._chunks = PostgresChunks(state)
        self._search = PostgresSearch(state, self._chunks)
        self._sparse = PostgresSparse(state)
        self._staging = SqlStaging(
            POSTGRES_DIALECT,
            write=partial(_execute, state, transaction=True),
            read=partial(_execute, state, transaction=False),
            live_hashes=live_hashes_sql,  # of every collection (collections.py)
            lease_s=STAGING_LEASE_S,
        )
        self._collections = PostgresCollections(state, partial(self._staging.prune, None))
        try:
            self.drop_abandoned_builds()  # a reindex killed mid-build leaves no half-built collection
        except StoreError as exc:  # never a reason not to open the store
            log.warning("abandoned_build_check_failed: %s: %s", redact(dsn), exc)

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.dsn)!r}, schema={self.options.schema!r})"

    def _conn(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled connection on this object's collection (the queue, features and tests use it)."""
        return self._state.conn()

    @property
    def _keyword(self) -> KeywordMirror:
        return self._state.keyword

    # -- the model and the change counter (chunks.py) --------------------------------------------------
    @property
    def collection(self) -> str | None:
        with self._state.conn() as conn:
            return get_meta(conn, "collection")

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        return self._chunks.embedding_model()

    @property
    def embedder_spec(self) -> str | None:
        return self._chunks.embedder_spec()

    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None:
        """Remember the model; the first binding types the vector column and builds the HNSW index."""
        self._chunks.bind_embedder(name, dimension, spec=spec)

    @property
    def score_scale(self) -> ScoreScale:
        return ScoreScale.SIMILARITY

    def index_version(self) -> int:
        """The store's change counter: it moves on every write by any process (cache keys use it)."""
        return self._chunks.index_version()

    def tag_table(self) -> PostgresTagTable:
        """The tag vectors of tag-based retrieval (tables of :mod:`ragwright.stores.postgres.tags`)."""
        return PostgresTagTable(self._state.conn)

    def side_database(self) -> PostgresSideDatabase:
        """Where a feature keeps its tables beside the store's (the graph: :mod:`.side_tables`): in the
        schema of the collection this store object reads now (it moves when the store follows its alias)."""
        from ragwright.stores.postgres.side_tables import PostgresSideDatabase

        return PostgresSideDatabase(self._state.conn, where=lambda: self.current_collection)

    # -- chunks (chunks.py) and the registry ---------------------------------------------------------------
    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32],
        parents: Sequence[Chunk] = (),
    ) -> None:
        self._chunks.replace_document(record, chunks, vectors, parents)

    def remove_document(self, document_id: str) -> int:
        return self._chunks.remove_document(document_id)

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        """Re-sync a document's tenant and ACL onto its chunks, parents and record; no vector is touched."""
        return self._chunks.update_access(document_id, tenant, acl)

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        return self._chunks.get_chunks(chunk_ids, identity)

    def document_chunks(self, document_id: str) -> list[Chunk]:
        return self._chunks.document_chunks(document_id)

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        return self._chunks.get_parents(parent_ids, identity)

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        return self._chunks.get_vectors(chunk_ids)

    def count_chunks(self) -> int:
        return self._chunks.count_chunks()

    def check_integrity(self) -> list[str]:
        """Orphan chunks, indexed documents with the wrong chunk count, vectors of the wrong size,
        a keyword index out of step with the chunks (sql_integrity.py)."""
        return self._chunks.check_integrity()

    def record(self, record: DocumentRecord) -> None:
        with self._state.conn() as conn, self._state.writing(conn):
            POSTGRES_REGISTRY.write(conn.execute, "documents", record)

    def get_record(self, document_id: str) -> DocumentRecord | None:
        with self._state.conn() as conn:
            return POSTGRES_REGISTRY.get(conn.execute, "documents", document_id)

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        with self._state.conn() as conn:
            return POSTGRES_REGISTRY.records(conn.execute, "documents", status)

    # -- staging: raw bytes and parsed documents by content hash (stores/sql_staging.py) ----------------
    def stage(self, content_hash: str, data: bytes) -> None:
        self._staging.stage(content_hash, data)

    def staged(self, content_hash: str) -> bytes | None:
        return self._staging.staged(content_hash)

    def cache_parsed(self, content_hash: str, parser_version: str, document: Document) -> None:
        self._staging.cache_parsed(content_hash, parser_version, document)

    def cached_parsed(self, content_hash: str, parser_version: str) -> Document | None:
        return self._staging.cached_parsed(content_hash, parser_version)

    def lease_staging(self, run_id: str, content_hash: str) -> None:
        self._staging.lease(run_id, content_hash)

    def prune_staging(self, *, release: str | None = None) -> int:
        return self._staging.prune(release)

    # -- search (search.py, sparse.py) ---------------------------------------------------------------------
    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        return self._search.search_dense(
            vector, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    def explain_dense(
        self, vector: npt.NDArray[np.float32], k: int, *, identity: Identity, metadata_filter: Filter | None = None
    ) -> str:
        """The server's plan for this dense query (``EXPLAIN``): shows whether the HNSW index serves it."""
        return self._search.explain_dense(vector, k, identity=identity, metadata_filter=metadata_filter)

    @property
    def keyword_analyzer(self) -> str:
        return self._search.keyword_analyzer()

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        return self._search.search_keyword(
            query, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    @property
    def sparse_encoder(self) -> str | None:
        """The encoder whose vectors this store holds (``None``: none yet)."""
        return self._sparse.sparse_encoder()

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        """Store sparse vectors by chunk id (ids without a chunk are skipped)."""
        self._sparse.put_sparse(vectors, encoder=encoder)

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """``(chunk id, text)`` of every chunk without a vector from *encoder*."""
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
        """The best *k* chunks by dot product with *query* (> 0 and >= *min_score*), filtered before the cut."""
        return self._sparse.search_sparse(
            query, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score
        )

    # -- collections and the alias (collections.py) ----------------------------------------------------
    @property
    def live_collection(self) -> str:
        """The collection the ``live`` alias names now."""
        return self._collections.live_collection()

    @property
    def current_collection(self) -> str:
        """The collection this store object reads (the live one unless pinned or stale)."""
        return self._collections.current_collection()

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the store, oldest first, with its model and sizes."""
        return self._collections.collections()

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty collection (its own schema) beside the others, not live; returns its name."""
        return self._collections.create_collection(note, building=building)

    def open_collection(self, name: str) -> PostgresStore:
        """A store object (its own pool) pinned to collection *name*: it never follows the alias."""
        return self._collections.open_collection(name)

    def open_live(self) -> PostgresStore:
        """A new store object (its own pool) over the live collection, following the alias."""
        return self._collections.open_live()

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point ``live`` at *name* in one transaction; returns the previous collection."""
        return self._collections.switch_alias(name, check=check)

    def drop_collection(self, name: str) -> None:
        """Delete a collection that is not live (its schema, or ``main``'s rows and its features' side
        tables' rows); staged bytes and parsed documents no remaining collection refers to are pruned."""
        self._collections.drop_collection(name)

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder ended before the alias moved to them; returns their names."""
        return self._collections.drop_abandoned_builds()

    # -- lifecycle -----------------------------------------------------------------------------------
    def wipe(self) -> None:
        """Delete every row of this store (chunks, registry, staging, queue, the rows of the tables features
        keep beside them, every collection but ``main``, which the alias names again) and forget the model."""
        state = self._state
        with state.conn() as conn:
            state.store_id = wipe(conn, self.options.schema)
            assert state.follower is not None
            state.follower.reset()
        state.forget()

    def save_keyword_snapshot(self) -> bool:
        """Write the BM25 snapshot now (when ``keyword_snapshot`` is set); ``True`` when written."""
        return self._state.keyword.save_snapshot(self._state.store_id)

    def close(self) -> None:
        state = self._state
        if state.closed:
            return
        try:
            state.keyword.save_snapshot(state.store_id)
        except OSError as exc:
            log.warning("keyword_snapshot_failed: %s", exc)
        state.closed = True
        self._collections.release_builders()
        assert state.pool is not None
        state.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def _execute(state: PostgresState, *, transaction: bool) -> Iterator[Execute]:
    """Statements for staging (sql_staging.py): one transaction (writes) or autocommit (reads)."""
    with state.conn() as conn:
        if transaction:
            with conn.transaction():
                yield conn.execute
        else:
            yield conn.execute
