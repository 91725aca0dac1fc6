"""The PostgreSQL tag table (see :mod:`ragwright.stores.tags`): two tables in the store's schema.

``tag_vectors`` holds one vector per (model, key, value) as little-endian float32 bytes;
``tag_documents`` links documents to their tags (both created by migration 2 of
:mod:`ragwright.stores.postgres.schema`). Visibility joins
the registry with the store's own security filter (tenant equal, ACL overlapping the caller's visible
groups, bound parameters), and only indexed documents count, so deletions and ACL changes apply to
tags at once, with nothing to re-embed. Removing a document also drops its links
(:meth:`PostgresStore.remove_document`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from ragwright.model.identity import Identity
from ragwright.stores.postgres.schema import pg_text
from ragwright.stores.postgres.sql_filters import compile_security
from ragwright.stores.tags import TagPair

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import psycopg

    Vector = npt.NDArray[np.float32]

_VISIBLE: Final = (
    "SELECT v.tag_key, v.tag_value, v.vector FROM tag_vectors v WHERE v.model = %s AND EXISTS ("
    "SELECT 1 FROM tag_documents t JOIN documents d ON d.document_id = t.document_id "
    "WHERE t.tag_key = v.tag_key AND t.tag_value = v.tag_value AND d.status = 'indexed' AND {security}) "
    'ORDER BY v.tag_key COLLATE "C", v.tag_value COLLATE "C"'
)


class PostgresTagTable:
    """Tag vectors and links in the store's schema; every method is one short transaction."""

    def __init__(self, connection: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]) -> None:
        """*connection* lends a pooled connection of the store (errors surface as ``StoreError``)."""
        self._connection = connection

    def embedded(self, model: str) -> set[TagPair]:
        with self._connection() as conn:
            rows = conn.execute("SELECT tag_key, tag_value FROM tag_vectors WHERE model = %s", (model,)).fetchall()
        return {(str(k), str(v)) for k, v in rows}

    def add_vectors(self, model: str, entries: Sequence[tuple[str, str, Vector]]) -> None:
        import numpy as np

        rows = [(model, pg_text(k), pg_text(v), np.asarray(vec, dtype="<f4").tobytes()) for k, v, vec in entries]
        if not rows:
            return
        with self._connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO tag_vectors(model, tag_key, tag_value, vector) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (model, tag_key, tag_value) DO UPDATE SET vector = EXCLUDED.vector",
                rows,
            )

    def set_document_tags(self, document_id: str, tags: Sequence[TagPair]) -> None:
        rows = list(dict.fromkeys((document_id, pg_text(k), pg_text(v)) for k, v in tags))
        with self._connection() as conn, conn.transaction():
            conn.execute("DELETE FROM tag_documents WHERE document_id = %s", (document_id,))
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO tag_documents(document_id, tag_key, tag_value) VALUES (%s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        rows,
                    )

    def visible(self, model: str, identity: Identity) -> list[tuple[str, str, Vector]]:
        import numpy as np

        params: list[Any] = [model]
        security = compile_security(identity, "d.tenant", "d.acl", params)
        with self._connection() as conn:
            rows = conn.execute(_VISIBLE.format(security=security), params).fetchall()
        return [(str(k), str(v), np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)) for k, v, blob in rows]
