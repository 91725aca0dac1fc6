"""Dense and keyword search over an SQLite store (a mixin of :class:`SqliteStore`).

Scoring runs on in-memory derived state — a matrix of the vectors and a BM25 index over the chunks'
embedded text — reloaded when the file changed. The security and metadata filters are compiled to
SQL and applied *before* top-k in both arms; the security-only eligible set is cached per identity
until the next write.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit
from ragwright.stores.sqlite.schema import CHUNK_COLUMNS, Tables, chunk_from_row
from ragwright.stores.sqlite.sql_filters import compile_filter, compile_security

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index import Analyzer, Bm25Index
    from ragwright.index.ann import DenseIndex
    from ragwright.index.bm25 import KeywordQuery


class SqliteSearch:
    """Search over the ``chunks`` table; the host class provides the connection, lock and state."""

    _conn: sqlite3.Connection
    _lock: threading.RLock
    _analyzer: Analyzer
    _matrix: npt.NDArray[np.float32] | None
    _rowids: npt.NDArray[np.int64] | None
    _matrix_version: tuple[int, int] | None
    _eligible_cache: dict[str, npt.NDArray[np.intp]]
    _allowed_cache: dict[str, frozenset[str] | None]
    _chunk_ids: list[str]
    _bm25: Bm25Index | None
    _bm25_version: tuple[int, int] | None
    _t: Tables  # the physical collection's table names (collections.py)

    def _version(self) -> tuple[int, int]:  # pragma: no cover - provided by the host
        raise NotImplementedError

    @property
    def embedding_model(self) -> tuple[str, int] | None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    # -- dense search ----------------------------------------------------------------------------------
    def _load_matrix(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Vectors and rowids of every chunk, reloaded when the file changed (ours or another process)."""
        import numpy as np

        version = self._version()
        if self._matrix is None or self._rowids is None or version != self._matrix_version:
            rows = self._conn.execute(f"SELECT rowid, vector, chunk_id FROM {self._t.chunks} ORDER BY rowid").fetchall()
            dim = self.embedding_model[1] if self.embedding_model else 0
            self._rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            self._chunk_ids = [r[2] for r in rows]
            blob = b"".join(r[1] for r in rows)
            self._matrix = (
                np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim)
                if rows
                else np.zeros((0, dim), dtype=np.float32)
            )
            self._matrix_version = version
            self._eligible_cache.clear()
            self._allowed_cache.clear()
            self._sync_dense(dim)
        return self._matrix, self._rowids

    def _dense_index(self) -> DenseIndex:
        """The exact/ANN index over the matrix (derived state; see :mod:`ragwright.index.ann`)."""
        index: DenseIndex | None = getattr(self, "_dense", None)
        if index is None:
            from ragwright.index.ann import DenseIndex

            index = self._dense = DenseIndex(getattr(self, "_ann_params", None))
        return index

    def _sync_dense(self, dim: int) -> None:
        """Bring the dense index up to date with the reloaded matrix (call under the lock). Past the
        threshold the graph follows incrementally, by (rowid, crc32 of chunk id): a reused rowid is noticed.
        Its snapshot lives beside the store file, one per physical collection."""
        import zlib
        from pathlib import Path

        import numpy as np

        assert self._rowids is not None and self._matrix is not None
        index = self._dense_index()
        threshold = index.params.threshold
        tags = None
        if threshold is not None and (index.graph_size or self._rowids.size >= threshold):
            tags = np.fromiter((zlib.crc32(c.encode()) for c in self._chunk_ids), np.uint32, len(self._chunk_ids))
        path = str(getattr(self, "path", ":memory:"))
        index.snapshot = None if path in ("", ":memory:") else Path(f"{path}.{self._t.name}.ann")
        model = self.embedding_model
        index.sync(self._rowids, self._matrix, tags, tag=f"{self._t.name}:{model[0] if model else ''}:{dim}")

    def _eligible_positions(self, identity: Identity, metadata_filter: Filter | None) -> npt.NDArray[np.intp]:
        """Matrix positions of the chunks *identity* may see that match the filter (call under the lock).

        The set is cached per (identity signature, compiled filter) until the next write, so repeated
        queries — unfiltered or with the same metadata filter — do not scan the table.
        """
        import numpy as np

        _, rowids = self._load_matrix()
        params: list[Any] = []
        where = (
            compile_security(identity, "tenant", "acl", params)
            + " AND "
            + compile_filter(metadata_filter, "metadata", params)
        )
        key = _filter_key(identity, where, params)
        if key in self._eligible_cache:
            return self._eligible_cache[key]
        eligible = np.fromiter(
            (r[0] for r in self._conn.execute(f"SELECT rowid FROM {self._t.chunks} WHERE {where}", params)),
            dtype=np.int64,
        )
        eligible.sort()
        positions = np.searchsorted(rowids, eligible)
        if len(self._eligible_cache) > _CACHED_SETS:
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
        """Retried (up to 3 times) when a concurrent write or alias switch replaced some of the rows
        the snapshot chose, so a document indexed before and after a write is never missed."""
        hits: list[Hit] = []
        for _ in range(3):
            hits, complete = self._search_dense_once(vector, k, identity, metadata_filter, min_score)
            if complete:
                break
        return hits

    def _search_dense_once(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        identity: Identity,
        metadata_filter: Filter | None,
        min_score: float,
    ) -> tuple[list[Hit], bool]:
        import numpy as np

        with self._lock:  # a consistent snapshot; the arrays are replaced on change, never mutated
            matrix, rowids = self._load_matrix()
            positions = self._eligible_positions(identity, metadata_filter)
            table, version = self._t.chunks, self._matrix_version
            view = self._dense_index().view()
        if positions.size == 0 or matrix.shape[0] == 0:
            return [], True
        # Exact below the ANN threshold or for a small eligible subset; HNSW with oversampling otherwise.
        ranked, top_scores = self._dense_index().search(
            np.asarray(vector, dtype=np.float32),
            k,
            eligible=None if positions.size == rowids.size else positions,
            min_score=min_score,
            view=view,
        )
        if ranked.size == 0:
            return [], True
        chosen = rowids[ranked].tolist()
        scores = top_scores.tolist()
        # The security filter is applied again here: a row may have changed since the snapshot above.
        params: list[Any] = [json.dumps(chosen)]
        security = compile_security(identity, "tenant", "acl", params)
        with self._lock:
            try:  # the snapshot's table: rowids belong to it, even if the alias moved meanwhile
                rows = self._conn.execute(
                    f"SELECT rowid, {CHUNK_COLUMNS} FROM {table} WHERE rowid IN (SELECT value FROM json_each(?)) "
                    f"AND {security}",
                    params,
                ).fetchall()
            except sqlite3.OperationalError:
                if table == self._t.chunks:
                    raise
                return [], False  # the collection was dropped after the alias moved: search the live one
            changed = self._version() != version
        by_rowid = {r[0]: chunk_from_row(r[1:]) for r in rows}
        hits = [Hit(by_rowid[rid], score) for rid, score in zip(chosen, scores, strict=True) if rid in by_rowid]
        return hits, len(hits) == len(chosen) or not changed

    # -- keyword search (BM25, derived state rebuilt from the stored chunks) -----------------------------
    @property
    def keyword_analyzer(self) -> str:
        return self._analyzer.name

    def _keyword_index(self) -> Bm25Index:
        """The BM25 index over every chunk's embedded text, rebuilt when the file changed."""
        from ragwright.index import Bm25Index

        self._load_matrix()
        if self._bm25 is None or self._bm25_version != self._matrix_version:
            index = Bm25Index(self._analyzer)
            rows = self._conn.execute(
                f"SELECT chunk_id, COALESCE(embed_text, text), json_extract(metadata, '$.language') "
                f"FROM {self._t.chunks}"
            ).fetchall()
            index.upsert((r[0], r[1], r[2] if isinstance(r[2], str) else None) for r in rows)
            self._bm25, self._bm25_version = index, self._matrix_version
        return self._bm25

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        out: list[Hit] = []
        for _ in range(3):  # retried when a concurrent write or alias switch replaced chunks it found
            with self._lock:
                index = self._keyword_index()
                allowed = self._allowed_ids(identity, metadata_filter)
                version = self._bm25_version
            hits = index.search(query, k, allowed=allowed, min_score=min_score)
            # get_chunks applies the security filter again: a chunk may have changed since the snapshot.
            chunks = {c.id: c for c in self.get_chunks([cid for cid, _ in hits], identity)}
            out = [Hit(chunks[cid], score) for cid, score in hits if cid in chunks]
            with self._lock:
                if len(out) == len(hits) or self._version() == version:
                    break
        return out

    def _allowed_ids(self, identity: Identity, metadata_filter: Filter | None) -> frozenset[str] | None:
        """The chunk ids the keyword arm may return (``None``: every chunk). Call under the lock.

        The set is cached per (identity signature, compiled filter) until the next write, like the
        eligible positions; when it covers every chunk the index runs unrestricted (no per-query id mapping).
        """
        params: list[Any] = []
        where = (
            compile_security(identity, "tenant", "acl", params)
            + " AND "
            + compile_filter(metadata_filter, "metadata", params)
        )
        key = _filter_key(identity, where, params)
        if key in self._allowed_cache:
            return self._allowed_cache[key]
        positions = self._eligible_positions(identity, metadata_filter)
        allowed = (
            None if positions.size == len(self._chunk_ids) else frozenset(self._chunk_ids[int(p)] for p in positions)
        )
        if len(self._allowed_cache) > _CACHED_SETS:
            self._allowed_cache.clear()
        self._allowed_cache[key] = allowed
        return allowed

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:  # pragma: no cover
        raise NotImplementedError  # provided by the host


#: Eligible sets kept per store until the next write (each up to one int64 per chunk).
_CACHED_SETS = 64


def _filter_key(identity: Identity, where: str, params: list[Any]) -> str:
    """Cache key of an eligible set: the caller's ACL signature and the compiled filter with its values."""
    return identity.acl_signature() + "\x1f" + where + "\x1f" + json.dumps(params, default=repr, sort_keys=True)
