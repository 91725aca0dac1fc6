"""Physical collections and the ``live`` alias of the PostgreSQL store (a part of :class:`PostgresStore`;
following the alias is :mod:`.follow`).

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

The alias (``rag_aliases``) moves in one transaction that first takes its row lock; every write of a
store object that follows the alias reads it ``FOR SHARE`` first (:mod:`.follow`), so no write
interleaves with the switch's check.

A collection created to be built (``create_collection(building=True)``) names its builder, whose
process holds a session advisory lock on a connection of its own until the alias moves to it (or it
is dropped or the store object closed): when the lock is free — a reindex killed mid-build, on any
host — :meth:`PostgresCollections.drop_abandoned_builds` drops the half-built collection.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.base import CollectionInfo
from ragwright.stores.postgres.connection import connect
from ragwright.stores.postgres.follow import alias_target, collection_binding, collection_exists
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
from ragwright.stores.postgres.state import PostgresState

if TYPE_CHECKING:
    import psycopg

    from ragwright.stores.postgres.store import PostgresStore

__all__ = ["PostgresCollections", "live_hashes_sql"]

log = logging.getLogger(__name__)


def _builder_key(base: str, name: str) -> str:
    return f"ragwright.build:{base}.{name}"


def live_hashes_sql() -> str:
    """SQL listing the content hashes any collection's live records refer to (staging is shared)."""
    return "SELECT content_hash FROM rag_live_hashes"


class PostgresCollections:
    """The :class:`~ragwright.stores.base.Collections` methods; *prune_staging* drops staged bytes no
    collection refers to any more (after a drop)."""

    def __init__(self, state: PostgresState, prune_staging: Callable[[], int]) -> None:
        self._state, self._prune_staging = state, prune_staging
        self._base = state.options.schema
        self._builders: dict[str, psycopg.Connection[Any]] = {}

    # -- the Collections protocol ----------------------------------------------------------------------------
    def live_collection(self) -> str:
        """The collection the ``live`` alias names now."""
        with self._state.conn() as conn:
            return alias_target(conn, self._base)

    def current_collection(self) -> str:
        """The collection this store object reads (the live one unless pinned or stale)."""
        with self._state.conn():  # follows the alias when due
            assert self._state.follower is not None
            return self._state.follower.name

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the store, oldest first, with its model and sizes."""
        from psycopg import sql

        out = []
        with self._state.conn() as conn:
            live = alias_target(conn, self._base)
            rows = conn.execute("SELECT name, created_at FROM rag_collections ORDER BY created_at, name").fetchall()
            for name, created in rows:
                schema = sql.Identifier(collection_schema(self._base, name))
                docs = conn.execute(
                    sql.SQL("SELECT COUNT(*) FROM {}.documents WHERE status = 'indexed'").format(schema)
                ).fetchone()
                chunks = conn.execute(sql.SQL("SELECT COUNT(*) FROM {}.chunks").format(schema)).fetchone()
                bound = collection_binding(conn, self._base, name)
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
        base = self._base
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
        log.info("collection_created: %s %s", self._state.where, name)
        return name

    def open_collection(self, name: str) -> PostgresStore:
        """A store object (its own pool) pinned to collection *name*: it never follows the alias."""
        from ragwright.stores.postgres.store import PostgresStore

        options = self._state.options
        if options.keyword_snapshot is not None and name != MAIN_COLLECTION:
            from dataclasses import replace

            snapshot = options.keyword_snapshot
            options = replace(options, keyword_snapshot=snapshot.with_name(f"{snapshot.name}.{name}"))
        return PostgresStore(self._state.dsn, keyword_analyzer=self._analyzer(), options=options, pinned=name)

    def open_live(self) -> PostgresStore:
        """A new store object (its own pool) over the live collection, following the alias."""
        from ragwright.stores.postgres.store import PostgresStore

        return PostgresStore(self._state.dsn, keyword_analyzer=self._analyzer(), options=self._state.options)

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point ``live`` at *name* in one transaction; returns the previous collection.

        The transaction first locks the alias row: writes to the live collection in flight finish first,
        later ones wait. *check* then runs (a reason it returns rolls back and is raised as StoreError)."""
        with self._own_connection() as conn, conn.transaction():  # *check* may use the whole pool
            previous = alias_target(conn, self._base, lock="FOR UPDATE")
            if not collection_exists(conn, self._base, name):
                raise StoreError(f"no collection {name!r} in the store {self._state.where}")
            if collection_binding(conn, self._base, name) is None:
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
        assert self._state.follower is not None
        self._state.follower.recheck()  # this object follows at its next operation
        log.info("alias_switched: %s live %s -> %s", self._state.where, previous, name)
        return previous

    def drop_collection(self, name: str) -> None:
        """Delete a collection that is not live (its schema; ``main``'s tables are emptied); staged bytes
        and parsed documents no remaining collection refers to are pruned."""
        with self._state.conn() as conn, conn.transaction():
            if name == alias_target(conn, self._base, lock="FOR UPDATE"):
                raise StoreError(f"collection {name!r} is live; switch the alias away from it before dropping it")
            if not collection_exists(conn, self._base, name):
                raise StoreError(f"no collection {name!r} in the store {self._state.where}")
            drop_schema(conn, self._base, name)
        self._release_builder(name)
        self._prune_staging()
        log.info("collection_dropped: %s %s", self._state.where, name)

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder ended (its lock is free) before the alias moved to them; a
        build still running — in this process or another, on any host — is kept. Returns their names."""
        with self._state.conn() as conn:
            building = [
                str(r[0]) for r in conn.execute("SELECT name FROM rag_collections WHERE builder IS NOT NULL").fetchall()
            ]
        dropped = []
        for name in building:
            if name in self._builders:
                continue
            with self._state.conn() as conn, conn.transaction():
                live = alias_target(conn, self._base, lock="FOR SHARE")
                free = conn.execute(
                    "SELECT pg_try_advisory_xact_lock(hashtext(%s))", (_builder_key(self._base, name),)
                ).fetchone()
                row = conn.execute("SELECT builder FROM rag_collections WHERE name = %s FOR UPDATE", (name,)).fetchone()
                if not (free and free[0]) or row is None or row[0] is None or name == live:
                    continue
                drop_schema(conn, self._base, name)
            dropped.append(name)
            log.warning(
                "abandoned_build_dropped: %s: collection %s (its builder %s ended)", self._state.where, name, row[0]
            )
        if dropped:
            self._prune_staging()
        return dropped

    # -- helpers --------------------------------------------------------------------------------------------
    @contextmanager
    def _own_connection(self, *, keep: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A connection outside the pool, on the store's schema; closed afterwards unless *keep* (and
        always on an error). Errors of the server become :class:`StoreError`."""
        import psycopg

        conn = connect(self._state.dsn, self._state.options)
        try:
            conn.execute("SELECT set_config('search_path', %s, false)", (search_path(self._base, MAIN_COLLECTION),))
            yield conn
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"PostgreSQL store {self._state.where}: {type(exc).__name__}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        if not keep:
            conn.close()

    def _release_builder(self, name: str) -> None:
        conn = self._builders.pop(name, None)
        if conn is not None:
            conn.close()  # ends the session: its advisory lock goes with it

    def release_builders(self) -> None:
        """Give up every build this object holds (the store object closes)."""
        for name in list(self._builders):
            self._release_builder(name)

    def _analyzer(self) -> str:
        return self._state.keyword.analyzer.name
