"""The SQLite schema of a ragwright store, and row ↔ object conversion."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ragwright.errors import StoreError
from ragwright.model.chunk import Chunk
from ragwright.stores.common import chunk_from_columns

if TYPE_CHECKING:
    from ragwright.stores.sql_registry import SqlRegistry

log = logging.getLogger(__name__)

#: 2 added physical collections and aliases (blue/green reindex); 3 the registry fields as typed columns
#: (stores/sql_registry.py). Older files are migrated on open.
SCHEMA_VERSION: Final = 3
#: Older versions a file is upgraded from on open (after a backup copy, see :func:`backup_before_upgrade`).
UPGRADABLE_VERSIONS: Final = ("1", "2")

#: The physical collection every store file starts with; its tables keep their historical names.
MAIN_COLLECTION: Final = "main"
#: The alias readers follow; ``ragwright reindex`` moves it to a new physical collection.
LIVE_ALIAS: Final = "live"

CHUNK_COLUMNS: Final = (
    "chunk_id, document_id, position, text, embed_text, section_path, page, page_end, parent_id, "
    "prev_id, next_id, metadata, tenant, acl"
)


class Tables(NamedTuple):
    """The table names of one physical collection (``main``: ``documents``, ``chunks``, ``parents``)."""

    name: str
    documents: str
    chunks: str
    parents: str

    @classmethod
    def of(cls, name: str) -> Tables:
        if name == MAIN_COLLECTION:
            return cls(name, "documents", "chunks", "parents")
        if not name.isidentifier() or not name.isascii():
            raise ValueError(f"invalid collection name {name!r}")
        return cls(name, f"documents__{name}", f"chunks__{name}", f"parents__{name}")

    def meta_key(self, key: str) -> str:
        """A ``rag_metadata`` key of this collection (the embedding binding is per collection)."""
        return key if self.name == MAIN_COLLECTION else f"{key}@{self.name}"


#: Tables shared by every collection of a file: staging is by content hash, so a new collection
#: re-uses the raw bytes and parsed documents of the live one.
GLOBAL_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS rag_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS staged (
        content_hash TEXT PRIMARY KEY,
        data BLOB NOT NULL,
        size INTEGER NOT NULL
    )""",
    # Staging leases of ingestion runs in flight (see stores.base.Staging); added beside version 2.
    """CREATE TABLE IF NOT EXISTS staging_leases (
        run_id TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        leased_at REAL NOT NULL,
        PRIMARY KEY (run_id, content_hash)
    )""",
    """CREATE TABLE IF NOT EXISTS parsed (
        content_hash TEXT NOT NULL,
        parser_version TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (content_hash, parser_version)
    )""",
    """CREATE TABLE IF NOT EXISTS collections (
        name TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        note TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE IF NOT EXISTS aliases (
        alias TEXT PRIMARY KEY,
        collection TEXT NOT NULL,
        previous TEXT,
        switched_at REAL NOT NULL
    )""",
    # Which document each chunk write touched and which chunk ids it removed, under the index version
    # that write produced: the BM25 index (derived state, often loaded from a snapshot) catches up with
    # other processes' writes from here instead of being rebuilt. The recent entries are kept (chunks.py);
    # added beside version 2.
    """CREATE TABLE IF NOT EXISTS chunk_changes (
        version INTEGER PRIMARY KEY,
        collection TEXT NOT NULL,
        document_id TEXT NOT NULL,
        removed TEXT NOT NULL
    )""",
)

#: The tables of one physical collection, formatted with :class:`Tables` names.
COLLECTION_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS {documents} (
        document_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        parser_version TEXT NOT NULL DEFAULT '',
        chunker_version TEXT NOT NULL DEFAULT '',
        embedding_model TEXT NOT NULL DEFAULT '',
        chunk_count INTEGER NOT NULL DEFAULT 0,
        stage TEXT,
        reason TEXT,
        tenant TEXT NOT NULL,
        acl TEXT NOT NULL,
        source_root TEXT,
        title TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{{}}',
        name_hint TEXT,
        parent_document TEXT,
        children TEXT,
        metadata_keys TEXT,
        warnings TEXT,
        source_meta TEXT,
        error_type TEXT,
        attempts INTEGER
    )""",
    "CREATE INDEX IF NOT EXISTS {documents}_status ON {documents}(status)",
    "CREATE INDEX IF NOT EXISTS {documents}_model ON {documents}(embedding_model)",
    """CREATE TABLE IF NOT EXISTS {chunks} (
        rowid INTEGER PRIMARY KEY,
        chunk_id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        embed_text TEXT,
        section_path TEXT NOT NULL,
        page INTEGER,
        page_end INTEGER,
        parent_id TEXT,
        prev_id TEXT,
        next_id TEXT,
        metadata TEXT NOT NULL,
        tenant TEXT NOT NULL,
        acl TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS {chunks}_document ON {chunks}(document_id, position)",
    # Tenant and ACL together: the security filter's eligible-set scan reads this index, not the rows
    # (at 1M chunks ~1 s instead of a pass over 4.5 GB of rows). Files made before it also keep the
    # tenant-only index they were created with; opening one adds this (one pass over the rows).
    "CREATE INDEX IF NOT EXISTS {chunks}_access ON {chunks}(tenant, acl)",
    """CREATE TABLE IF NOT EXISTS {parents} (
        parent_id TEXT PRIMARY KEY,
        document_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tenant TEXT NOT NULL,
        acl TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS {parents}_document ON {parents}(document_id)",
)


def backup_before_upgrade(conn: sqlite3.Connection, path: Path) -> Path | None:
    """Copy a store file that opening is about to upgrade to ``<file>.bak-v<old version>``, first.

    Returns the backup's path (``None`` when nothing will be upgraded). The copy is SQLite's online
    backup (consistent, WAL included) written beside the file and renamed into place; when it cannot
    be written the store is not opened, so no upgrade ever runs without its backup.
    """
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "rag_metadata" not in tables:
        return None
    row = conn.execute("SELECT value FROM rag_metadata WHERE key = 'schema_version'").fetchone()
    old = None if row is None else str(row[0])
    if old not in UPGRADABLE_VERSIONS:
        return None
    target = path.with_name(f"{path.name}.bak-v{old}")
    part = target.with_name(target.name + ".part")
    try:
        part.unlink(missing_ok=True)
        copy = sqlite3.connect(str(part))
        try:
            conn.backup(copy)
        finally:
            copy.close()
        os.replace(part, target)
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        raise StoreError(
            f"{path} has store schema version {old} and must be upgraded to {SCHEMA_VERSION}, but the backup "
            f"copy {target} could not be written ({exc}); it was left untouched — free some space and retry"
        ) from exc
    log.warning(
        "schema_upgrade: %s: version %s -> %s; the old file is backed up at %s", path, old, SCHEMA_VERSION, target
    )
    return target


def collection_schema(tables: Tables) -> list[str]:
    """The DDL of one physical collection's tables."""
    return [s.format(**tables._asdict()) for s in COLLECTION_SCHEMA]


#: Everything a fresh file holds (the global tables and the ``main`` collection).
SCHEMA: Final = (*GLOBAL_SCHEMA, *collection_schema(Tables.of(MAIN_COLLECTION)))


def created_names(statements: Iterable[str]) -> set[str]:
    """The tables and indexes *statements* (``CREATE … IF NOT EXISTS name``) create."""
    return {m.group(1) for m in (_CREATED.search(s) for s in statements) if m is not None}


_CREATED: Final = re.compile(r"IF NOT EXISTS\s+(\w+)")


def schema_in_place(conn: sqlite3.Connection, collection: str | None) -> bool:
    """Whether the file already holds everything opening it creates or sets — every table and index of
    the current schema (for every registered collection), its version, the alias, an index version, and
    *collection* when given — so that opening it writes nothing (and waits for no writer). Call inside a
    read transaction."""

    def meta(key: str) -> str | None:
        row = conn.execute("SELECT value FROM rag_metadata WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
    if not created_names(GLOBAL_SCHEMA) <= names:
        return False
    if meta("schema_version") != str(SCHEMA_VERSION) or meta("index_version") is None:
        return False
    if collection is not None and meta("collection") != collection:
        return False
    if conn.execute("SELECT 1 FROM aliases WHERE alias = ?", (LIVE_ALIAS,)).fetchone() is None:
        return False
    return all(
        created_names(collection_schema(Tables.of(name))) <= names
        for (name,) in conn.execute("SELECT name FROM collections").fetchall()
    )


def upgrade_registry(conn: sqlite3.Connection, registry: SqlRegistry, old_version: str | None) -> None:
    """Version 3: give every collection's registry the typed columns and move the registry fields of
    older rows into them (inside the schema transaction; once, when a file older than 3 is opened)."""
    if old_version not in UPGRADABLE_VERSIONS:
        return
    for (name,) in conn.execute("SELECT name FROM collections").fetchall():
        table = Tables.of(name).documents
        existing = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}
        registry.add_columns(conn.execute, table, existing)
        moved = registry.backfill(conn.execute, table)
        log.info("registry_upgraded: collection %s, %d records", name, moved)


def chunk_from_row(row: tuple[Any, ...]) -> Chunk:
    return chunk_from_columns(row, json.loads)


def chunk_row(c: Chunk, vector: bytes) -> tuple[Any, ...]:
    return (
        c.id,
        c.document_id,
        c.position,
        c.text,
        c.embed_text,
        json.dumps(list(c.section_path)),
        c.page,
        c.page_end,
        c.parent_id,
        c.prev_id,
        c.next_id,
        json.dumps(c.metadata),
        c.tenant,
        json.dumps(list(c.acl)),
        vector,
    )
