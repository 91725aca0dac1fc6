"""Which collection a PostgreSQL store object reads and writes, and following the ``live`` alias to it.

A store object works on one physical collection (see :mod:`.collections`) through its connections'
``search_path``. :class:`AliasFollower` keeps that position: a pooled connection checked out
(:meth:`AliasFollower.enter`) re-reads the alias at most every ``PostgresOptions.follow_alias_s``
seconds and is pointed at the collection; a write transaction (:meth:`AliasFollower.writing`) first
reads the alias ``FOR SHARE``, so no write interleaves with a switch and a write that starts after one
goes to the new collection. A store object bound to one embedding model does not follow the alias to a
collection bound to another: it keeps reading its collection (valid until dropped) and refuses
writes, saying to reopen. A *pinned* object (a reindex's builder) never follows.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.postgres.schemas import LIVE_ALIAS, MAIN_COLLECTION, collection_schema, search_path

if TYPE_CHECKING:
    import psycopg

    from ragwright.stores.postgres.state import PostgresState

__all__ = ["AliasFollower", "alias_target", "collection_binding", "collection_exists"]

log = logging.getLogger(__name__)

_BINDING_KEYS = ("embedding_model", "embedding_dimension")


def alias_target(conn: psycopg.Connection[Any], base: str, *, lock: str = "") -> str:
    """The alias's collection; *lock*: ``FOR SHARE`` (a write) or ``FOR UPDATE`` (moving the alias)."""
    row = conn.execute(f'SELECT collection FROM "{base}".rag_aliases WHERE alias = %s {lock}', (LIVE_ALIAS,)).fetchone()
    return MAIN_COLLECTION if row is None else str(row[0])


def collection_exists(conn: psycopg.Connection[Any], base: str, name: str) -> bool:
    return conn.execute(f'SELECT 1 FROM "{base}".rag_collections WHERE name = %s', (name,)).fetchone() is not None


def collection_binding(conn: psycopg.Connection[Any], base: str, name: str) -> tuple[str, int] | None:
    """The embedding model bound to collection *name*, or ``None``."""
    from psycopg import sql

    rows = dict(
        conn.execute(
            sql.SQL("SELECT key, value FROM {}.rag_metadata WHERE key = ANY(%s)").format(
                sql.Identifier(collection_schema(base, name))
            ),
            (list(_BINDING_KEYS),),
        ).fetchall()
    )
    model, dim = rows.get("embedding_model"), rows.get("embedding_dimension")
    return None if model is None or dim is None else (str(model), int(dim))


def read_store_id(conn: psycopg.Connection[Any], base: str, name: str) -> str:
    """The id of collection *name*'s rows (a wipe renews it: derived state keyed by it rebuilds)."""
    from psycopg import sql

    row = conn.execute(
        sql.SQL("SELECT value FROM {}.rag_metadata WHERE key = 'store_id'").format(
            sql.Identifier(collection_schema(base, name))
        )
    ).fetchone()
    return "" if row is None else f"{row[0]}"


class AliasFollower:
    """The collection a store object works on (see the module docstring)."""

    def __init__(self, state: PostgresState, conn: psycopg.Connection[Any], pinned: str | None) -> None:
        """Start on *pinned* (never following the alias) or on the alias's collection; *conn* is on the
        store's schema."""
        self._state = state
        self.base = state.options.schema
        self.pinned = pinned is not None
        self.name = alias_target(conn, self.base) if pinned is None else pinned
        if pinned is not None and not collection_exists(conn, self.base, pinned):
            raise StoreError(f"no collection {pinned!r} in the store {state.where} (see collections())")
        self.path = search_path(self.base, self.name)
        self._paths: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._checked_at = time.monotonic()
        self._lock = threading.Lock()
        #: The model this object bound (``bind_embedder``): it does not follow to a collection of another.
        self.bound_here: tuple[str, int] | None = None
        #: Why this object may not write (it stayed on a collection the alias left), or ``None``.
        self.stale: str | None = None
        state.store_id = read_store_id(conn, self.base, self.name)

    def enter(self, conn: psycopg.Connection[Any]) -> None:
        """On checking out a connection: follow the alias when due, and point the connection at the collection."""
        if not self.pinned and time.monotonic() - self._checked_at >= self._state.options.follow_alias_s:
            self._checked_at = time.monotonic()
            target = alias_target(conn, self.base)
            if target != self.name:
                self._follow(conn, target)
        path = self.path
        if self._paths.get(conn) != path:
            conn.execute("SELECT set_config('search_path', %s, false)", (path,))
            self._paths[conn] = path

    def recheck(self) -> None:
        """Re-read the alias at the next operation (this object just moved it)."""
        self._checked_at = float("-inf")

    def reset(self) -> None:
        """Back on ``main`` (the store was wiped: every other collection is gone)."""
        self.name, self.path, self.stale = MAIN_COLLECTION, search_path(self.base, MAIN_COLLECTION), None

    @contextmanager
    def writing(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """A write transaction on this object's collection: it first reads the alias ``FOR SHARE`` (a switch
        waits for it, and it for a switch), following the alias there if it moved."""
        with conn.transaction():
            if not self.pinned:
                target = alias_target(conn, self.base, lock="FOR SHARE")
                if target != self.name:
                    self._follow(conn, target)
                    if self.stale is None:
                        conn.execute("SELECT set_config('search_path', %s, true)", (self.path,))
            if self.stale is not None:
                raise StoreError(self.stale)
            yield

    def _follow(self, conn: psycopg.Connection[Any], target: str) -> None:
        """Move to the alias's collection *target* unless it was embedded with another model than the one
        this object was bound with (then stay, read-only, as on SQLite)."""
        with self._lock:
            if target == self.name:
                return
            bound, theirs = self.bound_here, collection_binding(conn, self.base, target)
            where = self._state.where
            if bound is not None and theirs is not None and theirs != bound:
                if not collection_exists(conn, self.base, self.name):
                    raise StoreError(
                        f"the store {where} was reindexed with the model {theirs[0]!r} and the collection this "
                        f"store object was reading ({self.name!r}, model {bound[0]!r}) was dropped; reopen the "
                        "store with the new model"
                    )
                if self.stale is None:
                    log.warning(
                        "alias_moved_model_changed: %s now serves collection %r (model %s); this store object "
                        "stays on %r (model %s) for reading until it is reopened",
                        where,
                        target,
                        theirs[0],
                        self.name,
                        bound[0],
                    )
                self.stale = (
                    f"the store {where} was reindexed: collection {target!r} (model {theirs[0]!r}) is live now; "
                    f"this store object was opened with model {bound[0]!r} — reopen it (with the new model) to write"
                )
                return
            log.info("alias_followed: %s %s -> %s", where, self.name, target)
            self.name, self.path, self.stale = target, search_path(self.base, target), None
            self._state.store_id = read_store_id(conn, self.base, target)
            self._state.forget()
