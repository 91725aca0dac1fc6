"""The embedded default store: one SQLite file in WAL mode.

Holds documents (the registry), chunks, typed metadata (JSON) and vectors (float32 BLOBs). Reopening
the file restores everything without re-ingestion. Metadata and security filters are compiled to SQL
and applied before top-k; scoring runs on an in-memory matrix of the vectors, reloaded when the file
changes (also when another process wrote it: ``PRAGMA data_version``).

``collection`` is the stale-data guard of seed 000: when a name is given and the file holds a
different one, every persisted row is wiped before use (logged as ``collection_mismatch_wiped``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import Hit, ScoreScale
from ragwright.stores.common import check_embedder, check_vectors, deleted_record
from ragwright.stores.sqlite.schema import SCHEMA, SCHEMA_VERSION, chunk_from_row, record_from_row
from ragwright.stores.sqlite.sql_filters import compile_filter, compile_security

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

_CHUNK_COLUMNS = (
    "chunk_id, document_id, position, text, embed_text, section_path, page, page_end, parent_id, "
    "prev_id, next_id, metadata, tenant, acl"
)


class SqliteStore:
    """A ragwright store in one SQLite file. Thread-safe (one connection behind a lock)."""

    def __init__(self, path: str | Path, *, collection: str | None = None) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"{self.path} is a directory; give the path of a store file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for the store {self.path}: {exc.strerror}") from exc
        self._lock = threading.RLock()
        self._matrix: npt.NDArray[np.float32] | None = None
        self._rowids: npt.NDArray[np.int64] | None = None
        self._matrix_version: tuple[int, int] | None = None
        self._eligible_cache: dict[str, npt.NDArray[np.intp]] = {}
        self._local_writes = 0
        try:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._init_schema(collection)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a readable ragwright store ({exc}); it was left untouched — "
                "move it aside or choose another store path"
            ) from exc

    # -- setup -------------------------------------------------------------------------------------
    def _init_schema(self, collection: str | None) -> None:
        conn = self._conn
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "rag_metadata" not in tables:
            raise StoreError(
                f"{self.path} is an SQLite database but not a ragwright store; it was left untouched — "
                "choose another store path"
            )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        with self._transaction():
            for statement in SCHEMA:
                conn.execute(statement)
            version = self._meta("schema_version")
            if version is None:
                self._set_meta("schema_version", str(SCHEMA_VERSION))
            elif version != str(SCHEMA_VERSION):
                raise StoreError(
                    f"{self.path} has store schema version {version}; this ragwright reads version "
                    f"{SCHEMA_VERSION}. Re-ingest into a new store"
                )
            if collection is not None:
                stored = self._meta("collection")
                if stored is not None and stored != collection:
                    log.warning(
                        "collection_mismatch_wiped: %s held collection %r, opened as %r; all rows wiped",
                        self.path,
                        stored,
                        collection,
                    )
                    conn.execute("DELETE FROM chunks")
                    conn.execute("DELETE FROM documents")
                    conn.execute("DELETE FROM rag_metadata WHERE key IN ('embedding_model','embedding_dimension')")
                self._set_meta("collection", collection)

    def _transaction(self) -> _Tx:
        return _Tx(self._conn, self._lock)

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM rag_metadata WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO rag_metadata(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    @property
    def collection(self) -> str | None:
        with self._lock:
            return self._meta("collection")

    @property
    def embedding_model(self) -> tuple[str, int] | None:
        with self._lock:
            name, dim = self._meta("embedding_model"), self._meta("embedding_dimension")
        return None if name is None or dim is None else (name, int(dim))

    def bind_embedder(self, name: str, dimension: int) -> None:
        with self._transaction():
            check_embedder(self.embedding_model, name, dimension, f"the store {self.path}")
            self._set_meta("embedding_model", name)
            self._set_meta("embedding_dimension", str(dimension))

    @property
    def score_scale(self) -> ScoreScale:
        return ScoreScale.SIMILARITY

    # -- writes --------------------------------------------------------------------------------------
    def replace_document(
        self, record: DocumentRecord, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]
    ) -> None:
        bound = self.embedding_model
        arr = check_vectors(len(chunks), vectors, bound[1] if bound else None)
        rows = [_chunk_row(c, arr[i].tobytes()) for i, c in enumerate(chunks)]
        with self._transaction():
            self._conn.executemany(
                f"INSERT OR REPLACE INTO chunks ({_CHUNK_COLUMNS}, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            self._conn.execute(
                "DELETE FROM chunks WHERE document_id = ? AND chunk_id NOT IN (SELECT value FROM json_each(?))",
                (record.document_id, json.dumps([c.id for c in chunks])),
            )
            self._write_record(record)
            self._local_writes += 1

    def remove_document(self, document_id: str) -> int:
        with self._transaction():
            cur = self._conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
            removed = cur.rowcount
            rec = self._get_record(document_id)
            if rec is not None:
                self._write_record(deleted_record(rec))
            self._local_writes += 1
        return int(removed)

    def record(self, record: DocumentRecord) -> None:
        with self._transaction():
            self._write_record(record)

    def _write_record(self, r: DocumentRecord) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO documents (document_id, source, content_hash, status, parser_version, "
            "chunker_version, embedding_model, chunk_count, stage, reason, tenant, acl, source_root, title, "
            "created_at, updated_at, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                r.document_id,
                r.source,
                r.content_hash,
                r.status.value,
                r.parser_version,
                r.chunker_version,
                r.embedding_model,
                r.chunk_count,
                r.stage,
                r.reason,
                r.tenant,
                json.dumps(list(r.acl)),
                r.source_root,
                r.title,
                r.created_at,
                r.updated_at,
                json.dumps(r.metadata, default=str),
            ),
        )

    # -- reads ---------------------------------------------------------------------------------------
    def _get_record(self, document_id: str) -> DocumentRecord | None:
        row = self._conn.execute("SELECT * FROM documents WHERE document_id = ?", (document_id,)).fetchone()
        return None if row is None else record_from_row(row)

    def get_record(self, document_id: str) -> DocumentRecord | None:
        with self._lock:
            return self._get_record(document_id)

    def list_records(self, status: DocumentStatus | None = None) -> list[DocumentRecord]:
        sql, params = "SELECT * FROM documents", []
        if status is not None:
            sql, params = sql + " WHERE status = ?", [status.value]
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY document_id", params).fetchall()
        return [record_from_row(r) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        params: list[Any] = [json.dumps(list(chunk_ids))]
        security = compile_security(identity, "tenant", "acl", params)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE chunk_id IN (SELECT value FROM json_each(?)) "
                f"AND {security}",
                params,
            ).fetchall()
        by_id = {r[0]: chunk_from_row(r) for r in rows}
        return [by_id[cid] for cid in chunk_ids if cid in by_id]

    def document_chunks(self, document_id: str) -> list[Chunk]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE document_id = ? ORDER BY position", (document_id,)
            ).fetchall()
        return [chunk_from_row(r) for r in rows]

    def count_chunks(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    # -- dense search ----------------------------------------------------------------------------------
    def _load_matrix(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Vectors and rowids of every chunk, reloaded when the file changed (ours or another process)."""
        import numpy as np

        version = (int(self._conn.execute("PRAGMA data_version").fetchone()[0]), self._local_writes)
        if self._matrix is None or self._rowids is None or version != self._matrix_version:
            rows = self._conn.execute("SELECT rowid, vector FROM chunks ORDER BY rowid").fetchall()
            dim = self.embedding_model[1] if self.embedding_model else 0
            self._rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            blob = b"".join(r[1] for r in rows)
            self._matrix = (
                np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim)
                if rows
                else np.zeros((0, dim), dtype=np.float32)
            )
            self._matrix_version = version
            self._eligible_cache.clear()
        return self._matrix, self._rowids

    def _eligible_positions(self, identity: Identity, metadata_filter: Filter | None) -> npt.NDArray[np.intp]:
        """Matrix positions of the chunks *identity* may see that match the filter (call under the lock).

        The security-only set is cached per identity signature until the next write, so the common
        unfiltered query does not scan the table.
        """
        import numpy as np

        _, rowids = self._load_matrix()
        key = identity.acl_signature() if metadata_filter is None else None
        if key is not None and key in self._eligible_cache:
            return self._eligible_cache[key]
        params: list[Any] = []
        where = (
            compile_security(identity, "tenant", "acl", params)
            + " AND "
            + compile_filter(metadata_filter, "metadata", params)
        )
        eligible = np.fromiter(
            (r[0] for r in self._conn.execute(f"SELECT rowid FROM chunks WHERE {where}", params)), dtype=np.int64
        )
        eligible.sort()
        positions = np.searchsorted(rowids, eligible)
        if key is not None:
            if len(self._eligible_cache) > 256:
                self._eligible_cache.clear()
            self._eligible_cache[key] = positions
        return positions

    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        import numpy as np

        with self._lock:
            matrix, rowids = self._load_matrix()
            positions = self._eligible_positions(identity, metadata_filter)
            if positions.size == 0 or matrix.shape[0] == 0:
                return []
            scores = matrix[positions] @ np.asarray(vector, dtype=np.float32)
            keep = scores >= min_score
            positions, scores = positions[keep], scores[keep]
            if scores.size == 0:
                return []
            top = min(k, scores.size)
            part = np.argpartition(-scores, top - 1)[:top] if top < scores.size else np.arange(scores.size)
            order = part[np.lexsort((rowids[positions[part]], -scores[part]))]
            chosen = [int(rowids[positions[i]]) for i in order]
            rows = self._conn.execute(
                f"SELECT rowid, {_CHUNK_COLUMNS} FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(chosen),),
            ).fetchall()
        by_rowid = {r[0]: chunk_from_row(r[1:]) for r in rows}
        return [Hit(by_rowid[rid], float(scores[i])) for rid, i in zip(chosen, order, strict=True)]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Tx:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` under the store's lock; rolls back on error."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._conn, self._lock = conn, lock

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            self._conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()


def _chunk_row(c: Chunk, vector: bytes) -> tuple[Any, ...]:
    return (
        c.id,
        c.document_id,
        c.position,
        c.text,
        c.embed_text,
        json.dumps(list(c.section_path)),
        c.page,
        c.page_end,
        c.parent_id,
        c.prev_id,
        c.next_id,
        json.dumps(c.metadata),
        c.tenant,
        json.dumps(list(c.acl)),
        vector,
    )
