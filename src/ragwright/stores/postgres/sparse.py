"""Learned sparse (SPLADE) vectors in pgvector's ``sparsevec`` (a part of :class:`PostgresStore`).

One ``sparse_vectors`` row per chunk, deleted with its chunk (``ON DELETE CASCADE``); a chunk id names
fixed content, so an upserted chunk keeps its vector. Search is one SQL statement: the negative inner
product (``<#>``) ordered under the same security and metadata filter as the other arms, so the filter
applies before top-k. It is an exact scan of the filtered rows (pgvector's HNSW takes sparse vectors
of at most 1,000 non-zero terms; SPLADE documents often carry more). The encoder that wrote the
vectors is remembered; vectors of another encoder are dropped when a new one writes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.stores.base import Hit
from ragwright.stores.postgres.schema import CHUNK_COLUMNS, chunk_from_row
from ragwright.stores.postgres.sql_filters import compile_filter, compile_security
from ragwright.stores.postgres.state import PostgresState, get_meta, set_meta

if TYPE_CHECKING:
    from ragwright.models.sparse.base import SparseVector

log = logging.getLogger(__name__)

#: pgvector's largest sparsevec dimension: every vector is declared with it, whatever the vocabulary.
SPARSE_DIM = 1_000_000_000


def _pg_sparse(vector: SparseVector) -> Any:
    from ragwright._deps import require

    pgvector = require("pgvector", "postgres", "sparse vectors in PostgreSQL")
    return pgvector.SparseVector(dict(zip(vector.indices.tolist(), vector.values.tolist(), strict=True)), SPARSE_DIM)


class PostgresSparse:
    """``put_sparse`` / ``missing_sparse`` / ``search_sparse`` over the store object's collection."""

    def __init__(self, state: PostgresState) -> None:
        self._state = state

    def sparse_encoder(self) -> str | None:
        """The encoder whose vectors this store holds (``None``: none yet)."""
        with self._state.conn() as conn:
            return get_meta(conn, "sparse_encoder")

    def put_sparse(self, vectors: Sequence[tuple[str, SparseVector]], *, encoder: str) -> None:
        """Store sparse vectors by chunk id (ids without a chunk are skipped)."""
        rows = [(cid, _pg_sparse(v)) for cid, v in vectors if len(v)]
        with self._state.conn() as conn, self._state.writing(conn):
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ragwright.sparse_encoder'))")
            known = get_meta(conn, "sparse_encoder")
            if known != encoder:
                if known is not None:
                    log.warning("sparse_encoder_changed: %s -> %s; stored sparse vectors dropped", known, encoder)
                conn.execute("DELETE FROM sparse_vectors")
                set_meta(conn, "sparse_encoder", encoder)
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sparse_vectors(chunk_id, vector) SELECT %s, %s WHERE EXISTS "
                    "(SELECT 1 FROM chunks WHERE chunk_id = %s) "
                    "ON CONFLICT (chunk_id) DO UPDATE SET vector = EXCLUDED.vector",
                    [(cid, vec, cid) for cid, vec in rows],
                )

    def missing_sparse(self, encoder: str) -> list[tuple[str, str]]:
        """``(chunk id, text)`` of every chunk without a vector from *encoder*."""
        with self._state.conn() as conn:
            if get_meta(conn, "sparse_encoder") != encoder:
                query = "SELECT chunk_id, COALESCE(embed_text, text) FROM chunks ORDER BY chunk_id"
            else:
                query = (
                    "SELECT c.chunk_id, COALESCE(c.embed_text, c.text) FROM chunks c "
                    "LEFT JOIN sparse_vectors s ON s.chunk_id = c.chunk_id WHERE s.chunk_id IS NULL ORDER BY 1"
                )
            return [(r[0], r[1]) for r in conn.execute(query)]

    def search_sparse(
        self,
        query: SparseVector,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        """The best *k* chunks by dot product with *query* (> 0 and >= *min_score*), filtered before the cut."""
        if k <= 0 or not len(query):
            return []
        params: list[Any] = []
        where = (
            compile_security(identity, "c.tenant", "c.acl", params)
            + " AND "
            + compile_filter(metadata_filter, "c.metadata", params)
        )
        columns = ", ".join(f"c.{c}" for c in CHUNK_COLUMNS.split(", "))
        vec = _pg_sparse(query)
        with self._state.conn() as conn:
            rows = conn.execute(
                f"SELECT {columns}, -(s.vector <#> %s) AS score FROM chunks c "
                f"JOIN sparse_vectors s ON s.chunk_id = c.chunk_id WHERE {where} "
                "AND (s.vector <#> %s) < 0 ORDER BY s.vector <#> %s, c.chunk_id LIMIT %s",
                [vec, *params, vec, vec, k],
            ).fetchall()
        return [Hit(chunk_from_row(r), float(r[14])) for r in rows if float(r[14]) >= min_score]
