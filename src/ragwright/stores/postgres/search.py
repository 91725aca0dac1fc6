"""Dense and keyword search over the PostgreSQL store (a part of :class:`PostgresStore`).

Dense: one SQL statement orders the chunks by cosine distance (``<=>``) with the security and
metadata filters in its WHERE clause. With an HNSW index pgvector 0.8's *iterative* index scan
(``hnsw.iterative_scan = relaxed_order``) keeps walking the graph until ``k`` rows pass the filter, so
the filter applies inside the ANN search — never as a mask on a fixed top-k. When the filter leaves
few chunks (at most ``exact_threshold``) the ORDER BY is written so no index can serve it and those
chunks are scored exactly, which is complete and faster than walking the graph for rare matches.
The HNSW settings are session settings of the pool's connections: a query is one round trip.

Keyword: the BM25 index of :mod:`.keyword`, restricted to the chunk ids the same SQL filter admits.
Results are re-read through ``get_chunks``, which applies the security filter once more.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import ChunkLookup, Hit
from ragwright.stores.postgres.schema import CHUNK_COLUMNS, chunk_from_row
from ragwright.stores.postgres.sql_filters import compile_filter, compile_security
from ragwright.stores.postgres.state import PostgresState

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import psycopg

    from ragwright.index.bm25 import KeywordQuery

_CACHE_LIMIT = 256
_PLAN_TTL = 30.0


class PostgresSearch:
    """Search over the ``chunks`` table; *lookup* re-reads the keyword arm's hits under the security filter."""

    def __init__(self, state: PostgresState, lookup: ChunkLookup) -> None:
        self._state, self._lookup = state, lookup

    @staticmethod
    def _where(identity: Identity, metadata_filter: Filter | None, params: list[Any]) -> str:
        return (
            compile_security(identity, "tenant", "acl", params)
            + " AND "
            + compile_filter(metadata_filter, "metadata", params)
        )

    @staticmethod
    def _key(identity: Identity, metadata_filter: Filter | None) -> str:
        return identity.acl_signature() + "|" + repr(metadata_filter)

    # -- dense -------------------------------------------------------------------------------------
    def search_dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        if k <= 0:
            return []
        rows = self._dense_rows(vector, k, identity, metadata_filter, explain=False)
        # relaxed_order may return rows slightly out of order: sort here (ties by chunk id).
        scored = sorted(((1.0 - float(r[14]), r) for r in rows), key=lambda p: (-p[0], p[1][0]))[:k]
        return [Hit(chunk_from_row(r), score) for score, r in scored if score >= min_score]

    def explain_dense(
        self, vector: npt.NDArray[np.float32], k: int, *, identity: Identity, metadata_filter: Filter | None = None
    ) -> str:
        """The server's plan for this dense query (``EXPLAIN``): shows whether the HNSW index serves it."""
        return "\n".join(str(r[0]) for r in self._dense_rows(vector, k, identity, metadata_filter, explain=True))

    def _dense_rows(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        identity: Identity,
        metadata_filter: Filter | None,
        *,
        explain: bool,
    ) -> list[Any]:
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        where_params: list[Any] = []
        where = self._where(identity, metadata_filter, where_params)
        options = self._state.options
        with self._state.conn() as conn:
            exact = self._exact(conn, where, where_params, self._key(identity, metadata_filter))
            # "+ 0" makes the ORDER BY an expression no index serves: an exact scan of the filtered rows.
            order = "(vector <=> %s) + 0" if exact else "vector <=> %s"
            sql = (
                f"{'EXPLAIN ' if explain else ''}SELECT {CHUNK_COLUMNS}, vector <=> %s AS distance FROM chunks "
                f"WHERE {where} ORDER BY {order} LIMIT %s"
            )
            # Through the index, fetch more than k (within the candidate list, so no extra graph
            # work) and keep the best k: a relaxed iterative scan under a selective filter returns
            # matches only roughly in order (at 100k vectors and a 1 % filter, recall@10 0.83 -> 1.0).
            fetch = k if exact else max(k, min(4 * k, options.ef_search))
            params = [query, *where_params, query, fetch]
            if k <= options.ef_search:  # the session's settings apply (one round trip)
                return conn.execute(sql, params).fetchall()
            with conn.transaction():  # a deeper k needs a longer candidate list
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(1000, k)),))
                return conn.execute(sql, params).fetchall()

    def _exact(self, conn: psycopg.Connection[Any], where: str, params: list[Any], key: str) -> bool:
        """Whether the filter leaves at most ``exact_threshold`` chunks.

        Decided by a bounded count, remembered until this process writes or ``_PLAN_TTL`` seconds pass
        (other processes' writes): a stale decision only changes the plan, never the filter.
        """
        state = self._state
        limit = state.options.exact_threshold
        if limit <= 0:
            return False
        now = time.monotonic()
        cached = state.dense_plan.get(key)
        if cached is not None and cached[0] == state.writes and now - cached[1] < _PLAN_TTL:
            return cached[2]
        counted = conn.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE {where} LIMIT %s) AS eligible", [*params, limit + 1]
        ).fetchone()
        decided = bool(counted is not None and counted[0] <= limit)
        if len(state.dense_plan) > _CACHE_LIMIT:
            state.dense_plan.clear()
        state.dense_plan[key] = (state.writes, now, decided)
        return decided

    # -- keyword -----------------------------------------------------------------------------------
    def keyword_analyzer(self) -> str:
        return self._state.keyword.analyzer.name

    def search_keyword(
        self,
        query: KeywordQuery,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        state = self._state
        with state.conn() as conn:
            index, version = state.keyword.sync(conn, state.store_id)
            allowed = self._allowed_ids(conn, identity, metadata_filter, version)
        hits = index.search(query, k, allowed=allowed, min_score=min_score)
        # get_chunks applies the security filter again: a chunk may have changed since the snapshot.
        chunks = {c.id: c for c in self._lookup.get_chunks([cid for cid, _ in hits], identity)}
        return [Hit(chunks[cid], score) for cid, score in hits if cid in chunks]

    def _allowed_ids(
        self, conn: psycopg.Connection[Any], identity: Identity, metadata_filter: Filter | None, version: int
    ) -> frozenset[str] | None:
        """The chunk ids the keyword arm may return (``None``: every chunk), cached per version."""
        cache_key = (version, self._key(identity, metadata_filter))
        cache = self._state.allowed
        if cache_key in cache:
            return cache[cache_key]
        params: list[Any] = []
        where = self._where(identity, metadata_filter, params)
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            ids = frozenset(r[0] for r in _rows(conn, f"SELECT chunk_id FROM chunks WHERE {where}", params))
            total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        allowed = None if total is not None and len(ids) == total[0] else ids
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        cache[cache_key] = allowed
        return allowed


def _rows(conn: psycopg.Connection[Any], query: str, params: list[Any]) -> Iterator[tuple[Any, ...]]:
    yield from conn.execute(query, params)
