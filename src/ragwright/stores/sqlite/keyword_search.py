"""Keyword (BM25) search over a SQLite store (a part of :class:`~ragwright.stores.sqlite.SqliteStore`).

The BM25 index over every chunk's embedded text is derived state: kept in step with this object's own
writes (:meth:`SqliteKeyword.apply`), caught up from the change log after other processes' writes, kept
in a snapshot beside a large store (the functions of :mod:`ragwright.stores.sqlite.keyword`), rebuilt
only when the log does not reach back. The security and metadata filters are applied before top-k
through the allowed ids (:mod:`ragwright.stores.sqlite.rows`), read in the same read snapshot as the
index's catch-up.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit
from ragwright.stores.common import keyword_entry
from ragwright.stores.sqlite import keyword
from ragwright.stores.sqlite.hits import RowHit

if TYPE_CHECKING:
    from ragwright.index import Analyzer, Bm25Index
    from ragwright.index.bm25 import KeywordQuery
    from ragwright.stores.sqlite.chunks import ChunkWrite, SqliteChunks
    from ragwright.stores.sqlite.handle import SqliteHandle
    from ragwright.stores.sqlite.rows import SqliteRows

__all__ = ["SqliteKeyword"]

log = logging.getLogger(__name__)


class SqliteKeyword:
    """The BM25 index of the current collection and :meth:`search_keyword` over it."""

    def __init__(self, handle: SqliteHandle, rows: SqliteRows, chunks: SqliteChunks, analyzer: Analyzer) -> None:
        """*chunks*: the chunk table, whose lookup applies the security filter again to what was found."""
        self._h, self._rows, self._chunks, self.analyzer = handle, rows, chunks, analyzer
        self._bm25: Bm25Index | None = None
        self._checked: tuple[int, int] | None = None  # the file version the index was last checked against
        self._at: int | None = None  # the index version it reflects (the change log catches it up from there)
        self._saved: int | None = None  # the index version of the snapshot on disk it started from, if any
        handle.on_move(self._forget)

    def _forget(self) -> None:
        self._bm25 = None

    def index(self) -> Bm25Index:
        """The BM25 index over every chunk's embedded text (call under the lock), up to date with the file:
        kept in step with this object's own writes, caught up from the change log after other processes'
        (or loaded from its snapshot and caught up), rebuilt only when the log does not reach back."""
        h = self._h
        with h.read_snapshot():  # one read transaction: the version, the log and the rows agree
            version = h.version()
            index = self._bm25
            if index is not None and self._checked == version:
                return index
            table = h.tables.chunks
            current = int(h.meta("index_version") or 0)
            if (
                index is None
                or self._at is None
                or not keyword.catch_up(h.conn, index, table, h.tables.name, self._at, current)
            ):
                index = self._open(current)
            self._bm25, self._checked, self._at = index, version, current
            return index

    def _open(self, current: int) -> Bm25Index:
        """The snapshot's index caught up to *current*, or a new one built from the rows (and saved when
        the store is large); inside the read transaction of :meth:`index`."""
        h = self._h
        table = h.tables.chunks
        path = keyword.snapshot_path(h.path, h.tables.name)
        (count,) = h.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        loaded = keyword.load_snapshot(path, self.analyzer, table)
        if loaded is not None:
            index, at = loaded
            if keyword.catch_up(h.conn, index, table, h.tables.name, at, current) and len(index) == count:
                self._saved = at
                return index
            log.info("keyword_snapshot_stale: %s is past the change log (rebuilding)", path)
        index = keyword.build_index(h.conn, table, self.analyzer)
        self._saved = None
        if len(index) >= keyword.SNAPSHOT_MIN_CHUNKS and keyword.save_snapshot(index, path, current, table):
            self._saved = current
        return index

    def save_snapshot(self) -> bool:
        """Write the BM25 snapshot when a large index has moved on far enough (or at all, when no snapshot
        matches it) since it was loaded or saved (call under the lock, before closing); True if written."""
        h = self._h
        index, at, saved = self._bm25, self._at, self._saved
        if index is None or at is None or len(index) < keyword.SNAPSHOT_MIN_CHUNKS or at == saved:
            return False
        if saved is not None and at - saved < keyword.SAVE_AFTER_CHANGES:
            return False  # the next open catches up from the log: cheaper than writing the snapshot now
        written = keyword.save_snapshot(index, keyword.snapshot_path(h.path, h.tables.name), at, h.tables.chunks)
        if written:
            self._saved = at
        return written

    # -- following this object's writes ----------------------------------------------------------------
    def in_sync(self) -> bool:
        """Whether the index is up to date with the file (call under the lock, before a write)."""
        return self._bm25 is not None and self._checked == self._h.version()

    def apply(self, in_sync: bool, write: ChunkWrite) -> None:
        """Apply a committed *write* to the index when the index was up to date just before it (*in_sync*);
        otherwise the next search catches up from the change log. The write's label is the file version it
        committed: not the version read now, which may count another process's commit since, one the index
        has not seen."""
        if not in_sync or self._bm25 is None or self._at != write.version - 1:
            return
        self._bm25.remove(write.removed)
        self._bm25.upsert([keyword_entry(c) for c in write.upserted])
        self._at = write.version
        self._checked = write.label

    # -- search ------------------------------------------------------------------------------------------
    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        h = self._h
        out: list[Hit] = []
        for _ in range(3):  # retried when a concurrent write or alias switch replaced chunks it found
            with h.read_snapshot():  # the index and the allowed ids from one committed state
                index = self.index()
                allowed = self._rows.allowed_ids(identity, metadata_filter)
                version = self._checked
            hits = index.search(query, k, allowed=allowed, min_score=min_score)
            # the chunk lookup applies the security filter again: a chunk may have changed since the snapshot.
            # Its rows are decoded when a hit's chunk is read (fusion ranks them by id: hits.py).
            rows = {r[0]: r for r in self._chunks.chunk_rows([cid for cid, _ in hits], identity)}
            out = [RowHit(rows[cid], score) for cid, score in hits if cid in rows]
            with h.lock:
                if len(out) == len(hits) or h.version() == version:
                    break
        return out
