"""Learned sparse vectors in an SQLite store (a part of :class:`~ragwright.stores.sqlite.SqliteStore`).

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
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit

if TYPE_CHECKING:
    from ragwright.index.sparse import SparseIndex
    from ragwright.models.sparse.base import SparseVector
    from ragwright.stores.sqlite.chunks import SqliteChunks
    from ragwright.stores.sqlite.handle import SqliteHandle
    from ragwright.stores.sqlite.rows import SqliteRows

__all__ = ["SqliteSparse", "sparse_table"]

log = logging.getLogger(__name__)


def sparse_table(collection: str) -> str:
    """The table of *collection*'s sparse vectors."""
    return "sparse_vectors" if collection == "main" else f"sparse_vectors__{collection}"


class SqliteSparse:
    """Sparse vectors of the current collection and their search."""

    def __init__(self, handle: SqliteHandle, rows: SqliteRows, chunks: SqliteChunks) -> None:
        """*chunks*: the chunk table, whose lookup applies the security filter again to what was found."""
        self._h, self._rows, self._chunks = handle, rows, chunks
        self._index: SparseIndex | None = None
        self._at: tuple[tuple[int, int], int, str] | None = None  # (file version, writes, collection) indexed
        self._of: str | None = None  # the collection the index holds
        # PRAGMA data_version does not see this connection's own writes; chunk writes bump the handle's
        # counter, these bump their own (so the dense matrix and BM25 are not invalidated by them)
        self._writes = 0

    # -- storage -----------------------------------------------------------------------------------
    def _key(self) -> str:
        name = self._h.tables.name
        return "sparse_encoder" if name == "main" else f"sparse_encoder@{name}"

    def _ensure_table(self) -> str:
        table = sparse_table(self._h.tables.name)
        self._h.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} "
            "(chunk_id TEXT PRIMARY KEY, terms BLOB NOT NULL, weights BLOB NOT NULL)"
        )
        return table

    @property
    def sparse_encoder(self) -> str | None:
        """The name of the encoder whose vectors this collection holds (``None``: none yet)."""
        with self._h.lock:
            return self._h.meta(self._key())

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        """Store sparse vectors by chunk id; vectors of a different encoder are dropped first."""
        rows = [(cid, v.indices.astype("<i4").tobytes(), v.values.astype("<f4").tobytes()) for cid, v in vectors]
        h = self._h
        with h.transaction():
            table = self._ensure_table()
            known = h.meta(self._key())
            if known != encoder:
                if known is not None:
                    log.warning("sparse_encoder_changed: %s -> %s; stored sparse vectors dropped", known, encoder)
                h.conn.execute(f"DELETE FROM {table}")
                h.set_meta(self._key(), encoder)
            h.conn.executemany(f"INSERT OR REPLACE INTO {table}(chunk_id, terms, weights) VALUES (?,?,?)", rows)
            self._writes += 1

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """Chunks without a vector from *encoder* (all of them when another encoder wrote the table)."""
        h = self._h
        with h.transaction():
            table = self._ensure_table()
            chunks = h.tables.chunks
            if h.meta(self._key()) != encoder:
                sql = f"SELECT chunk_id, COALESCE(embed_text, text) FROM {chunks} ORDER BY rowid"
            else:
                h.conn.execute(f"DELETE FROM {table} WHERE chunk_id NOT IN (SELECT chunk_id FROM {chunks})")
                sql = (
                    f"SELECT c.chunk_id, COALESCE(c.embed_text, c.text) FROM {chunks} c "
                    f"LEFT JOIN {table} s ON s.chunk_id = c.chunk_id WHERE s.chunk_id IS NULL ORDER BY c.rowid"
                )
            return [(r[0], r[1]) for r in h.conn.execute(sql)]

    # -- the derived inverted index ---------------------------------------------------------------------
    def index(self) -> SparseIndex:
        """The inverted index, brought up to date incrementally after writes (call inside a read snapshot;
        a search writes nothing: a collection without the table has no sparse vectors yet)."""
        import numpy as np

        from ragwright.index.sparse import SparseIndex
        from ragwright.models.sparse.base import SparseVector

        h = self._h
        name = h.tables.name
        version = (h.version(), self._writes, name)
        index = self._index
        if index is not None and self._at == version:
            return index
        if index is None or self._of != name:
            index = SparseIndex()
        table = sparse_table(name)
        exists = h.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        if exists.fetchone() is None:
            index = SparseIndex()
            self._index, self._at, self._of = index, version, name
            return index
        join = f"FROM {table} s JOIN {h.tables.chunks} c ON c.chunk_id = s.chunk_id"
        have = {r[0] for r in h.conn.execute(f"SELECT s.chunk_id {join}")}
        current = set(index.ids())
        index.remove(current - have)
        new = sorted(have - current)
        for start in range(0, len(new), 500):
            part = json.dumps(new[start : start + 500])
            rows = h.conn.execute(
                f"SELECT chunk_id, terms, weights FROM {table} WHERE chunk_id IN (SELECT value FROM json_each(?))",
                (part,),
            ).fetchall()
            index.upsert(
                (r[0], SparseVector(np.frombuffer(r[1], dtype="<i4"), np.frombuffer(r[2], dtype="<f4"))) for r in rows
            )
        self._index, self._at, self._of = index, version, name
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
        with self._h.read_snapshot():  # the index and the allowed ids from one committed state
            index = self.index()
            allowed = self._rows.allowed_ids(identity, metadata_filter)
        hits = index.search(query, k, allowed=allowed, min_score=min_score)
        # the chunk lookup applies the security filter again: a chunk may have changed since the snapshot.
        chunks = {c.id: c for c in self._chunks.get_chunks([cid for cid, _ in hits], identity)}
        return [Hit(chunks[cid], score) for cid, score in hits if cid in chunks]
