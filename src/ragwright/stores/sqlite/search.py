"""Dense and keyword search over an SQLite store (a mixin of :class:`SqliteStore`).

Scoring runs on in-memory derived state, reloaded when the file changed: the chunks' rowids, the dense
index (a float32 matrix of the vectors below the ANN threshold; past it the HNSW graph alone, the
candidates' vectors read back from the file to score them, see :mod:`ragwright.index.ann`) and a BM25
index over the chunks' embedded text (kept in a snapshot beside large stores, see
:mod:`ragwright.stores.sqlite.keyword`). The security and metadata filters are compiled to SQL and
applied *before* top-k in both arms; the eligible sets are cached per filter until the next write.

Other processes write the file while this one searches (WAL: a reader never waits for a writer). So
that no search mixes two versions of the file, everything a search derives from it — the rowids and
their tags, the dense index's rows, the eligible positions and allowed ids, the BM25 catch-up — is
read in one read transaction (:class:`~ragwright.stores.sqlite.transaction.ReadSnapshot`), labelled
with the ``PRAGMA data_version`` read inside it. The chosen rows are read back afterwards, outside it:
a row deleted meanwhile drops out, a rowid reused by another chunk is told by its chunk id's crc32,
and the search is retried when the file changed and something dropped out.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit
from ragwright.stores.sqlite.dense_rows import reusing_reader
from ragwright.stores.sqlite.schema import CHUNK_COLUMNS, Tables, chunk_from_row
from ragwright.stores.sqlite.sql_filters import compile_filter, compile_security

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt

    from ragwright.index import Analyzer, Bm25Index
    from ragwright.index.ann import DenseIndex, VectorReader
    from ragwright.index.bm25 import KeywordQuery
    from ragwright.stores.sqlite.transaction import ReadSnapshot


class SqliteSearch:
    """Search over the ``chunks`` table; the host class provides the connection, lock and state."""

    path: Path
    _conn: sqlite3.Connection
    _lock: threading.RLock
    _analyzer: Analyzer
    _rowids: npt.NDArray[np.int64] | None  # every chunk's rowid, sorted (positions index it)
    _tags: npt.NDArray[np.uint32] | None  # crc32 of each rowid's chunk id (a reused rowid is noticed)
    _matrix_version: tuple[int, int] | None  # the file version _rowids reflect
    _dense_version: tuple[int, int] | None  # the file version the dense index reflects
    _dense_tags: npt.NDArray[np.uint32] | None  # the tags of the rows the dense matrix holds (dense_rows.py)
    _eligible_cache: dict[str, npt.NDArray[np.intp]]
    _allowed_cache: dict[str, frozenset[str] | None]
    _bm25: Bm25Index | None
    _bm25_version: tuple[int, int] | None  # the file version _bm25 was last checked against
    _bm25_at: int | None  # the index version _bm25 reflects (the change log catches it up from there)
    _bm25_saved: int | None  # the index version of the BM25 snapshot on disk it started from, if any
    _t: Tables  # the physical collection's table names (collections.py)

    def _version(self) -> tuple[int, int]:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _read_snapshot(self) -> ReadSnapshot:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    @property
    def embedding_model(self) -> tuple[str, int] | None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    # -- dense search ----------------------------------------------------------------------------------
    def _load_rowids(self) -> npt.NDArray[np.int64]:
        """Every chunk's rowid (sorted), reloaded when the file changed (ours or another process). Call
        inside a read snapshot. Read from the chunk-id index: the rows themselves (vectors, texts) are not
        read."""
        import zlib

        import numpy as np

        version = self._version()
        if self._rowids is None or version != self._matrix_version:
            rows = self._conn.execute(f"SELECT rowid, chunk_id FROM {self._t.chunks}").fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            order = np.argsort(rowids, kind="stable")
            tags = np.fromiter((zlib.crc32(r[1].encode()) for r in rows), dtype=np.uint32, count=len(rows))
            del rows
            self._rowids, self._tags = rowids[order], tags[order]
            self._matrix_version, self._dense_version = version, None
            self._eligible_cache.clear()
            self._allowed_cache.clear()
        return self._rowids

    def _load_dense(self) -> tuple[npt.NDArray[np.int64], DenseIndex]:
        """The rowids and the dense index brought up to date with them (call inside a read snapshot, so
        the rows the index reads are the ones the rowids list)."""
        rowids = self._load_rowids()
        index = self._dense_index()
        if self._dense_version != self._matrix_version:
            self._sync_dense()
            self._dense_version = self._matrix_version
        return rowids, index

    def _dense_index(self) -> DenseIndex:
        """The exact/ANN index over the matrix (derived state; see :mod:`ragwright.index.ann`)."""
        index: DenseIndex | None = getattr(self, "_dense", None)
        if index is None:
            from ragwright.index.ann import DenseIndex

            index = self._dense = DenseIndex(getattr(self, "_ann_params", None))
        return index

    def _sync_dense(self) -> None:
        """Bring the dense index up to date with the reloaded rowids (call under the lock). Below the ANN
        threshold it holds the float32 matrix; past it the graph follows incrementally, by (rowid, crc32 of
        chunk id): a reused rowid is noticed, only added rows are read. Its snapshot lives beside the store
        file, one per physical collection."""
        from pathlib import Path

        assert self._rowids is not None and self._tags is not None
        index = self._dense_index()
        model = self.embedding_model
        dim = model[1] if model else 0
        path = str(getattr(self, "path", ":memory:"))
        index.snapshot = None if path in ("", ":memory:") else Path(f"{path}.{self._t.name}.ann")
        tag = f"{self._t.name}:{model[0] if model else ''}:{dim}"
        reader = self._vector_reader(self._t.chunks, dim)
        previous, old_tags = index.view(), getattr(self, "_dense_tags", None)
        if (
            previous.matrix is not None
            and old_tags is not None
            and old_tags.size == previous.keys.size
            and index.tag == tag
            and previous.matrix.shape == (previous.keys.size, dim)
        ):  # rows the matrix already holds are copied, only the ones added since are read
            reader = reusing_reader(previous.keys, old_tags, previous.matrix, self._rowids, self._tags, reader)
        index.sync_rows(self._rowids, self._tags, reader, dim=dim, tag=tag)
        held = index.view()
        self._dense_tags = self._tags if held.keys.size == self._rowids.size else None

    def _vector_reader(self, table: str, dim: int) -> VectorReader:
        """Reads stored vectors of *table* by rowid (in the order asked; rows gone meanwhile drop out)."""
        import numpy as np

        def read(keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
            if keys.size == 0:
                return keys, np.zeros((0, dim), dtype=np.float32)
            lo, hi = int(keys[0]), int(keys[-1])
            with self._lock:
                if keys.size > 256 and 0 <= hi - lo < 2 * keys.size and bool(np.all(keys[1:] > keys[:-1])):
                    # a dense run of sorted rowids (a build or a full read): one range scan of the table
                    rows = self._conn.execute(
                        f"SELECT rowid, vector FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, hi)
                    ).fetchall()
                else:
                    rows = self._conn.execute(
                        f"SELECT rowid, vector FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                        (json.dumps(keys.tolist()),),
                    ).fetchall()
            got = dict(rows)
            found = [key for key in keys.tolist() if key in got]
            blob = b"".join([got[key] for key in found])
            return np.array(found, dtype=np.int64), np.frombuffer(blob, dtype=np.float32).reshape(len(found), dim)

        return read

    def _eligible_positions(
        self, identity: Identity, metadata_filter: Filter | None, *, recheck: bool = True
    ) -> npt.NDArray[np.intp]:
        """Matrix positions of the chunks *identity* may see that match the filter (call inside a read
        snapshot: the positions index the rowids loaded in it).

        The set is cached per (identity signature, compiled filter) until the next write, so repeated
        queries — unfiltered or with the same metadata filter — do not scan the table.
        """
        import numpy as np

        with self._read_snapshot():
            rowids = self._load_rowids()
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
            if positions.size and (positions[-1] >= rowids.size or not np.array_equal(rowids[positions], eligible)):
                # Rowids that do not list every row of this snapshot (labelled with a version they do not
                # reflect): never index past them or mix them up — reload them here, in this snapshot.
                if not recheck:
                    raise RuntimeError("the rowids of a read snapshot do not cover its rows")
                log.warning("derived_state_stale: %s: rowids reloaded", self.path)
                self._rowids = None
                return self._eligible_positions(identity, metadata_filter, recheck=False)
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
        import zlib

        import numpy as np

        # One read transaction: the rowids, the dense index's rows and the eligible positions all come from
        # one committed state of the file. The arrays are replaced on change, never mutated, so they stay
        # valid after the lock is released.
        with self._read_snapshot():
            positions = self._eligible_positions(identity, metadata_filter)
            rowids, index = self._load_dense()
            view = index.view()
            if view.keys.size != rowids.size:  # the index lost rows it was given: resync it in this snapshot
                log.warning("derived_state_stale: %s: dense index resynced", self.path)
                self._sync_dense()
                view = index.view()
                if view.keys.size != rowids.size:
                    raise RuntimeError("the dense index does not hold the rows of its read snapshot")
            tags, table, version = self._tags, self._t.chunks, self._matrix_version
        assert tags is not None
        if positions.size == 0 or rowids.size == 0:
            return [], True
        # Exact below the ANN threshold or for a small eligible subset; HNSW with oversampling otherwise.
        try:  # past the threshold the candidates' vectors are read from the snapshot's table
            ranked, top_scores = index.search(
                np.asarray(vector, dtype=np.float32),
                k,
                eligible=None if positions.size == rowids.size else positions,
                min_score=min_score,
                view=view,
            )
        except sqlite3.OperationalError:
            if table == self._t.chunks:
                raise
            return [], False  # the collection was dropped after the alias moved: search the live one
        if ranked.size == 0:
            return [], True
        chosen = rowids[ranked].tolist()
        crcs = dict(zip(chosen, tags[ranked].tolist(), strict=True))
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
        # A rowid another chunk took meanwhile (its row replaced) is not the chunk that was scored.
        by_rowid = {r[0]: chunk_from_row(r[1:]) for r in rows if zlib.crc32(r[1].encode()) == crcs[r[0]]}
        hits = [Hit(by_rowid[rid], score) for rid, score in zip(chosen, scores, strict=True) if rid in by_rowid]
        return hits, len(hits) == len(chosen) or not changed

    # -- keyword search (BM25, derived state rebuilt from the stored chunks) -----------------------------
    @property
    def keyword_analyzer(self) -> str:
        return self._analyzer.name

    def _keyword_index(self) -> Bm25Index:
        """The BM25 index over every chunk's embedded text (call under the lock), up to date with the file:
        kept in step with this object's own writes, caught up from the change log after other processes'
        (or loaded from its snapshot and caught up), rebuilt only when the log does not reach back."""
        from ragwright.stores.sqlite import keyword

        with self._read_snapshot():  # one read transaction: the version, the log and the rows agree
            version = self._version()
            index = self._bm25
            if index is not None and self._bm25_version == version:
                return index
            table = self._t.chunks
            current = int(self._meta("index_version") or 0)
            if (
                index is None
                or self._bm25_at is None
                or not keyword.catch_up(self._conn, index, table, self._t.name, self._bm25_at, current)
            ):
                index = self._open_keyword_index(current)
            self._bm25, self._bm25_version, self._bm25_at = index, version, current
            return index

    def _open_keyword_index(self, current: int) -> Bm25Index:
        """The snapshot's index caught up to *current*, or a new one built from the rows (and saved when
        the store is large); inside the read transaction of :meth:`_keyword_index`."""
        from ragwright.stores.sqlite import keyword

        table = self._t.chunks
        path = keyword.snapshot_path(self.path, self._t.name)
        (count,) = self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        loaded = keyword.load_snapshot(path, self._analyzer, table)
        if loaded is not None:
            index, at = loaded
            if keyword.catch_up(self._conn, index, table, self._t.name, at, current) and len(index) == count:
                self._bm25_saved = at
                return index
            log.info("keyword_snapshot_stale: %s is past the change log (rebuilding)", path)
        index = keyword.build_index(self._conn, table, self._analyzer)
        self._bm25_saved = None
        if len(index) >= keyword.SNAPSHOT_MIN_CHUNKS and keyword.save_snapshot(index, path, current, table):
            self._bm25_saved = current
        return index

    def _save_keyword_snapshot(self) -> bool:
        """Write the BM25 snapshot when a large index has moved on far enough (or at all, when no snapshot
        matches it) since it was loaded or saved (call under the lock, before closing); True if written."""
        from ragwright.stores.sqlite import keyword

        index, at, saved = self._bm25, self._bm25_at, self._bm25_saved
        if index is None or at is None or len(index) < keyword.SNAPSHOT_MIN_CHUNKS or at == saved:
            return False
        if saved is not None and at - saved < keyword.SAVE_AFTER_CHANGES:
            return False  # the next open catches up from the log: cheaper than writing the snapshot now
        written = keyword.save_snapshot(index, keyword.snapshot_path(self.path, self._t.name), at, self._t.chunks)
        if written:
            self._bm25_saved = at
        return written

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
            with self._read_snapshot():  # the index and the allowed ids from one committed state
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
        """The chunk ids the keyword arm may return (``None``: every chunk). Call inside a read snapshot.

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
        with self._read_snapshot():
            positions = self._eligible_positions(identity, metadata_filter)  # also drops stale cached sets
            if key in self._allowed_cache:
                return self._allowed_cache[key]
            rowids = self._load_rowids()  # the ones positions index (same snapshot, same version)
            allowed: frozenset[str] | None = None
            if positions.size != rowids.size:
                allowed = frozenset(
                    r[0]
                    for r in self._conn.execute(
                        f"SELECT chunk_id FROM {self._t.chunks} WHERE rowid IN (SELECT value FROM json_each(?))",
                        (json.dumps(rowids[positions].tolist()),),
                    )
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
