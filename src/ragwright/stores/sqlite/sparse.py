"""Learned sparse vectors in an SQLite store (a mixin of :class:`SqliteStore`).

Vectors live in a table per physical collection (``sparse_vectors`` for ``main``, else
``sparse_vectors__<name>``; created on first use), keyed by chunk id: a chunk id names fixed content,
so its vector never changes while the chunk lives. The inverted index (:class:`SparseIndex`) is
derived state: after any write it is brought up to date by diffing the chunk ids that have vectors
against the ones it holds, loading only the new ones. Rows of deleted chunks are ignored (the index
reads through a join with the chunks) and pruned by ``missing_sparse``. The encoder that wrote the
vectors is recorded; vectors of another encoder are dropped when a new one writes.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit

if TYPE_CHECKING:
    from ragwright.index.sparse import SparseIndex
    from ragwright.models.sparse.base import SparseVector
    from ragwright.stores.sqlite.schema import Tables
    from ragwright.stores.sqlite.transaction import ReadSnapshot, Transaction

log = logging.getLogger(__name__)


class SqliteSparse:
    """Sparse vectors and their search; the host class provides the connection, lock and filters."""

    _conn: sqlite3.Connection
    _lock: threading.RLock
    _t: Tables
    _sparse_ix: SparseIndex
    _sparse_at: tuple[tuple[int, int], int, str]
    _sparse_of: str
    _sparse_writes: int

    def _version(self) -> tuple[int, int]:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _transaction(self) -> Transaction:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _read_snapshot(self) -> ReadSnapshot:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _set_meta(self, key: str, value: str) -> None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _allowed_ids(self, identity: Identity, metadata_filter: Filter | None) -> frozenset[str] | None:
        raise NotImplementedError  # pragma: no cover - provided by SqliteSearch

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:  # pragma: no cover
        raise NotImplementedError

    # -- storage -----------------------------------------------------------------------------------
    @property
    def _sparse_table(self) -> str:
        return "sparse_vectors" if self._t.name == "main" else f"sparse_vectors__{self._t.name}"

    def _sparse_key(self) -> str:
        return "sparse_encoder" if self._t.name == "main" else f"sparse_encoder@{self._t.name}"

    def _ensure_sparse_table(self) -> str:
        table = self._sparse_table
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} "
            "(chunk_id TEXT PRIMARY KEY, terms BLOB NOT NULL, weights BLOB NOT NULL)"
        )
        return table

    @property
    def sparse_encoder(self) -> str | None:
        """The name of the encoder whose vectors this collection holds (``None``: none yet)."""
        with self._lock:
            return self._meta(self._sparse_key())

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        """Store sparse vectors by chunk id; vectors of a different encoder are dropped first."""
        rows = [(cid, v.indices.astype("<i4").tobytes(), v.values.astype("<f4").tobytes()) for cid, v in vectors]
        with self._transaction():
            table = self._ensure_sparse_table()
            known = self._meta(self._sparse_key())
            if known != encoder:
                if known is not None:
                    log.warning("sparse_encoder_changed: %s -> %s; stored sparse vectors dropped", known, encoder)
                self._conn.execute(f"DELETE FROM {table}")
                self._set_meta(self._sparse_key(), encoder)
            self._conn.executemany(f"INSERT OR REPLACE INTO {table}(chunk_id, terms, weights) VALUES (?,?,?)", rows)
            # PRAGMA data_version does not see this connection's own writes; chunk writes bump the host's
            # counter, these bump their own (so the dense matrix and BM25 are not invalidated by them)
            self._sparse_writes = getattr(self, "_sparse_writes", 0) + 1

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """Chunks without a vector from *encoder* (all of them when another encoder wrote the table)."""
        with self._transaction():
            table = self._ensure_sparse_table()
            if self._meta(self._sparse_key()) != encoder:
                sql = f"SELECT chunk_id, COALESCE(embed_text, text) FROM {self._t.chunks} ORDER BY rowid"
            else:
                self._conn.execute(f"DELETE FROM {table} WHERE chunk_id NOT IN (SELECT chunk_id FROM {self._t.chunks})")
                sql = (
                    f"SELECT c.chunk_id, COALESCE(c.embed_text, c.text) FROM {self._t.chunks} c "
                    f"LEFT JOIN {table} s ON s.chunk_id = c.chunk_id WHERE s.chunk_id IS NULL ORDER BY c.rowid"
                )
            return [(r[0], r[1]) for r in self._conn.execute(sql)]

    # -- the derived inverted index ---------------------------------------------------------------------
    def _sparse_index(self) -> SparseIndex:
        """The inverted index, brought up to date incrementally after writes (call inside a read snapshot;
        a search writes nothing: a collection without the table has no sparse vectors yet)."""
        import numpy as np

        from ragwright.index.sparse import SparseIndex
        from ragwright.models.sparse.base import SparseVector

        version = (self._version(), getattr(self, "_sparse_writes", 0), self._t.name)
        index: SparseIndex | None = getattr(self, "_sparse_ix", None)
        if index is not None and getattr(self, "_sparse_at", None) == version:
            return index
        if index is None or getattr(self, "_sparse_of", None) != self._t.name:
            index = SparseIndex()
        table = self._sparse_table
        exists = self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        if exists.fetchone() is None:
            index = SparseIndex()
            self._sparse_ix, self._sparse_at, self._sparse_of = index, version, self._t.name
            return index
        join = f"FROM {table} s JOIN {self._t.chunks} c ON c.chunk_id = s.chunk_id"
        have = {r[0] for r in self._conn.execute(f"SELECT s.chunk_id {join}")}
        current = set(index.ids())
        index.remove(current - have)
        new = sorted(have - current)
        for start in range(0, len(new), 500):
            part = json.dumps(new[start : start + 500])
            rows = self._conn.execute(
                f"SELECT chunk_id, terms, weights FROM {table} WHERE chunk_id IN (SELECT value FROM json_each(?))",
                (part,),
            ).fetchall()
            index.upsert(
                (r[0], SparseVector(np.frombuffer(r[1], dtype="<i4"), np.frombuffer(r[2], dtype="<f4"))) for r in rows
            )
        self._sparse_ix, self._sparse_at, self._sparse_of = index, version, self._t.name
        return index

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
        with self._read_snapshot():  # the index and the allowed ids from one committed state
            index = self._sparse_index()
            allowed = self._allowed_ids(identity, metadata_filter)
        hits = index.search(query, k, allowed=allowed, min_score=min_score)
        # get_chunks applies the security filter again: a chunk may have changed since the snapshot.
        chunks = {c.id: c for c in self.get_chunks([cid for cid, _ in hits], identity)}
        return [Hit(chunks[cid], score) for cid, score in hits if cid in chunks]
