"""The SQLite tag table (see :mod:`ragwright.stores.tags`): two tables beside the store's own.

``tag_vectors`` holds one vector per (model, key, value); ``tag_documents`` links documents to their
tags. Visibility joins the live collection's registry: only indexed documents the caller may see count,
so deletions and ACL changes apply to tags at once, with nothing to re-embed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from ragwright.model.identity import Identity
from ragwright.stores.sqlite.sql_filters import compile_security
from ragwright.stores.tags import TagPair

if TYPE_CHECKING:
    import sqlite3

    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

TAG_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS tag_vectors (
        model TEXT NOT NULL,
        tag_key TEXT NOT NULL,
        tag_value TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, tag_key, tag_value)
    )""",
    """CREATE TABLE IF NOT EXISTS tag_documents (
        document_id TEXT NOT NULL,
        tag_key TEXT NOT NULL,
        tag_value TEXT NOT NULL,
        PRIMARY KEY (document_id, tag_key, tag_value)
    )""",
    "CREATE INDEX IF NOT EXISTS tag_documents_tag ON tag_documents(tag_key, tag_value)",
)


class SqliteTagTable:
    """Tag vectors and links in the store's SQLite file, under the store's lock."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        transaction: Callable[[], AbstractContextManager[None]],
        lock: threading.RLock,
        documents: Callable[[], str] = lambda: "documents",
    ) -> None:
        """*documents* names the live collection's registry table (it changes when a reindex switches)."""
        self._conn, self._transaction, self._lock = conn, transaction, lock
        self._documents = documents
        with self._transaction():
            for statement in TAG_SCHEMA:
                self._conn.execute(statement)

    def embedded(self, model: str) -> set[TagPair]:
        with self._lock:
            rows = self._conn.execute("SELECT tag_key, tag_value FROM tag_vectors WHERE model = ?", (model,))
            return {(str(k), str(v)) for k, v in rows}

    def add_vectors(self, model: str, entries: Sequence[tuple[str, str, Vector]]) -> None:
        import numpy as np

        rows = [(model, k, v, np.asarray(vec, dtype=np.float32).tobytes()) for k, v, vec in entries]
        with self._transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO tag_vectors(model, tag_key, tag_value, vector) VALUES (?,?,?,?)", rows
            )

    def set_document_tags(self, document_id: str, tags: Sequence[TagPair]) -> None:
        with self._transaction():
            self._conn.execute("DELETE FROM tag_documents WHERE document_id = ?", (document_id,))
            self._conn.executemany(
                "INSERT OR IGNORE INTO tag_documents(document_id, tag_key, tag_value) VALUES (?,?,?)",
                [(document_id, k, v) for k, v in tags],
            )

    def visible(self, model: str, identity: Identity) -> list[tuple[str, str, Vector]]:
        import numpy as np

        params: list[Any] = [model]
        security = compile_security(identity, "d.tenant", "d.acl", params)
        with self._lock:
            rows = self._conn.execute(
                "SELECT v.tag_key, v.tag_value, v.vector FROM tag_vectors v WHERE v.model = ? AND EXISTS ("
                f"SELECT 1 FROM tag_documents t JOIN {self._documents()} d ON d.document_id = t.document_id "
                "WHERE t.tag_key = v.tag_key AND t.tag_value = v.tag_value "
                f"AND d.status = 'indexed' AND {security})",
                params,
            ).fetchall()
        return [(str(k), str(v), np.frombuffer(blob, dtype=np.float32)) for k, v, blob in rows]
