"""Physical collections and the alias readers follow (a part of :class:`~ragwright.stores.sqlite.SqliteStore`).

A store file holds one or more *physical collections* (each its own ``documents``/``chunks``/
``parents`` tables; ``main`` keeps the historical names) and an *alias* (``live``) naming the one
readers use. A blue/green reindex builds a new collection beside the live one, then moves the alias in
one transaction. A store object re-reads the alias whenever the file changed (``PRAGMA data_version``),
so readers follow a switch without reopening — unless the new collection was embedded with another
model than the one this store object was bound with: such a store keeps reading its collection (still
valid until it is dropped) and refuses writes, with an error saying to reopen with the new model
(following is the handle's: :meth:`~ragwright.stores.sqlite.handle.SqliteHandle.follow`).

A collection created to be built (``create_collection(building=True)``, a reindex) names its builder
(host, process id and start time) until the alias moves to it. When that process is gone — a reindex
killed mid-build — the half-built collection is dropped the next time the file is opened or a reindex
starts (:meth:`SqliteCollections.drop_abandoned_builds`, logged as ``abandoned_build_dropped``).
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragwright.errors import StoreError
from ragwright.stores.base import CollectionInfo
from ragwright.stores.common import check_embedder
from ragwright.stores.sqlite.schema import LIVE_ALIAS, MAIN_COLLECTION, Tables, collection_schema
from ragwright.stores.sqlite.sparse import sparse_table

if TYPE_CHECKING:
    from ragwright.stores.sqlite.handle import SqliteHandle

log = logging.getLogger(__name__)

#: The ``rag_metadata`` key (per collection) naming the process building a collection.
BUILDER_KEY = "building"


def _proc_stat(pid: int) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name (state first), or [] when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return []


def builder_tag() -> str:
    """This process as a collection's builder: ``host:pid:start time`` (clock ticks since boot)."""
    fields = _proc_stat(os.getpid())
    started = fields[19].decode() if len(fields) > 19 else ""
    return f"{socket.gethostname()}:{os.getpid()}:{started}"


def builder_gone(tag: str) -> bool:
    """Whether the builder named by *tag* has ended (only a builder on this host can be checked; a
    process id reused by another process, or a zombie, counts as ended)."""
    host, pid_text, started = ([*tag.rsplit(":", 2), "", ""])[:3]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # someone else's process: the start time tells whether it is our builder
    fields = _proc_stat(pid)
    if not fields:
        return False  # no /proc: alive as far as we can tell
    return fields[0] in (b"Z", b"X") or (bool(started) and len(fields) > 19 and fields[19].decode() != started)


class SqliteCollections:
    """Collections and the alias of one store file, administered through the store's handle."""

    def __init__(self, handle: SqliteHandle, prune: Callable[[], object]) -> None:
        """*prune*: drops staged rows no remaining collection refers to (after a collection is dropped)."""
        self._h, self._prune = handle, prune

    # -- setup (inside the schema transaction) ----------------------------------------------------------
    def init(self) -> None:
        """Register ``main`` and the alias when missing (new file, or migration from version 1), create
        every registered collection's tables, and start on the alias's collection."""
        conn = self._h.conn
        if conn.execute("SELECT 1 FROM aliases WHERE alias = ?", (LIVE_ALIAS,)).fetchone() is None:
            conn.execute(
                "INSERT OR IGNORE INTO collections(name, created_at) VALUES (?, ?)", (MAIN_COLLECTION, time.time())
            )
            conn.execute(
                "INSERT INTO aliases(alias, collection, switched_at) VALUES (?, ?, ?)",
                (LIVE_ALIAS, MAIN_COLLECTION, time.time()),
            )
        for (name,) in conn.execute("SELECT name FROM collections").fetchall():
            for statement in collection_schema(Tables.of(name)):
                conn.execute(statement)
        self._h.tables = Tables.of(self._h.alias_target())

    def wipe(self) -> None:
        """The collection guard's wipe: drop every collection but ``main``, point the alias at it."""
        conn = self._h.conn
        for (name,) in conn.execute("SELECT name FROM collections WHERE name != ?", (MAIN_COLLECTION,)):
            self._drop_tables(Tables.of(name))
        conn.execute("DELETE FROM collections WHERE name != ?", (MAIN_COLLECTION,))
        conn.execute("DELETE FROM rag_metadata WHERE key LIKE 'embedding_%@%'")
        conn.execute("UPDATE aliases SET collection = ?, previous = NULL", (MAIN_COLLECTION,))
        conn.execute(
            "INSERT OR IGNORE INTO collections(name, created_at) VALUES (?, ?)", (MAIN_COLLECTION, time.time())
        )
        self._h.tables = Tables.of(MAIN_COLLECTION)
        for statement in collection_schema(self._h.tables):
            conn.execute(statement)

    def pin(self, name: str) -> None:
        """Read and write the collection *name* from now on, never following the alias (at construction:
        ``SqliteStore(pinned=name)``)."""
        if not self._h.exists(name):
            raise StoreError(f"no collection {name!r} in {self._h.path}")
        self._h.tables, self._h.pinned = Tables.of(name), True

    # -- the embedding binding of the collection read now ----------------------------------------------
    def embedder_spec(self) -> str | None:
        h = self._h
        with h.lock:
            h.version()
            return h.meta(h.tables.meta_key("embedding_spec"))

    def bind_embedder(self, name: str, dimension: int, spec: str | None) -> None:
        h = self._h
        with h.read_snapshot():  # already bound to it (every open after the first): nothing to write
            bound = h.embedding_model()
            h.check_writable()  # binding declares writes to come: a store object left behind refuses
            check_embedder(bound, name, dimension, f"the store {h.path}")
            if bound == (name, dimension) and (spec is None or self.embedder_spec() == spec):
                h.bound_here = (name, dimension)
                return
        with h.transaction():
            check_embedder(h.embedding_model(), name, dimension, f"the store {h.path}")
            h.set_meta(h.tables.meta_key("embedding_model"), name)
            h.set_meta(h.tables.meta_key("embedding_dimension"), str(dimension))
            if spec is not None:
                h.set_meta(h.tables.meta_key("embedding_spec"), spec)
            h.bound_here = (name, dimension)

    # -- administration ------------------------------------------------------------------------------------
    @property
    def live_collection(self) -> str:
        """The physical collection the ``live`` alias names now."""
        with self._h.lock:
            return self._h.alias_target()

    @property
    def current_collection(self) -> str:
        """The physical collection this store object reads (the live one unless pinned or stale)."""
        with self._h.lock:
            return self._h.tables.name

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the file, with its model and sizes."""
        out = []
        with self._h.lock:
            live = self._h.alias_target()
            for name, created in self._h.conn.execute("SELECT name, created_at FROM collections ORDER BY created_at"):
                t = Tables.of(name)
                (docs,) = self._h.conn.execute(
                    f"SELECT COUNT(*) FROM {t.documents} WHERE status = 'indexed'"
                ).fetchone()
                (chunks,) = self._h.conn.execute(f"SELECT COUNT(*) FROM {t.chunks}").fetchone()
                bound = self._h.binding(name)
                out.append(
                    CollectionInfo(
                        name,
                        name == live,
                        bound[0] if bound else None,
                        bound[1] if bound else None,
                        int(docs),
                        int(chunks),
                        float(created),
                    )
                )
        return out

    def create_collection(self, note: str = "", *, building: bool = False) -> str:
        """A new, empty physical collection beside the others (not live); returns its name.

        *building*: this process is about to build it; if the process ends before the alias moves to
        it, the collection is dropped as abandoned (see the module docstring)."""
        with self._h.transaction():
            names = [r[0] for r in self._h.conn.execute("SELECT name FROM collections")]
            numbers = [int(n[1:]) for n in names if n.startswith("g") and n[1:].isdigit()]
            name = f"g{max(numbers, default=1) + 1}"
            self._h.conn.execute(
                "INSERT INTO collections(name, created_at, note) VALUES (?, ?, ?)", (name, time.time(), note)
            )
            for statement in collection_schema(Tables.of(name)):
                self._h.conn.execute(statement)
            if building:
                self._h.set_meta(Tables.of(name).meta_key(BUILDER_KEY), builder_tag())
        return name

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder process ended before the alias moved to them (a reindex
        killed mid-build); returns their names. A build still running, or on another host, is kept."""
        with self._h.lock:
            rows = self._h.conn.execute(
                "SELECT key, value FROM rag_metadata WHERE key LIKE ?", (f"{BUILDER_KEY}@%",)
            ).fetchall()
        gone = [str(k).split("@", 1)[1] for k, v in rows if builder_gone(str(v))]
        dropped = []
        for name in gone:
            with self._h.transaction():
                tag = self._h.meta(Tables.of(name).meta_key(BUILDER_KEY))
                if tag is None or not builder_gone(tag) or name == self._h.alias_target():
                    continue
                self._drop_tables(Tables.of(name))
                self._h.conn.execute("DELETE FROM collections WHERE name = ?", (name,))
                self._h.conn.execute("UPDATE aliases SET previous = NULL WHERE previous = ?", (name,))
                self._h.conn.execute("DELETE FROM rag_metadata WHERE key LIKE ?", (f"%@{name}",))
                self._h.local_writes += 1
            dropped.append(name)
            log.warning("abandoned_build_dropped: %s: collection %s (its builder %s ended)", self._h.path, name, tag)
        if dropped:
            with self._h.lock:
                self._h.followed_at = None
            self._prune()
        return dropped

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point the ``live`` alias at *name* in one transaction; returns the previous collection.

        *check* runs inside the transaction (no other writer can interleave); when it returns a reason,
        the transaction is rolled back, the alias stays, and :class:`StoreError` carries the reason.
        """
        with self._h.transaction():
            if not self._h.exists(name):
                raise StoreError(f"no collection {name!r} in {self._h.path}")
            if self._h.binding(name) is None:
                raise StoreError(f"collection {name!r} has no embedding model bound: it was never built")
            reason = check() if check is not None else None
            if reason is not None:
                raise StoreError(reason)
            previous = self._h.alias_target()
            self._h.conn.execute(
                "UPDATE aliases SET collection = ?, previous = ?, switched_at = ? WHERE alias = ?",
                (name, previous, time.time(), LIVE_ALIAS),
            )
            self._h.conn.execute("DELETE FROM rag_metadata WHERE key = ?", (Tables.of(name).meta_key(BUILDER_KEY),))
            self._h.bump_index_version()
            self._h.local_writes += 1
        with self._h.lock:
            self._h.followed_at = None
        log.info("alias_switched: %s live %s -> %s", self._h.path, previous, name)
        return previous

    def drop_collection(self, name: str) -> None:
        """Delete a physical collection that is not live (its tables and binding); staged bytes and
        parsed documents no remaining collection refers to are pruned."""
        with self._h.transaction():
            if name == self._h.alias_target():
                raise StoreError(f"collection {name!r} is live; switch the alias away from it before dropping it")
            if not self._h.exists(name):
                raise StoreError(f"no collection {name!r} in {self._h.path}")
            self._drop_tables(Tables.of(name))
            self._h.conn.execute("DELETE FROM collections WHERE name = ?", (name,))
            self._h.conn.execute("UPDATE aliases SET previous = NULL WHERE previous = ?", (name,))
            t = Tables.of(name)
            for key in ("embedding_model", "embedding_dimension", "embedding_spec", BUILDER_KEY):
                self._h.conn.execute("DELETE FROM rag_metadata WHERE key = ?", (t.meta_key(key),))
            self._h.local_writes += 1
        with self._h.lock:
            self._h.followed_at = None
        self._prune()
        log.info("collection_dropped: %s %s", self._h.path, name)

    def _drop_tables(self, t: Tables) -> None:
        for table in (t.chunks, t.parents, t.documents, sparse_table(t.name)):
            self._h.conn.execute(f"DROP TABLE IF EXISTS {table}")
        for suffix in (".ann", ".ann.keys.npz", ".ann.json", ".bm25", ".bm25.json"):  # derived state's snapshots
            Path(f"{self._h.path}.{t.name}{suffix}").unlink(missing_ok=True)


def live_hash_sql(conn: sqlite3.Connection) -> str:
    """SQL listing the content hashes any collection's live records refer to (staging is shared)."""
    names = [r[0] for r in conn.execute("SELECT name FROM collections")]
    return (
        " UNION ".join(f"SELECT content_hash FROM {Tables.of(n).documents} WHERE status != 'deleted'" for n in names)
        or "SELECT NULL WHERE 0"
    )
