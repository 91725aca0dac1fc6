"""Dense search over a SQLite store (a part of :class:`~ragwright.stores.sqlite.SqliteStore`).

Scoring runs on a dense index derived from the file, re-synced when the file changed: below the ANN
threshold a float32 matrix of the vectors; past it the HNSW graph alone, the candidates' vectors read
back from the file to score them (see :mod:`ragwright.index.ann`). The security and metadata filters
are applied *before* top-k through the eligible positions (:mod:`ragwright.stores.sqlite.rows`).

Other processes write the file while this one searches (WAL: a reader never waits for a writer). So
that no search mixes two versions of the file, everything a search derives from it — the rowids and
their tags, the dense index's rows, the eligible positions — is read in one read transaction
(:class:`~ragwright.stores.sqlite.transaction.ReadSnapshot`), labelled with the ``PRAGMA data_version``
read inside it. The chosen rows are read back afterwards, outside it: a row deleted meanwhile drops
out, a rowid reused by another chunk is told by its chunk id's crc32, and the search is retried when
the file changed and something dropped out.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import TYPE_CHECKING, Any

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit
from ragwright.stores.sqlite.dense_rows import reusing_reader
from ragwright.stores.sqlite.hits import RowHit
from ragwright.stores.sqlite.schema import CHUNK_COLUMNS
from ragwright.stores.sqlite.sql_filters import compile_security

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.index.ann import AnnParams, DenseIndex, VectorReader
    from ragwright.stores.sqlite.handle import SqliteHandle
    from ragwright.stores.sqlite.rows import SqliteRows

__all__ = ["SqliteDense"]

log = logging.getLogger(__name__)


class SqliteDense:
    """The dense index of the current collection and :meth:`search_dense` over it."""

    def __init__(self, handle: SqliteHandle, rows: SqliteRows, ann: AnnParams | None) -> None:
        """*ann*: when the dense arm switches from exact search to the HNSW graph (default: 20k vectors)."""
        self._h, self._rows, self.ann = handle, rows, ann
        self._index: DenseIndex | None = None
        self._synced: int | None = None  # the rowids' generation the index reflects
        self._tags: npt.NDArray[np.uint32] | None = None  # the tags of the rows the matrix holds (dense_rows.py)

    def index(self) -> DenseIndex:
        """The exact/ANN index over the matrix (derived state; see :mod:`ragwright.index.ann`)."""
        if self._index is None:
            from ragwright.index.ann import DenseIndex

            self._index = DenseIndex(self.ann)
        return self._index

    def save(self) -> None:
        """Write the ANN graph's snapshot, when it changed since it was last written (at close)."""
        if self._index is not None:
            self._index.save()

    def _load(self) -> tuple[npt.NDArray[np.int64], DenseIndex]:
        """The rowids and the dense index brought up to date with them (call inside a read snapshot, so
        the rows the index reads are the ones the rowids list)."""
        rowids = self._rows.load()
        index = self.index()
        if self._synced != self._rows.generation:
            self._sync()
            self._synced = self._rows.generation
        return rowids, index

    def _sync(self) -> None:
        """Bring the dense index up to date with the reloaded rowids (call under the lock). Below the ANN
        threshold it holds the float32 matrix; past it the graph follows incrementally, by (rowid, crc32 of
        chunk id): a reused rowid is noticed, only added rows are read. Its snapshot lives beside the store
        file, one per physical collection."""
        from pathlib import Path

        h, rows = self._h, self._rows
        assert rows.rowids is not None and rows.tags is not None
        index = self.index()
        model = h.embedding_model()
        dim = model[1] if model else 0
        path = str(h.path)
        index.snapshot = None if path in ("", ":memory:") else Path(f"{path}.{h.tables.name}.ann")
        tag = f"{h.tables.name}:{model[0] if model else ''}:{dim}"
        reader = self._vector_reader(h.tables.chunks, dim)
        previous, old_tags = index.view(), self._tags
        if (
            previous.matrix is not None
            and old_tags is not None
            and old_tags.size == previous.keys.size
            and index.tag == tag
            and previous.matrix.shape == (previous.keys.size, dim)
        ):  # rows the matrix already holds are copied, only the ones added since are read
            reader = reusing_reader(previous.keys, old_tags, previous.matrix, rows.rowids, rows.tags, reader)
        index.sync_rows(rows.rowids, rows.tags, reader, dim=dim, tag=tag)
        held = index.view()
        self._tags = rows.tags if held.keys.size == rows.rowids.size else None

    def _vector_reader(self, table: str, dim: int) -> VectorReader:
        """Reads stored vectors of *table* by rowid (in the order asked; rows gone meanwhile drop out)."""
        import numpy as np

        h = self._h

        def read(keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
            if keys.size == 0:
                return keys, np.zeros((0, dim), dtype=np.float32)
            lo, hi = int(keys[0]), int(keys[-1])
            with h.lock:
                if keys.size > 256 and 0 <= hi - lo < 2 * keys.size and bool(np.all(keys[1:] > keys[:-1])):
                    # a dense run of sorted rowids (a build or a full read): one range scan of the table
                    rows = h.conn.execute(
                        f"SELECT rowid, vector FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, hi)
                    ).fetchall()
                else:
                    rows = h.conn.execute(
                        f"SELECT rowid, vector FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                        (json.dumps(keys.tolist()),),
                    ).fetchall()
            got = dict(rows)
            found = [key for key in keys.tolist() if key in got]
            blob = b"".join([got[key] for key in found])
            return np.array(found, dtype=np.int64), np.frombuffer(blob, dtype=np.float32).reshape(len(found), dim)

        return read

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
            hits, complete = self._search_once(vector, k, identity, metadata_filter, min_score)
            if complete:
                break
        return hits

    def _search_once(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        identity: Identity,
        metadata_filter: Filter | None,
        min_score: float,
    ) -> tuple[list[Hit], bool]:
        import zlib

        import numpy as np

        h = self._h
        # One read transaction: the rowids, the dense index's rows and the eligible positions all come from
        # one committed state of the file. The arrays are replaced on change, never mutated, so they stay
        # valid after the lock is released.
        with h.read_snapshot():
            positions = self._rows.eligible_positions(identity, metadata_filter)
            rowids, index = self._load()
            view = index.view()
            if view.keys.size != rowids.size:  # the index lost rows it was given: resync it in this snapshot
                log.warning("derived_state_stale: %s: dense index resynced", h.path)
                self._sync()
                view = index.view()
                if view.keys.size != rowids.size:
                    raise RuntimeError("the dense index does not hold the rows of its read snapshot")
            tags, table, version = self._rows.tags, h.tables.chunks, self._rows.version
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
            if table == h.tables.chunks:
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
        with h.lock:
            try:  # the snapshot's table: rowids belong to it, even if the alias moved meanwhile
                rows = h.conn.execute(
                    f"SELECT rowid, {CHUNK_COLUMNS} FROM {table} WHERE rowid IN (SELECT value FROM json_each(?)) "
                    f"AND {security}",
                    params,
                ).fetchall()
            except sqlite3.OperationalError:
                if table == h.tables.chunks:
                    raise
                return [], False  # the collection was dropped after the alias moved: search the live one
            changed = h.version() != version
        # A rowid another chunk took meanwhile (its row replaced) is not the chunk that was scored.
        # The rows are decoded when a hit's chunk is read (fusion ranks them by id: hits.py).
        by_rowid = {r[0]: r[1:] for r in rows if zlib.crc32(r[1].encode()) == crcs[r[0]]}
        hits: list[Hit] = [
            RowHit(by_rowid[rid], score) for rid, score in zip(chosen, scores, strict=True) if rid in by_rowid
        ]
        return hits, len(hits) == len(chosen) or not changed
