"""The scale-out store: PostgreSQL with pgvector.

Chunks (metadata as JSONB, tenant and ACL as ``text[]`` with a GIN index), the registry, parent
chunks, staging and the ingestion queue live in one schema of the user's database. Vectors live in a
``vector(d)`` column with an HNSW index (cosine); the security and metadata filters are compiled to
SQL with bound parameters and applied inside the ANN query (see :mod:`.search`); learned sparse
vectors live in ``sparsevec`` (:mod:`.sparse`). Every write is one
transaction — new chunks upserted first, then the superseded ones deleted — that bumps the change
counter other processes follow. The API is synchronous like the protocols; async callers go through
``ragwright._sync.to_thread`` higher up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.index.analyzers import DEFAULT_ANALYZER
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import ScoreScale
from ragwright.stores.common import STAGING_LEASE_S, check_embedder, check_vectors, keyword_entry
from ragwright.stores.postgres.collections import PostgresCollections
from ragwright.stores.postgres.connection import PostgresOptions, connect, open_pool, redact
from ragwright.stores.postgres.dialect import POSTGRES_DIALECT, POSTGRES_REGISTRY
from ragwright.stores.postgres.keyword import KeywordMirror
from ragwright.stores.postgres.migrate import migrate, wipe
from ragwright.stores.postgres.schema import (
    CHUNK_COLUMNS,
    chunk_from_row,
    chunk_row,
    pg_json,
    pg_text,
)
from ragwright.stores.postgres.schemas import MAIN_COLLECTION, search_path
from ragwright.stores.postgres.search import PostgresSearch
from ragwright.stores.postgres.sparse import PostgresSparse
from ragwright.stores.postgres.sql_filters import compile_security
from ragwright.stores.postgres.tags import PostgresTagTable
from ragwright.stores.sql_dialect import Execute
from ragwright.stores.sql_integrity import integrity_problems
from ragwright.stores.sql_staging import SqlStaging

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import psycopg

    from ragwright.stores.postgres.side_tables import PostgresSideDatabase

log = logging.getLogger(__name__)

_CHUNK_UPSERT = (
    f"INSERT INTO chunks ({CHUNK_COLUMNS}, vector) VALUES ({', '.join(['%s'] * 15)}) "
    "ON CONFLICT (chunk_id) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in [*CHUNK_COLUMNS.split(", ")[1:], "vector"])
)
_PARENT_UPSERT = (
    "INSERT INTO parents(parent_id, document_id, position, text, metadata, tenant, acl) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (parent_id) DO UPDATE SET "
    "document_id = EXCLUDED.document_id, position = EXCLUDED.position, text = EXCLUDED.text, "
    "metadata = EXCLUDED.metadata, tenant = EXCLUDED.tenant, acl = EXCLUDED.acl"
)
_PRUNE_EVERY, _KEEP_CHANGES = 500, 20000


class PostgresStore(PostgresSearch, PostgresSparse, PostgresCollections):
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
        self.options = options or PostgresOptions()
        analyzer = get_analyzer(keyword_analyzer)  # refuses an unknown name before touching the server
        with connect(dsn, self.options) as conn:
            self._store_id = migrate(conn, self.options, collection, redact(dsn))
            conn.execute(
                "SELECT set_config('search_path', %s, false)", (search_path(self.options.schema, MAIN_COLLECTION),)
            )
            self._init_collection(conn, pinned)  # the collection read and written (collections.py)
        self._pool = open_pool(dsn, self.options)
        self._keyword = KeywordMirror(analyzer, self.options.keyword_snapshot)
        self._dense_plan: dict[str, tuple[int, float, bool]] = {}
        self._writes = 0  # this process's writes: they invalidate the exact-search decisions
        self._allowed: dict[tuple[int, str], frozenset[str] | None] = {}
        self._closed = False
        self._known_dimension: int | None = None
        try:
            self.drop_abandoned_builds()  # a reindex killed mid-build leaves no half-built collection
        except StoreError as exc:  # never a reason not to open the store
            log.warning("abandoned_build_check_failed: %s: %s", redact(dsn), exc)

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.dsn)!r}, schema={self.options.schema!r})"

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        if self._closed:
            raise StoreError("this PostgreSQL store is closed")
        import psycopg

        try:
            with self._pool.connection() as conn:
                self._enter(conn)  # follows the alias when due; searches this object's collection
                yield conn
        except psycopg.Error as exc:  # one error type for callers (ingestion records it per document)
            raise StoreError(f"PostgreSQL store {redact(self.dsn)}: {type(exc).__name__}: {exc}") from exc

    def _meta(self, conn: psycopg.Connection[Any], key: str) -> str | None:
        row = conn.execute("SELECT value FROM rag_metadata WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    @staticmethod
    def _set_meta(conn: psycopg.Connection[Any], key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO rag_metadata(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (key, value),
        )

    @property
    def collection(self) -> str | None:
        with self._conn() as conn:
            return self._meta(conn, "collection")

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        with self._conn() as conn:
            return self._bound(conn)

    def _dimension(self) -> int | None:
        """The bound model's dimension, remembered once known (the column's type enforces it anyway)."""
        if self._known_dimension is None:
            bound = self.embedding_model
            self._known_dimension = None if bound is None else bound[1]
        return self._known_dimension

    def _bound(self, conn: psycopg.Connection[Any]) -> tuple[str, int] | None:
        name, dim = self._meta(conn, "embedding_model"), self._meta(conn, "embedding_dimension")
        return None if name is None or dim is None else (name, int(dim))

    @property
    def embedder_spec(self) -> str | None:
        with self._conn() as conn:
            return self._meta(conn, "embedding_spec")

    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None:
        """Remember the model; the first binding types the vector column and builds the HNSW index."""
        with self._conn() as conn, self._writing(conn):
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ragwright.bind_embedder'))")
            bound = self._bound(conn)
            check_embedder(bound, name, dimension, f"the store {redact(self.dsn)}")
            self._bound_here = (name, dimension)
            if spec is not None and self._meta(conn, "embedding_spec") != spec:
                self._set_meta(conn, "embedding_spec", spec)
            if bound is not None:
                return
            self._set_meta(conn, "embedding_model", name)
            self._set_meta(conn, "embedding_dimension", str(dimension))
            conn.execute(f"ALTER TABLE chunks ALTER COLUMN vector TYPE vector({int(dimension)})")
            if dimension <= 2000:  # pgvector's HNSW limit for vector; larger models search exactly
                conn.execute(
                    "CREATE INDEX IF NOT EXISTS chunks_hnsw ON chunks USING hnsw (vector vector_cosine_ops) "
                    f"WITH (m = {int(self.options.hnsw_m)}, ef_construction = {int(self.options.hnsw_ef_construction)})"
                )

    @property
    def score_scale(self) -> ScoreScale:
        return ScoreScale.SIMILARITY

    # -- the change counter ------------------------------------------------------------------------
    def _bump(self, conn: psycopg.Connection[Any], document_id: str, delete_where: str, params: Sequence[Any]) -> Any:
        """Delete the document's chunks matching *delete_where*, advance the change counter and log the
        change, in one statement (the last of a write: the counter's row lock orders writers).

        Returns the cursor; its row is ``(version, removed chunk ids)``.
        """
        return conn.execute(
            f"WITH gone AS (DELETE FROM chunks WHERE document_id = %s AND {delete_where} RETURNING chunk_id), "
            "v AS (UPDATE rag_state SET version = version + 1 WHERE id = 1 RETURNING version) "
            "INSERT INTO rag_changes(version, document_id, removed) "
            "SELECT v.version, %s, COALESCE((SELECT array_agg(chunk_id) FROM gone), '{}') FROM v "
            "RETURNING version, removed",
            [document_id, *params, document_id],
        )

    def _bumped(self, conn: psycopg.Connection[Any], cur: Any) -> tuple[int, list[str]]:
        row = cur.fetchone()
        assert row is not None
        version, removed = int(row[0]), list(row[1])
        if version % _PRUNE_EVERY == 0 and version > _KEEP_CHANGES:
            floor = version - _KEEP_CHANGES
            conn.execute("DELETE FROM rag_changes WHERE version <= %s", (floor,))
            self._set_meta(conn, "changes_floor", str(floor))
        return version, removed

    def tag_table(self) -> PostgresTagTable:
        """The tag vectors of tag-based retrieval (tables of :mod:`ragwright.stores.postgres.tags`)."""
        return PostgresTagTable(self._conn)

    def side_database(self) -> PostgresSideDatabase:
        """Where a feature keeps its tables beside the store's (the graph: :mod:`.side_tables`)."""
        from ragwright.stores.postgres.side_tables import PostgresSideDatabase

        return PostgresSideDatabase(self._conn)

    def index_version(self) -> int:
        """The store's change counter: it moves on every write by any process (cache keys use it)."""
        with self._conn() as conn:
            row = conn.execute("SELECT version FROM rag_state WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    # -- writes ------------------------------------------------------------------------------------
    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32],
        parents: Sequence[Chunk] = (),
    ) -> None:
        arr = check_vectors(len(chunks), vectors, self._dimension())
        rows = [(*chunk_row(c), arr[i]) for i, c in enumerate(chunks)]
        new_ids = [c.id for c in chunks]
        parent_rows = [
            (p.id, p.document_id, p.position, pg_text(p.text), pg_json(p.metadata), p.tenant, list(p.acl))
            for p in parents
        ]
        # One pipelined transaction: new chunks first, then the superseded ones go (with the counter bump).
        with self._conn() as conn, conn.pipeline(), self._writing(conn):
            with conn.cursor() as cur:
                cur.executemany(_CHUNK_UPSERT, rows)
            conn.execute("DELETE FROM parents WHERE document_id = %s", (record.document_id,))
            if parent_rows:
                with conn.cursor() as cur:
                    cur.executemany(_PARENT_UPSERT, parent_rows)
            POSTGRES_REGISTRY.write(conn.execute, "documents", record)
            version, superseded = self._bumped(
                conn, self._bump(conn, record.document_id, "NOT (chunk_id = ANY(%s))", [new_ids])
            )
        self._writes += 1
        entries = [keyword_entry(c) for c in chunks]
        self._keyword.apply_local(version, superseded, [(cid, pg_text(text), lang) for cid, text, lang in entries])

    def remove_document(self, document_id: str) -> int:
        with self._conn() as conn, conn.pipeline(), self._writing(conn):
            conn.execute("DELETE FROM parents WHERE document_id = %s", (document_id,))
            conn.execute("DELETE FROM tag_documents WHERE document_id = %s", (document_id,))
            conn.execute(
                "UPDATE documents SET status = 'deleted', chunk_count = 0, updated_at = %s WHERE document_id = %s",
                (time.time(), document_id),
            )
            version, ids = self._bumped(conn, self._bump(conn, document_id, "TRUE", []))
        self._writes += 1
        self._keyword.apply_local(version, ids, [])
        return len(ids)

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        """Re-sync a document's tenant and ACL onto its chunks, parents and record; no vector is touched."""
        with self._conn() as conn, conn.pipeline(), self._writing(conn):
            cur = POSTGRES_REGISTRY.update_access(
                conn.execute,
                chunks="chunks",
                documents="documents",
                parents="parents",
                document_id=document_id,
                tenant=tenant,
                acl=acl,
            )
            version, _ = self._bumped(conn, self._bump(conn, document_id, "FALSE", []))
            count = cur.rowcount
        self._writes += 1
        self._keyword.apply_local(version, [], [])
        return int(count)

    def record(self, record: DocumentRecord) -> None:
        with self._conn() as conn, self._writing(conn):
            POSTGRES_REGISTRY.write(conn.execute, "documents", record)

    # -- staging: raw bytes and parsed documents by content hash (stores/sql_staging.py) ----------------
    @property
    def _staging(self) -> SqlStaging:
        return SqlStaging(
            POSTGRES_DIALECT,
            write=self._staging_write,
            read=self._staging_read,
            live_hashes=self._live_hashes_sql,  # of every collection (collections.py)
            lease_s=STAGING_LEASE_S,
        )

    @contextmanager
    def _staging_write(self) -> Iterator[Execute]:
        with self._conn() as conn, conn.transaction():
            yield conn.execute

    @contextmanager
    def _staging_read(self) -> Iterator[Execute]:
        with self._conn() as conn:
            yield conn.execute

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

    # -- reads -------------------------------------------------------------------------------------
    def get_record(self, document_id: str) -> DocumentRecord | None:
        with self._conn() as conn:
            return POSTGRES_REGISTRY.get(conn.execute, "documents", document_id)

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        with self._conn() as conn:
            return POSTGRES_REGISTRY.records(conn.execute, "documents", status)

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        params: list[Any] = [list(chunk_ids)]
        security = compile_security(identity, "tenant", "acl", params)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ANY(%s) AND {security}", params
            ).fetchall()
        by_id = {r[0]: chunk_from_row(r) for r in rows}
        return [by_id[cid] for cid in chunk_ids if cid in by_id]

    def document_chunks(self, document_id: str) -> list[Chunk]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = %s ORDER BY position", (document_id,)
            ).fetchall()
        return [chunk_from_row(r) for r in rows]

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        params: list[Any] = [list(parent_ids)]
        security = compile_security(identity, "tenant", "acl", params)
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT parent_id, document_id, position, text, metadata, tenant, acl FROM parents "
                f"WHERE parent_id = ANY(%s) AND {security}",
                params,
            ).fetchall()
        return [
            Chunk(id=r[0], document_id=r[1], position=r[2], text=r[3], metadata=r[4], tenant=r[5], acl=tuple(r[6]))
            for r in rows
        ]

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        import numpy as np

        with self._conn() as conn:
            rows = conn.execute(
                "SELECT chunk_id, vector FROM chunks WHERE chunk_id = ANY(%s)", (list(chunk_ids),)
            ).fetchall()
        return {r[0]: np.asarray(_numpy(r[1]), dtype=np.float32) for r in rows}

    def count_chunks(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return int(row[0]) if row else 0

    def check_integrity(self) -> list[str]:
        """Orphan chunks, indexed documents with the wrong chunk count, vectors of the wrong size,
        a keyword index out of step with the chunks (sql_integrity.py)."""
        with self._conn() as conn:
            bound = self._bound(conn)
            return integrity_problems(
                conn.execute,
                POSTGRES_DIALECT,
                chunks="chunks",
                documents="documents",
                dimension=None if bound is None else bound[1],
                keyword_index=lambda: self._keyword.sync(conn, self._store_id)[0],
            )

    # -- lifecycle -----------------------------------------------------------------------------------
    def wipe(self) -> None:
        """Delete every row of this store (chunks, registry, staging, queue, every collection but ``main``,
        which the alias names again) and forget the model."""
        with self._conn() as conn:
            self._store_id = wipe(conn, self.options.schema)
            self._name, self._path, self._stale = (
                MAIN_COLLECTION,
                search_path(self.options.schema, MAIN_COLLECTION),
                None,
            )
        self._known_dimension = None
        self._keyword.reset()

    def save_keyword_snapshot(self) -> bool:
        """Write the BM25 snapshot now (when ``keyword_snapshot`` is set); ``True`` when written."""
        return self._keyword.save_snapshot(self._store_id)

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._keyword.save_snapshot(self._store_id)
        except OSError as exc:
            log.warning("keyword_snapshot_failed: %s", exc)
        self._closed = True
        self._release_builders()
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _numpy(value: Any) -> Any:
    """pgvector's loader returns a ``Vector`` object (newer versions) or a numpy array."""
    to_numpy = getattr(value, "to_numpy", None)
    return to_numpy() if callable(to_numpy) else value
