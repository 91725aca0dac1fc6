"""Tables a feature keeps beside a store's own (the entity graph, the summary hierarchy): how they open.

A store may offer a hook method (``graph_database()``, ``hierarchy_database()``) returning an
``sqlite3.Connection``; else a :class:`~ragwright.stores.sqlite.SqliteStore`'s file is opened with a
second connection (WAL: the store's readers and writers are not blocked; writes wait up to
*busy_timeout*); the in-memory store gets an in-memory database; any other store is refused with a
:class:`~ragwright.errors.ConfigError` naming the feature. :class:`SideTables` is the shared base: one
connection behind a lock, the schema created on open, each write one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from ragwright.errors import ConfigError

__all__ = ["DocumentRows", "SideTables", "file_has_rows", "follow_documents", "open_side_database"]


def open_side_database(store: Any, *, hook: str, feature: str, busy_timeout: float = 30.0) -> sqlite3.Connection:
    """A connection for *feature*'s tables beside *store* (see the module docstring)."""
    offered = getattr(store, hook, None)
    if callable(offered):
        conn: sqlite3.Connection = offered()
        return conn
    from ragwright.stores.memory import MemoryStore
    from ragwright.stores.sqlite import SqliteStore

    if isinstance(store, SqliteStore):
        return sqlite3.connect(str(store.path), check_same_thread=False, isolation_level=None, timeout=busy_timeout)
    if isinstance(store, MemoryStore):
        return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    raise ConfigError(
        f"{feature} does not support {type(store).__name__} yet: use the SQLite store (the default) or the "
        "in-memory store"
    )


def file_has_rows(store: object, table: str) -> bool:
    """Whether *store*'s SQLite file already holds rows in *table* (read-only; ``False`` for other stores)."""
    path = getattr(store, "path", None)
    if path is None:
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT name FROM sqlite_master WHERE name = ?", (table,)).fetchone()
            return row is not None and conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


class DocumentRows(Protocol):
    """Side tables that keep rows per document, each with the document's tenant and ACL."""

    def documents(self) -> Mapping[str, Any]: ...

    def remove_document(self, document_id: str) -> None: ...

    def update_access(self, document_id: str, tenant: str, acl: Sequence[str]) -> None: ...


def follow_documents(store: Any, tables: DocumentRows, document_ids: Sequence[str]) -> None:
    """A removal or an access change of these documents (``Rag.remove`` / ``Rag.update_acl``): their rows
    go with a document that is no longer indexed, and take its new tenant and ACL otherwise."""
    from ragwright.model.records import DocumentStatus

    known = tables.documents()
    for doc in document_ids:
        record = store.get_record(doc)
        if record is None or record.status is not DocumentStatus.INDEXED:
            tables.remove_document(doc)
        elif doc in known:
            tables.update_access(doc, record.tenant, record.acl)


class SideTables:
    """One connection behind a lock; the *schema* created on open; each write one transaction."""

    def __init__(self, conn: sqlite3.Connection, schema: Sequence[str]) -> None:
        self._conn, self._lock = conn, threading.RLock()
        with self._write():
            for statement in schema:
                conn.execute(statement)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._before_commit()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _before_commit(self) -> None:
        """Runs inside every write, last (a subclass bumps a version here)."""

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return [tuple(r) for r in self._conn.execute(sql, params)]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
