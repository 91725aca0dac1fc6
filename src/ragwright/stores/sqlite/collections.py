"""Physical collections and the alias readers follow (a mixin of :class:`SqliteStore`).

A store file holds one or more *physical collections* (each its own ``documents``/``chunks``/
``parents`` tables; ``main`` keeps the historical names) and an *alias* (``live``) naming the one
readers use. A blue/green reindex builds a new collection beside the live one, then moves the alias in
one transaction. A store object re-reads the alias whenever the file changed (``PRAGMA data_version``),
so readers follow a switch without reopening — unless the new collection was embedded with another
model than the one this store object was bound with: such a store keeps reading its collection (still
valid until it is dropped) and refuses writes, with an error saying to reopen with the new model.

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
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.base import CollectionInfo
from ragwright.stores.sqlite.schema import LIVE_ALIAS, MAIN_COLLECTION, Tables, collection_schema

if TYPE_CHECKING:
    from ragwright.index import Analyzer
    from ragwright.stores.sqlite.store import SqliteStore
    from ragwright.stores.sqlite.transaction import Transaction

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
    """Collections, the alias and following it; the host class provides the connection and state."""

    path: Path
    _ann_params: Any
    _conn: sqlite3.Connection
    _lock: threading.RLock
    _analyzer: Analyzer
    _t: Tables
    _pinned: bool
    _bound_here: tuple[str, int] | None
    _followed_at: tuple[int, int] | None
    _stale: str | None
    _local_writes: int
    _rowids: Any
    _bm25: Any
    _eligible_cache: dict[str, Any]
    _allowed_cache: dict[str, Any]

    def _transaction(self) -> Transaction:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _set_meta(self, key: str, value: str) -> None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    def _bump_index_version(self) -> None:  # pragma: no cover - provided by the host
        raise NotImplementedError

    # -- setup (inside the schema transaction) ----------------------------------------------------------
    def _init_collections(self) -> None:
        """Register ``main`` and the alias when missing (new file, or migration from version 1), create
        every registered collection's tables, and start on the alias's collection."""
        conn = self._conn
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
        self._t = Tables.of(self._alias_target())

    def _wipe_collections(self) -> None:
        """The collection guard's wipe: drop every collection but ``main``, point the alias at it."""
        for (name,) in self._conn.execute("SELECT name FROM collections WHERE name != ?", (MAIN_COLLECTION,)):
            self._drop_tables(Tables.of(name))
        self._conn.execute("DELETE FROM collections WHERE name != ?", (MAIN_COLLECTION,))
        self._conn.execute("DELETE FROM rag_metadata WHERE key LIKE 'embedding_%@%'")
        self._conn.execute("UPDATE aliases SET collection = ?, previous = NULL", (MAIN_COLLECTION,))
        self._conn.execute(
            "INSERT OR IGNORE INTO collections(name, created_at) VALUES (?, ?)", (MAIN_COLLECTION, time.time())
        )
        self._t = Tables.of(MAIN_COLLECTION)
        for statement in collection_schema(self._t):
            self._conn.execute(statement)

    def _alias_target(self) -> str:
        row = self._conn.execute("SELECT collection FROM aliases WHERE alias = ?", (LIVE_ALIAS,)).fetchone()
        return MAIN_COLLECTION if row is None else str(row[0])

    def _binding(self, name: str) -> tuple[str, int] | None:
        t = Tables.of(name)
        model, dim = self._meta(t.meta_key("embedding_model")), self._meta(t.meta_key("embedding_dimension"))
        return None if model is None or dim is None else (model, int(dim))

    def _exists(self, name: str) -> bool:
        return self._conn.execute("SELECT 1 FROM collections WHERE name = ?", (name,)).fetchone() is not None

    # -- following the alias ----------------------------------------------------------------------------
    def _follow(self) -> None:
        """Move to the alias's collection if it moved (call under the lock, when the file changed)."""
        if self._pinned:
            return
        target = self._alias_target()
        if target == self._t.name:
            self._stale = None
            return
        bound = self._bound_here
        theirs = self._binding(target)
        if bound is not None and theirs is not None and theirs != bound:
            if self._exists(self._t.name):
                if self._stale is None:
                    log.warning(
                        "alias_moved_model_changed: %s now serves collection %r (model %s); this store "
                        "object stays on %r (model %s) for reading until it is reopened",
                        self.path,
                        target,
                        theirs[0],
                        self._t.name,
                        bound[0],
                    )
                self._stale = (
                    f"the store {self.path} was reindexed: collection {target!r} (model {theirs[0]!r}) is "
                    f"live now; this store object was opened with model {bound[0]!r} — reopen it "
                    "(with the new model) to write"
                )
                return
            raise StoreError(
                f"the store {self.path} was reindexed with the model {theirs[0]!r} and the collection this "
                f"store object was reading ({self._t.name!r}, model {bound[0]!r}) was dropped; reopen the "
                "store with the new model"
            )
        log.info("alias_followed: %s %s -> %s", self.path, self._t.name, target)
        self._t, self._stale = Tables.of(target), None
        self._rowids, self._bm25 = None, None
        self._eligible_cache.clear()
        self._allowed_cache.clear()
        self._local_writes += 1

    def _check_writable(self) -> None:
        if self._stale is not None:
            raise StoreError(self._stale)

    # -- administration ------------------------------------------------------------------------------------
    @property
    def live_collection(self) -> str:
        """The physical collection the ``live`` alias names now."""
        with self._lock:
            return self._alias_target()

    @property
    def current_collection(self) -> str:
        """The physical collection this store object reads (the live one unless pinned or stale)."""
        with self._lock:
            return self._t.name

    def collections(self) -> list[CollectionInfo]:
        """Every physical collection of the file, with its model and sizes."""
        out = []
        with self._lock:
            live = self._alias_target()
            for name, created in self._conn.execute("SELECT name, created_at FROM collections ORDER BY created_at"):
                t = Tables.of(name)
                (docs,) = self._conn.execute(f"SELECT COUNT(*) FROM {t.documents} WHERE status = 'indexed'").fetchone()
                (chunks,) = self._conn.execute(f"SELECT COUNT(*) FROM {t.chunks}").fetchone()
                bound = self._binding(name)
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
        with self._transaction():
            names = [r[0] for r in self._conn.execute("SELECT name FROM collections")]
            numbers = [int(n[1:]) for n in names if n.startswith("g") and n[1:].isdigit()]
            name = f"g{max(numbers, default=1) + 1}"
            self._conn.execute(
                "INSERT INTO collections(name, created_at, note) VALUES (?, ?, ?)", (name, time.time(), note)
            )
            for statement in collection_schema(Tables.of(name)):
                self._conn.execute(statement)
            if building:
                self._set_meta(Tables.of(name).meta_key(BUILDER_KEY), builder_tag())
        return name

    def drop_abandoned_builds(self) -> list[str]:
        """Drop the collections whose builder process ended before the alias moved to them (a reindex
        killed mid-build); returns their names. A build still running, or on another host, is kept."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, value FROM rag_metadata WHERE key LIKE ?", (f"{BUILDER_KEY}@%",)
            ).fetchall()
        gone = [str(k).split("@", 1)[1] for k, v in rows if builder_gone(str(v))]
        dropped = []
        for name in gone:
            with self._transaction():
                tag = self._meta(Tables.of(name).meta_key(BUILDER_KEY))
                if tag is None or not builder_gone(tag) or name == self._alias_target():
                    continue
                self._drop_tables(Tables.of(name))
                self._conn.execute("DELETE FROM collections WHERE name = ?", (name,))
                self._conn.execute("UPDATE aliases SET previous = NULL WHERE previous = ?", (name,))
                self._conn.execute("DELETE FROM rag_metadata WHERE key LIKE ?", (f"%@{name}",))
                self._local_writes += 1
            dropped.append(name)
            log.warning("abandoned_build_dropped: %s: collection %s (its builder %s ended)", self.path, name, tag)
        if dropped:
            with self._lock:
                self._followed_at = None
            self.prune_staging()
        return dropped

    def open_collection(self, name: str) -> SqliteStore:
        """A store object (its own connection) pinned to the physical collection *name*: it never follows
        the alias. Used to build and evaluate a collection before it goes live."""
        from ragwright.stores.sqlite.store import SqliteStore

        if str(self.path) == ":memory:":
            raise StoreError("an in-memory SQLite store has one connection only; reindex a store file")
        return SqliteStore(self.path, keyword_analyzer=self._analyzer.name, ann=self._ann_params, pinned=name)

    def open_live(self) -> SqliteStore:
        """A new store object (its own connection) over the live collection, following the alias."""
        from ragwright.stores.sqlite.store import SqliteStore

        if str(self.path) == ":memory:":
            raise StoreError("an in-memory SQLite store has one connection only; reindex a store file")
        return SqliteStore(self.path, keyword_analyzer=self._analyzer.name, ann=self._ann_params)

    def _pin(self, name: str) -> None:
        """Read and write the collection *name* from now on, never following the alias (at construction,
        inside the schema setup: ``SqliteStore(pinned=name)``)."""
        if not self._exists(name):
            raise StoreError(f"no collection {name!r} in {self.path}")
        self._t, self._pinned = Tables.of(name), True

    def switch_alias(self, name: str, *, check: Callable[[], str | None] | None = None) -> str | None:
        """Point the ``live`` alias at *name* in one transaction; returns the previous collection.

        *check* runs inside the transaction (no other writer can interleave); when it returns a reason,
        the transaction is rolled back, the alias stays, and :class:`StoreError` carries the reason.
        """
        with self._transaction():
            if not self._exists(name):
                raise StoreError(f"no collection {name!r} in {self.path}")
            if self._binding(name) is None:
                raise StoreError(f"collection {name!r} has no embedding model bound: it was never built")
            reason = check() if check is not None else None
            if reason is not None:
                raise StoreError(reason)
            previous = self._alias_target()
            self._conn.execute(
                "UPDATE aliases SET collection = ?, previous = ?, switched_at = ? WHERE alias = ?",
                (name, previous, time.time(), LIVE_ALIAS),
            )
            self._conn.execute("DELETE FROM rag_metadata WHERE key = ?", (Tables.of(name).meta_key(BUILDER_KEY),))
            self._bump_index_version()
            self._local_writes += 1
        with self._lock:
            self._followed_at = None
        log.info("alias_switched: %s live %s -> %s", self.path, previous, name)
        return previous

    def drop_collection(self, name: str) -> None:
        """Delete a physical collection that is not live (its tables and binding); staged bytes and
        parsed documents no remaining collection refers to are pruned."""
        with self._transaction():
            if name == self._alias_target():
                raise StoreError(f"collection {name!r} is live; switch the alias away from it before dropping it")
            if not self._exists(name):
                raise StoreError(f"no collection {name!r} in {self.path}")
            self._drop_tables(Tables.of(name))
            self._conn.execute("DELETE FROM collections WHERE name = ?", (name,))
            self._conn.execute("UPDATE aliases SET previous = NULL WHERE previous = ?", (name,))
            t = Tables.of(name)
            for key in ("embedding_model", "embedding_dimension", "embedding_spec", BUILDER_KEY):
                self._conn.execute("DELETE FROM rag_metadata WHERE key = ?", (t.meta_key(key),))
            self._local_writes += 1
        with self._lock:
            self._followed_at = None
        self.prune_staging()
        log.info("collection_dropped: %s %s", self.path, name)

    def _drop_tables(self, t: Tables) -> None:
        sparse = "sparse_vectors" if t.name == "main" else f"sparse_vectors__{t.name}"
        for table in (t.chunks, t.parents, t.documents, sparse):
            self._conn.execute(f"DROP TABLE IF EXISTS {table}")
        for suffix in (".ann", ".ann.keys.npz", ".ann.json", ".bm25", ".bm25.json"):  # derived state's snapshots
            Path(f"{self.path}.{t.name}{suffix}").unlink(missing_ok=True)

    def _live_hash_sql(self) -> str:
        """SQL listing the content hashes any collection's live records refer to (staging is shared)."""
        names = [r[0] for r in self._conn.execute("SELECT name FROM collections")]
        return (
            " UNION ".join(
                f"SELECT content_hash FROM {Tables.of(n).documents} WHERE status != 'deleted'" for n in names
            )
            or "SELECT NULL WHERE 0"
        )

    def prune_staging(self, *, release: str | None = None) -> int:  # pragma: no cover - provided by the host
        raise NotImplementedError
