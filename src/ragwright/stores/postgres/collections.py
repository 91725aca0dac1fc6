"""Physical collections and the ``live`` alias of the PostgreSQL store (a part of :class:`PostgresStore`).

A collection is a *schema*: ``main`` is the store's own schema (``PostgresOptions.schema``, the
historical tables), and a collection ``gN`` created for a blue/green reindex is the schema
``<schema>__gN`` holding its own copy of the per-collection tables (:data:`.schema.PER_COLLECTION`:
chunks with their HNSW index, registry, parents, sparse vectors, tags, change counter and metadata).
A store object reads and writes one collection through its connections' ``search_path`` (the
collection's schema, then ``public``): the shared tables (staging, the ingestion queue,
``rag_collections``, ``rag_aliases``) are simple views there of the store schema's (:mod:`.schemas`),
and a table a feature creates on first use (the graph's) is created in the collection's schema. Every
statement is the same as before, so searches keep their plans and their filters inside every arm, and
a collection's tables never mix rows with another's.

The alias (``rag_aliases``) moves in one transaction that first takes its row lock: every write of a
store object that follows the alias reads the alias ``FOR SHARE`` as the first statement of its
transaction, so no write can interleave with the switch's check, and a write that starts after a
switch goes to the new collection. Before a read, a following store object re-reads the alias at most
every ``PostgresOptions.follow_alias_s`` seconds (it moves at once after its own switch). As on
SQLite, a store object bound to one embedding model does not follow the alias to a collection bound
to another: it keeps reading its collection (valid until dropped) and refuses writes, saying to reopen.

A collection created to be built (``create_collection(building=True)``) names its builder, whose
process holds a session advisory lock on a connection of its own until the alias moves to it (or it
is dropped or the store object closed): when the lock is free — a reindex killed mid-build, on any
host — :meth:`PostgresCollections.drop_abandoned_builds` drops the half-built collection.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.base import CollectionInfo
from ragwright.stores.postgres.connection import PostgresOptions, connect, redact
from ragwright.stores.postgres.schema import SCHEMA_VERSION
from ragwright.stores.postgres.schemas import (
    LIVE_ALIAS,
    MAIN_COLLECTION,
    collection_schema,
    create_schema,
    drop_schema,
    refresh_live_hashes,
    search_path,
)

if TYPE_CHECKING:
    import psycopg

    from ragwright.stores.postgres.keyword import KeywordMirror
    from ragwright.stores.postgres.store import PostgresStore

log = logging.getLogger(__name__)

_BINDING_KEYS = ("embedding_model", "embedding_dimension")


def _builder_key(base: str, name: str) -> str:
    return f"ragwright.build:{base}.{name}"


class PostgresCollections:
    """Collections, the alias and following it; the host class provides the connections and derived state."""

    dsn: str
    options: PostgresOptions
    _keyword: KeywordMirror
    _store_id: str
    _dense_plan: dict[str, tuple[int, float, bool]]
    _allowed: dict[tuple[int, str], frozenset[str] | None]
    _writes: int
    _known_dimension: int | None

    def _conn(self) -> AbstractContextManager[psycopg.Connection[Any]]:  # pragma: no cover - host
        raise NotImplementedError

    def prune_staging(self, *, release: str | None = None) -> int:  # pragma: no cover - host
        raise NotImplementedError

    # -- state (called from the host's constructor) --------------------------------------------------------
    def _init_collection(self, conn: psycopg.Connection[Any], pinned: str | None) -> None:
        """Start on *pinned* (never following the alias) or on the alias's collection."""
        self._pinned = pinned is not None
        self._name = self._alias_target(conn) if pinned is None else pinned
        if pinned is not None and not self._exists(conn, pinned):
            raise StoreError(f"no collection {pinned!r} in the store {redact(self.dsn)} (see collections())")
        self._path = search_path(self.options.schema, self._name)
        self._paths: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._checked_at = time.monotonic()
        self._follow_lock = threading.Lock()
        self._bound_here: tuple[str, int] | None = None
        self._stale: str | None = None
        self._builders: dict[str, psycopg.Connection[Any]] = {}
        self._store_id = self._read_store_id(conn, self._name)

    def _read_store_id(self, conn: psycopg.Connection[Any], name: str) -> str:
        from psycopg import sql

        row = conn.execute(
            sql.SQL("SELECT value FROM {}.rag_metadata WHERE key = 'store_id'").format(
                sql.Identifier(collection_schema(self.options.schema, name))
            )
        ).fetchone()
        return "" if row is None else f"{row[0]}"

    def _enter(self, conn: psycopg.Connection[Any]) -> None:
        """On checking out a connection: follow the alias when due, and point the connection at the collection."""
        if not self._pinned and time.monotonic() - self._checked_at >= self.options.follow_alias_s:
            self._checked_at = time.monotonic()
            target = self._alias_target(conn)
            if target != self._name:
                self._follow(conn, target)
        path = self._path
        if self._paths.get(conn) != path:
            conn.execute("SELECT set_config('search_path', %s, false)", (path,))
            self._paths[conn] = path

    def _writing(self, conn: psycopg.Connection[Any]) -> AbstractContextManager[None]:
        """A write transaction on this store object's collection: it first reads the alias ``FOR SHARE``
        (a switch waits for it, and it for a switch), following the alias there if it moved."""
        return self._write_transaction(conn)

    @contextmanager
    def _write_transaction(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        with conn.transaction():
            if not self._pinned:
                target = self._alias_target(conn, lock="FOR SHARE")
                if target != self._name:
                    self._follow(conn, target)
                    if self._stale is None:
                        conn.execute("SELECT set_config('search_path', %s, true)", (self._path,))
            if self._stale is not None:
                raise StoreError(self._stale)
            yield

    def _alias_target(self, conn: psycopg.Connection[Any], *, lock: str = "") -> str:
        """The alias's collection; *lock*: ``FOR SHARE`` (a write) or ``FOR UPDATE`` (moving the alias)."""
        query = f'SELECT collection FROM "{self.options.schema}".rag_aliases WHERE alias = %s {lock}'
        row = conn.execute(query, (LIVE_ALIAS,)).fetchone()
        return MAIN_COLLECTION if row is None else str(row[0])

    def _exists(self, conn: psycopg.Connection[Any], name: str) -> bool:
        query = f'SELECT 1 FROM "{self.options.schema}".rag_collections WHERE name = %s'
        return conn.execute(query, (name,)).fetchone() is not None

    def _binding(self, conn: psycopg.Connection[Any], name: str) -> tuple[str, int] | None:
        from psycopg import sql

        rows = dict(
            conn.execute(
                sql.SQL("SELECT key, value FROM {}.rag_metadata WHERE key = ANY(%s)").format(
                    sql.Identifier(collection_schema(self.options.schema, name))
                ),
                (list(_BINDING_KEYS),),
            ).fetchall()
        )
        model, dim = rows.get("embedding_model"), rows.get("embedding_dimension")
        return None if model is None or dim is None else (str(model), int(dim))

    def _follow(self, conn: psycopg.Connection[Any], target: str) -> None:
        """Move to the alias's collection *target* unless it was embedded with another model than the one
        this object was bound with (then stay, read-only, as on SQLite)."""
        with self._follow_lock:
            if target == self._name:
                return
            bound, theirs = self._bound_here, self._binding(conn, target)
            where = redact(self.dsn)
            if bound is not None and theirs is not None and theirs != bound:
                if not self._exists(conn, self._name):
                    raise StoreError(
                        f"the store {where} was reindexed with the model {theirs[0]!r} and the collection this "
                        f"store object was reading ({self._name!r}, model {bound[0]!r}) was dropped; reopen the "
                        "store with the new model"
                    )
                if self._stale is None:
                    log.warning(
                        "alias_moved_model_changed: %s now serves collection %r (model %s); this store object "
                        "stays on %r (model %s) for reading until it is reopened",
                        where,
                        target,
                        theirs[0],
                        self._name,
                        bound[0],
                    )
                self._stale = (
                    f"the store {where} was reindexed: collection {target!r} (model {theirs[0]!r}) is live now; "
                    f"this store object was opened with model {bound[0]!r} — reopen it (with the new model) to write"
                )
                return
            log.info("alias_followed: %s %s -> %s", where, self._name, target)
            self._name, self._path, self._stale = target, search_path(self.options.schema, target), None
            self._store_id = self._read_store_id(conn, target)
            self._keyword.reset()
            self._dense_plan.clear()
            self._allowed.clear()
            self._known_dimension = None
            self._writes += 1

    # -- the Collections protocol ----------------------------------------------------------------------------
    @property
    def live_collection(self) -> str:
        """The collection the ``live`` alias names now."""
        with self._conn() as conn:
            return self._alias_target(conn)

    @property
    def current_collection(self) -> str:
        """The collection this store object reads (the live one unless pinned or stale)."""
        with self._conn():  # follows the alias when due
            return self._name

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the store, oldest first, with its model and sizes."""
        from psycopg import sql

        out = []
        with self._conn() as conn:
            live = self._alias_target(conn)
            rows = conn.execute("SELECT name, created_at FROM rag_collections ORDER BY created_at, name").fetchall()
            for name, created in rows:
                schema = sql.Identifier(collection_schema(self.options.schema, name))
                docs = conn.execute(
                    sql.SQL("SELECT COUNT(*) FROM {}.documents WHERE status = 'indexed'").format(schema)
                ).fetchone()
                chunks = conn.execute(sql.SQL("SELECT COUNT(*) FROM {}.chunks").format(schema)).fetchone()
                bound = self._binding(conn, name)
                out.append(
                    CollectionInfo(
                        name,
                        name == live,
                        bound[0] if bound else None,
                        bound[1] if bound else None,
                        int(docs[0]) if docs else 0,
                        int(chunks[0]) if chunks else 0,
                        float(created),
                    )
                )
        return out

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty collection (its own schema) beside the others, not live; returns its name.

        *building*: this process is about to build it; it holds the builder's lock (on a connection of
        its own) until the alias moves to it, and the collection counts as abandoned once the lock is free.
        """
        base = self.options.schema
        with self._own_connection(keep=building) as conn, conn.transaction():
            conn.execute("LOCK TABLE rag_collections IN EXCLUSIVE MODE")
            names = [str(r[0]) for r in conn.execute("SELECT name FROM rag_collections").fetchall()]
            last = conn.execute("SELECT value FROM rag_metadata WHERE key = 'last_collection'").fetchone()
            names += [] if last is None else [str(last[0])]  # a dropped collection's name is never reused
            numbers = [int(n[1:]) for n in names if n.startswith("g") and n[1:].isdigit()]
            name = f"g{max(numbers, default=1) + 1}"
            conn.execute(
                "INSERT INTO rag_metadata(key, value) VALUES ('last_collection', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (name,),
            )
            create_schema(conn, base, name)
            builder = f"{socket.gethostname()}:{os.getpid()}" if building else None
            conn.execute(
                "INSERT INTO rag_collections(name, created_at, note, builder, schema_version) "
                "VALUES (%s, %s, %s, %s, %s)",
                (name, time.time(), note, builder, SCHEMA_VERSION),
            )
            refresh_live_hashes(conn, base)
            if building:  # a session lock, taken before the collection is visible to anyone
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (_builder_key(base, name),))
        if building:
            self._builders[name] = conn
        log.info("collection_created: %s %s", redact(self.dsn), name)
        return name

    def open_collection(self, name: str) -> PostgresStore:
        """A store object (its own pool) pinned to collection *name*: it never follows the alias."""
        from ragwright.stores.postgres.store import PostgresStore

        options = self.options
        if options.keyword_snapshot is not None and name != MAIN_COLLECTION:
            from dataclasses import replace

            snapshot = options.keyword_snapshot
            options = replace(options, keyword_snapshot=snapshot.with_name(f"{snapshot.name}.{name}"))
        return PostgresStore(self.dsn, keyword_analyzer=self._keyword.analyzer.name, options=options, pinned=name)

    def open_live(self) -> PostgresStore:
        """A new store object (its own pool) over the live collection, following the alias."""
        from ragwright.stores.postgres.store import PostgresStore

        return PostgresStore(self.dsn, keyword_analyzer=self._keyword.analyzer.name, options=self.options)

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point ``live`` at *name* in one transaction; returns the previous collection.

        The transaction first locks the alias row: writes to the live collection in flight finish first,
        later ones wait. *check* then runs (a reason it returns rolls back and is raised as StoreError)."""
        with self._own_connection() as conn, conn.transaction():  # *check* may use the whole pool
            previous = self._alias_target(conn, lock="FOR UPDATE")
            if not self._exists(conn, name):
                raise StoreError(f"no collection {name!r} in the store {redact(self.dsn)}")
            if self._binding(conn, name) is None:
                raise StoreError(f"collection {name!r} has no embedding model bound: it was never built")
            reason = check() if check is not None else None
            if reason is not None:
                raise StoreError(reason)
            conn.execute(
                "UPDATE rag_aliases SET collection = %s, previous = %s, switched_at = %s WHERE alias = %s",
                (name, previous, time.time(), LIVE_ALIAS),
            )
            conn.execute("UPDATE rag_collections SET builder = NULL WHERE name = %s", (name,))
        self._release_builder(name)
        self._checked_at = float("-inf")  # this object follows at its next operation
        log.info("alias_switched: %s live %s -> %s", redact(self.dsn), previous, name)
        return previous

    def drop_collection(self, name: str) -> None:
        """Delete a collection that is not live (its schema; ``main``'s tables are emptied); staged bytes
        and parsed documents no remaining collection refers to are pruned."""
        with self._conn() as conn, conn.transaction():
            if name == self._alias_target(conn, lock="FOR UPDATE"):
                raise StoreError(f"collection {name!r} is live; switch the alias away from it before dropping it")
            if not self._exists(conn, name):
                raise StoreError(f"no collection {name!r} in the store {redact(self.dsn)}")
            drop_schema(conn, self.options.schema, name)
        self._release_builder(name)
        self.prune_staging()
        log.info("collection_dropped: %s %s", redact(self.dsn), name)

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder ended (its lock is free) before the alias moved to them; a
        build still running — in this process or another, on any host — is kept. Returns their names."""
        with self._conn() as conn:
            building = [
                str(r[0]) for r in conn.execute("SELECT name FROM rag_collections WHERE builder IS NOT NULL").fetchall()
            ]
        dropped = []
        for name in building:
            if name in self._builders:
                continue
            with self._conn() as conn, conn.transaction():
                live = self._alias_target(conn, lock="FOR SHARE")
                free = conn.execute(
                    "SELECT pg_try_advisory_xact_lock(hashtext(%s))", (_builder_key(self.options.schema, name),)
                ).fetchone()
                row = conn.execute("SELECT builder FROM rag_collections WHERE name = %s FOR UPDATE", (name,)).fetchone()
                if not (free and free[0]) or row is None or row[0] is None or name == live:
                    continue
                drop_schema(conn, self.options.schema, name)
            dropped.append(name)
            log.warning(
                "abandoned_build_dropped: %s: collection %s (its builder %s ended)", redact(self.dsn), name, row[0]
            )
        if dropped:
            self.prune_staging()
        return dropped

    # -- helpers --------------------------------------------------------------------------------------------
    @contextmanager
    def _own_connection(self, *, keep: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A connection outside the pool, on the store's schema; closed afterwards unless *keep* (and
        always on an error). Errors of the server become :class:`StoreError`."""
        import psycopg

        conn = connect(self.dsn, self.options)
        try:
            conn.execute(
                "SELECT set_config('search_path', %s, false)", (search_path(self.options.schema, MAIN_COLLECTION),)
            )
            yield conn
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"PostgreSQL store {redact(self.dsn)}: {type(exc).__name__}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        if not keep:
            conn.close()

    @staticmethod
    def _live_hashes_sql() -> str:
        """SQL listing the content hashes any collection's live records refer to (staging is shared)."""
        return "SELECT content_hash FROM rag_live_hashes"

    def _release_builder(self, name: str) -> None:
        conn = self._builders.pop(name, None)
        if conn is not None:
            conn.close()  # ends the session: its advisory lock goes with it

    def _release_builders(self) -> None:
        for name in list(self._builders):
            self._release_builder(name)
