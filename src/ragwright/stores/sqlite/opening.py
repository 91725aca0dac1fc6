"""Opening a SQLite store file: the connection, then the schema (created, checked or upgraded).

Opening a file whose schema is in place writes nothing (so it waits for no writer): it is checked in a
read transaction first. Otherwise one write transaction creates or upgrades it — an older file is backed
up first (:func:`~ragwright.stores.sqlite.schema.backup_before_upgrade`) — and applies the
``collection`` stale-data guard: when a name is given and the file holds a different one, every
persisted row is wiped (logged as ``collection_mismatch_wiped``), the rows of the tables features keep
beside the store's too (:mod:`~ragwright.stores.sqlite.side_tables`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ragwright.errors import StoreError
from ragwright.stores.sqlite.dialect import SQLITE_REGISTRY
from ragwright.stores.sqlite.handle import SqliteHandle
from ragwright.stores.sqlite.schema import (
    GLOBAL_SCHEMA,
    MAIN_COLLECTION,
    SCHEMA_VERSION,
    UPGRADABLE_VERSIONS,
    Tables,
    backup_before_upgrade,
    schema_in_place,
    upgrade_registry,
)
from ragwright.stores.sqlite.side_tables import empty_side_tables
from ragwright.stores.sqlite.sparse import sparse_table
from ragwright.stores.sqlite.transaction import busy_error, is_busy

if TYPE_CHECKING:
    from ragwright.stores.sqlite.collections import SqliteCollections

__all__ = ["connect", "init_schema", "unreadable"]

log = logging.getLogger(__name__)

#: The store's own tables the guard's wipe empties (the other collections' are dropped): main's, the
#: staging area, the change log, main's sparse vectors and the tag tables.
_WIPED: Final = (
    "chunks",
    "documents",
    "staged",
    "parsed",
    "parents",
    "staging_leases",
    "chunk_changes",
    sparse_table(MAIN_COLLECTION),
    "tag_documents",
    "tag_vectors",
)


def connect(path: Path, busy_timeout: float) -> SqliteHandle:
    """A handle over a new connection to *path* (the folder is created; a directory is refused)."""
    if path.exists() and path.is_dir():
        raise StoreError(f"{path} is a directory; give the path of a store file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder for the store {path}: {exc.strerror}") from exc
    try:
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout)
    except sqlite3.DatabaseError as exc:
        raise unreadable(path, exc, busy_timeout) from exc
    return SqliteHandle(path, conn, busy_timeout)


def unreadable(path: Path, exc: sqlite3.DatabaseError, busy_timeout: float) -> StoreError:
    """The error opening raises: busy (another process holds a lock: the file is fine, try again later),
    or not a readable store."""
    if is_busy(exc):
        return busy_error(path, exc, busy_timeout)
    return StoreError(
        f"{path} is not a readable ragwright store ({exc}); it was left untouched — "
        "move it aside or choose another store path"
    )


def init_schema(h: SqliteHandle, collections: SqliteCollections, collection: str | None) -> Path | None:
    """Create, check or upgrade the schema and start on the alias's collection; returns where an older
    file was backed up before it was upgraded (``None``: no upgrade)."""
    conn = h.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if tables and "rag_metadata" not in tables:
        raise StoreError(
            f"{h.path} is an SQLite database but not a ragwright store; it was left untouched — "
            "choose another store path"
        )
    backup = backup_before_upgrade(conn, h.path)  # before a version-1 file changes
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        conn.execute("PRAGMA journal_mode=WAL")  # once per file (a new one): readers then never wait
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    with h.read_snapshot():  # the schema in place: nothing to write, so no write lock to wait for
        if schema_in_place(conn, collection):
            h.tables = Tables.of(h.alias_target())
            return backup
    with h.transaction():
        for statement in GLOBAL_SCHEMA:
            conn.execute(statement)
        version = h.meta("schema_version")
        if version is None or version in UPGRADABLE_VERSIONS:  # new file, or an older one to upgrade
            h.set_meta("schema_version", str(SCHEMA_VERSION))
        elif version != str(SCHEMA_VERSION):
            raise StoreError(
                f"{h.path} has store schema version {version}; this ragwright reads version "
                f"{SCHEMA_VERSION}. Re-ingest into a new store"
            )
        collections.init()
        upgrade_registry(conn, SQLITE_REGISTRY, version)
        if collection is not None:
            stored = h.meta("collection")
            if stored is not None and stored != collection:
                log.warning(
                    "collection_mismatch_wiped: %s held collection %r, opened as %r; all rows wiped",
                    h.path,
                    stored,
                    collection,
                )
                collections.wipe()
                present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                for table in _WIPED:
                    if table in present:  # main's sparse vectors and the tags are created on first use
                        conn.execute(f"DELETE FROM {table}")
                conn.execute("DELETE FROM rag_metadata WHERE key LIKE 'sparse_encoder%'")
                empty_side_tables(conn)  # the graph's, the hierarchy's, memory's rows (their tables stay)
                conn.execute("DELETE FROM rag_metadata WHERE key LIKE 'embedding_%'")
                h.bump_index_version()
            h.set_meta("collection", collection)
        # The index version starts from the clock, so a re-created file never reuses old versions.
        conn.execute(
            "INSERT OR IGNORE INTO rag_metadata(key, value) VALUES ('index_version', ?)",
            (str(time.time_ns() // 1000),),
        )
    return backup
