"""The state every part of a SQLite store shares: :class:`SqliteHandle`.

A :class:`~ragwright.stores.sqlite.SqliteStore` is composed of parts (the chunk table, the dense,
keyword and sparse search, the collections, staging); each receives this handle in its constructor
and reaches the file only through it. It holds the one connection and the lock around it, the
transactions (:mod:`ragwright.stores.sqlite.transaction`), ``rag_metadata``, the file's version as
this object sees it, and which physical collection is read and written now.

That collection is the ``live`` alias's (see :mod:`ragwright.stores.sqlite.collections`), re-read
whenever the file changed (:meth:`SqliteHandle.version`); a pinned handle never moves. When the alias
moved to a collection embedded with another model than this handle was bound with, it keeps reading
its collection (still valid until it is dropped) and refuses writes. Parts holding derived state of
the collection (rowids, the BM25 index) register with :meth:`SqliteHandle.on_move` to drop it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragwright.errors import StoreError
from ragwright.stores.sql_dialect import Execute
from ragwright.stores.sqlite.schema import LIVE_ALIAS, MAIN_COLLECTION, Tables
from ragwright.stores.sqlite.transaction import ReadSnapshot, Transaction

__all__ = ["SqliteHandle"]

log = logging.getLogger(__name__)


class SqliteHandle:
    """One store file's connection, lock, metadata, versions and current collection."""

    def __init__(self, path: Path, conn: sqlite3.Connection, busy_timeout: float) -> None:
        self.path, self.conn, self.busy_timeout = path, conn, busy_timeout
        self.lock = threading.RLock()
        #: The physical collection read and written: the alias's, re-read when the file changes.
        self.tables = Tables.of(MAIN_COLLECTION)
        #: Pinned (building a reindex): never follows the alias.
        self.pinned = False
        #: Why writes are refused (the alias moved to another model's collection), or ``None``.
        self.stale: str | None = None
        #: The ``(model, dimension)`` this object bound (or found bound) through ``bind_embedder``.
        self.bound_here: tuple[str, int] | None = None
        #: The version at which the alias was last re-read (``None``: re-read it at the next read).
        self.followed_at: tuple[int, int] | None = None
        #: This object's own committed writes (``PRAGMA data_version`` does not count them).
        self.local_writes = 0
        self._moved: list[Callable[[], None]] = []

    # -- transactions ------------------------------------------------------------------------------------
    def transaction(self) -> Transaction:
        """A write transaction (refused when writes are: see :meth:`check_writable`)."""
        self.check_writable()
        return Transaction(self.conn, self.lock, self.path, self.busy_timeout)

    def read_snapshot(self) -> ReadSnapshot:
        """A read transaction: what is read inside it comes from one committed state of the file."""
        return ReadSnapshot(self.conn, self.lock)

    @contextmanager
    def writing(self) -> Iterator[Execute]:
        """A write transaction, as the shared SQL parts take it (:mod:`ragwright.stores.sql_staging`)."""
        with self.transaction():
            yield self.conn.execute

    @contextmanager
    def reading(self) -> Iterator[Execute]:
        """Statements under the lock, as the shared SQL parts take them."""
        with self.lock:
            yield self.conn.execute

    def check_writable(self) -> None:
        if self.stale is not None:
            raise StoreError(self.stale)

    # -- rag_metadata ------------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM rag_metadata WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO rag_metadata(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def bump_index_version(self) -> None:
        """Called inside the transaction of every chunk write, delete and ACL update."""
        self.conn.execute(
            "INSERT INTO rag_metadata(key, value) VALUES ('index_version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
        )

    def binding(self, name: str) -> tuple[str, int] | None:
        """The ``(model, dimension)`` bound to the collection *name*, if any."""
        t = Tables.of(name)
        model, dim = self.meta(t.meta_key("embedding_model")), self.meta(t.meta_key("embedding_dimension"))
        return None if model is None or dim is None else (model, int(dim))

    def embedding_model(self) -> tuple[str, int] | None:
        """The binding of the collection read now (after following the alias)."""
        with self.lock:
            self.version()
            return self.binding(self.tables.name)

    # -- versions ----------------------------------------------------------------------------------------
    def version(self) -> tuple[int, int]:
        """Changes when this file changed (any process); re-reads the alias then (call under the lock)."""
        version = (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.local_writes)
        if version != self.followed_at:
            self.follow()
            version = self.followed_at = (version[0], self.local_writes)
        return version

    def write_label(self) -> tuple[int, int]:
        """Inside a write transaction: the :meth:`version` the file will have once it commits (the data
        version counts other processes' commits before it; this connection's own never change it)."""
        return (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.local_writes)

    # -- the collection read and written -----------------------------------------------------------------
    def alias_target(self) -> str:
        row = self.conn.execute("SELECT collection FROM aliases WHERE alias = ?", (LIVE_ALIAS,)).fetchone()
        return MAIN_COLLECTION if row is None else str(row[0])

    def exists(self, name: str) -> bool:
        return self.conn.execute("SELECT 1 FROM collections WHERE name = ?", (name,)).fetchone() is not None

    def on_move(self, callback: Callable[[], None]) -> None:
        """Call *callback* (under the lock) whenever this handle follows the alias to another collection."""
        self._moved.append(callback)

    def follow(self) -> None:
        """Move to the alias's collection if it moved (call under the lock, when the file changed)."""
        if self.pinned:
            return
        target = self.alias_target()
        if target == self.tables.name:
            self.stale = None
            return
        bound = self.bound_here
        theirs = self.binding(target)
        if bound is not None and theirs is not None and theirs != bound:
            if self.exists(self.tables.name):
                if self.stale is None:
                    log.warning(
                        "alias_moved_model_changed: %s now serves collection %r (model %s); this store "
                        "object stays on %r (model %s) for reading until it is reopened",
                        self.path,
                        target,
                        theirs[0],
                        self.tables.name,
                        bound[0],
                    )
                self.stale = (
                    f"the store {self.path} was reindexed: collection {target!r} (model {theirs[0]!r}) is "
                    f"live now; this store object was opened with model {bound[0]!r} — reopen it "
                    "(with the new model) to write"
                )
                return
            raise StoreError(
                f"the store {self.path} was reindexed with the model {theirs[0]!r} and the collection this "
                f"store object was reading ({self.tables.name!r}, model {bound[0]!r}) was dropped; reopen the "
                "store with the new model"
            )
        log.info("alias_followed: %s %s -> %s", self.path, self.tables.name, target)
        self.tables, self.stale = Tables.of(target), None
        for callback in self._moved:
            callback()
        self.local_writes += 1
