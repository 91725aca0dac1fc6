"""The chunk table of the PostgreSQL store (a part of :class:`~ragwright.stores.postgres.store.PostgresStore`):
the embedding model's binding, writes under the change counter, and lookups.

Every write is one transaction — new chunks upserted first, then the superseded ones deleted — whose
last statement bumps the change counter (``rag_state``) and logs the change (``rag_changes``): the
counter's row lock orders writers, and other processes' derived state (the keyword mirror) catches up
from the log. Lookups apply the caller's security filter inside the SQL.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord
from ragwright.stores.common import check_embedder, check_vectors, keyword_entry
from ragwright.stores.postgres.dialect import POSTGRES_DIALECT, POSTGRES_REGISTRY
from ragwright.stores.postgres.schema import CHUNK_COLUMNS, chunk_from_row, chunk_row, pg_json, pg_text
from ragwright.stores.postgres.sql_filters import compile_security
from ragwright.stores.postgres.state import PostgresState, get_meta, set_meta
from ragwright.stores.sql_integrity import integrity_problems

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import psycopg

__all__ = ["PostgresChunks"]

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


class PostgresChunks:
    """Chunks, parents and the model binding of the store object's collection."""

    def __init__(self, state: PostgresState) -> None:
        self._state = state

    # -- the embedding model -----------------------------------------------------------------------------
    def embedding_model(self) -> tuple[str, int] | None:
        with self._state.conn() as conn:
            return self._state.bound(conn)

    def embedder_spec(self) -> str | None:
        with self._state.conn() as conn:
            return get_meta(conn, "embedding_spec")

    def bind_embedder(self, name: str, dimension: int, *, spec: str | None = None) -> None:
        """Remember the model; the first binding types the vector column and builds the HNSW index."""
        state = self._state
        with state.conn() as conn, state.writing(conn):
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ragwright.bind_embedder'))")
            bound = state.bound(conn)
            check_embedder(bound, name, dimension, f"the store {state.where}")
            assert state.follower is not None
            state.follower.bound_here = (name, dimension)
            if spec is not None and get_meta(conn, "embedding_spec") != spec:
                set_meta(conn, "embedding_spec", spec)
            if bound is not None:
                return
            set_meta(conn, "embedding_model", name)
            set_meta(conn, "embedding_dimension", str(dimension))
            conn.execute(f"ALTER TABLE chunks ALTER COLUMN vector TYPE vector({int(dimension)})")
            if dimension <= 2000:  # pgvector's HNSW limit for vector; larger models search exactly
                options = state.options
                conn.execute(
                    "CREATE INDEX IF NOT EXISTS chunks_hnsw ON chunks USING hnsw (vector vector_cosine_ops) "
                    f"WITH (m = {int(options.hnsw_m)}, ef_construction = {int(options.hnsw_ef_construction)})"
                )

    # -- the change counter ------------------------------------------------------------------------------
    def index_version(self) -> int:
        """The change counter: it moves on every write by any process (cache keys use it)."""
        with self._state.conn() as conn:
            row = conn.execute("SELECT version FROM rag_state WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _bump(conn: psycopg.Connection[Any], document_id: str, delete_where: str, params: Sequence[Any]) -> Any:
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

    @staticmethod
    def _bumped(conn: psycopg.Connection[Any], cur: Any) -> tuple[int, list[str]]:
        row = cur.fetchone()
        assert row is not None
        version, removed = int(row[0]), list(row[1])
        if version % _PRUNE_EVERY == 0 and version > _KEEP_CHANGES:
            floor = version - _KEEP_CHANGES
            conn.execute("DELETE FROM rag_changes WHERE version <= %s", (floor,))
            set_meta(conn, "changes_floor", str(floor))
        return version, removed

    # -- writes ------------------------------------------------------------------------------------------
    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        vectors: npt.NDArray[np.float32],
        parents: Sequence[Chunk] = (),
    ) -> None:
        state = self._state
        arr = check_vectors(len(chunks), vectors, state.dimension())
        rows = [(*chunk_row(c), arr[i]) for i, c in enumerate(chunks)]
        new_ids = [c.id for c in chunks]
        parent_rows = [
            (p.id, p.document_id, p.position, pg_text(p.text), pg_json(p.metadata), p.tenant, list(p.acl))
            for p in parents
        ]
        # One pipelined transaction: new chunks first, then the superseded ones go (with the counter bump).
        with state.conn() as conn, conn.pipeline(), state.writing(conn):
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
        state.writes += 1
        entries = [keyword_entry(c) for c in chunks]
        state.keyword.apply_local(version, superseded, [(cid, pg_text(text), lang) for cid, text, lang in entries])

    def remove_document(self, document_id: str) -> int:
        state = self._state
        with state.conn() as conn, conn.pipeline(), state.writing(conn):
            conn.execute("DELETE FROM parents WHERE document_id = %s", (document_id,))
            conn.execute("DELETE FROM tag_documents WHERE document_id = %s", (document_id,))
            conn.execute(
                "UPDATE documents SET status = 'deleted', chunk_count = 0, updated_at = %s WHERE document_id = %s",
                (time.time(), document_id),
            )
            version, ids = self._bumped(conn, self._bump(conn, document_id, "TRUE", []))
        state.writes += 1
        state.keyword.apply_local(version, ids, [])
        return len(ids)

    def update_access(self, document_id: str, tenant: str, acl: tuple[str, ...]) -> int:
        """Re-sync a document's tenant and ACL onto its chunks, parents and record; no vector is touched."""
        state = self._state
        with state.conn() as conn, conn.pipeline(), state.writing(conn):
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
        state.writes += 1
        state.keyword.apply_local(version, [], [])
        return int(count)

    # -- reads -------------------------------------------------------------------------------------------
    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        params: list[Any] = [list(chunk_ids)]
        security = compile_security(identity, "tenant", "acl", params)
        with self._state.conn() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_id = ANY(%s) AND {security}", params
            ).fetchall()
        by_id = {r[0]: chunk_from_row(r) for r in rows}
        return [by_id[cid] for cid in chunk_ids if cid in by_id]

    def document_chunks(self, document_id: str) -> list[Chunk]:
        with self._state.conn() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = %s ORDER BY position", (document_id,)
            ).fetchall()
        return [chunk_from_row(r) for r in rows]

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        params: list[Any] = [list(parent_ids)]
        security = compile_security(identity, "tenant", "acl", params)
        with self._state.conn() as conn:
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

        with self._state.conn() as conn:
            rows = conn.execute(
                "SELECT chunk_id, vector FROM chunks WHERE chunk_id = ANY(%s)", (list(chunk_ids),)
            ).fetchall()
        return {r[0]: np.asarray(_numpy(r[1]), dtype=np.float32) for r in rows}

    def count_chunks(self) -> int:
        with self._state.conn() as conn:
            row = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return int(row[0]) if row else 0

    def check_integrity(self) -> list[str]:
        """Orphan chunks, indexed documents with the wrong chunk count, vectors of the wrong size, a
        keyword index out of step with the chunks (sql_integrity.py)."""
        state = self._state
        with state.conn() as conn:
            bound = state.bound(conn)
            return integrity_problems(
                conn.execute,
                POSTGRES_DIALECT,
                chunks="chunks",
                documents="documents",
                dimension=None if bound is None else bound[1],
                keyword_index=lambda: state.keyword.sync(conn, state.store_id)[0],
            )


def _numpy(value: Any) -> Any:
    """pgvector's loader returns a ``Vector`` object (newer versions) or a numpy array."""
    to_numpy = getattr(value, "to_numpy", None)
    return to_numpy() if callable(to_numpy) else value
