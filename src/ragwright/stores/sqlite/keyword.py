"""The SQLite store's BM25 index: built from the stored chunks, loaded from a snapshot beside the file,
and brought up to date from the store's change log.

The index is derived state. From :data:`SNAPSHOT_MIN_CHUNKS` chunks it is also kept in a snapshot
(``<store>.<collection>.bm25``, :meth:`Bm25Index.save`, with a ``.json`` beside it naming the chunks
table and the store's index version it reflects), written after a rebuild and, by the store, at close
when the index has moved on far enough since. Every chunk write — by any process — bumps the index
version and logs which document it touched and which chunk ids it removed (``chunk_changes``), so an
index at an older version (a loaded snapshot, or this process's index after another process wrote)
:func:`catches up <catch_up>` by re-reading only the touched documents' chunks; it is rebuilt only when
the log no longer reaches back that far. At 1M chunks a rebuild analyses every text (minutes), a load
reads arrays (seconds): ``benchmarks/RESULTS.md``, "SQLite store at 1M chunks".
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ragwright.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from ragwright.index import Analyzer, Bm25Index

__all__ = [
    "SAVE_AFTER_CHANGES",
    "SNAPSHOT_MIN_CHUNKS",
    "build_index",
    "catch_up",
    "load_snapshot",
    "save_snapshot",
    "snapshot_path",
]

log = logging.getLogger(__name__)

#: Stores with fewer chunks rebuild the index at open (well under a second) and keep no snapshot.
SNAPSHOT_MIN_CHUNKS: Final = 20_000
#: At close, the snapshot is rewritten once the index is this many versions past it (fewer: the next open
#: catches up from the log, which is cheaper than writing the snapshot).
SAVE_AFTER_CHANGES: Final = 2_000
#: Rows analysed per batch while building (bounds the texts held at once).
_BATCH: Final = 5_000


def snapshot_path(store_path: Path, collection: str) -> Path | None:
    """Where the BM25 snapshot of *collection* lives (``None`` for an in-memory database)."""
    if str(store_path) in ("", ":memory:"):
        return None
    return Path(f"{store_path}.{collection}.bm25")


def _meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def build_index(conn: sqlite3.Connection, table: str, analyzer: Analyzer) -> Bm25Index:
    """A BM25 index over every chunk's embedded text, analysed in its recorded language (call under the
    store's lock); rows are read in batches so that the texts are never all in memory at once."""
    from ragwright.index import Bm25Index

    index = Bm25Index(analyzer)
    cur = conn.execute(
        f"SELECT chunk_id, COALESCE(embed_text, text), json_extract(metadata, '$.language') FROM {table}"
    )
    while rows := cur.fetchmany(_BATCH):
        index.upsert((r[0], r[1], r[2] if isinstance(r[2], str) else None) for r in rows)
    return index


def load_snapshot(path: Path | None, analyzer: Analyzer, table: str) -> tuple[Bm25Index, int] | None:
    """The snapshot's index and the index version it reflects, when it was written for *table* with the
    same analyzer; ``None`` (logged) when there is none or it cannot be used."""
    from ragwright.index import Bm25Index

    if path is None or not path.is_file():
        return None
    try:
        meta = json.loads(_meta_path(path).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("table") != table or not isinstance(meta.get("version"), int):
            log.info("keyword_snapshot_ignored: %s was written for another table (rebuilding)", path)
            return None
        index = Bm25Index.load(path, analyzer=analyzer)
    except (OSError, ValueError, StoreError, ConfigError) as exc:
        log.warning("keyword_snapshot_unusable: %s: %s (rebuilding)", path, exc)
        return None
    return index, int(meta["version"])


def save_snapshot(index: Bm25Index, path: Path | None, version: int, table: str) -> bool:
    """Write *index*, which reflects index *version*, as the snapshot; ``False`` (logged) when it could not be."""
    if path is None:
        return False
    meta = _meta_path(path)
    try:
        meta.unlink(missing_ok=True)  # a reader never pairs the new index with the old meta
        index.save(path)
        tmp = meta.with_name(f".{meta.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"table": table, "version": version, "chunks": len(index)}), encoding="utf-8")
        os.replace(tmp, meta)
    except OSError as exc:
        log.warning("keyword_snapshot_failed: could not write %s (%s); the index is rebuilt when needed", path, exc)
        return False
    return True


def catch_up(conn: sqlite3.Connection, index: Bm25Index, table: str, collection: str, since: int, until: int) -> bool:
    """Bring *index*, which reflects index version *since*, to version *until* from the change log (call
    inside one read transaction, under the store's lock). ``False`` when the log does not hold every
    version in between (pruned, or a write that rewrote the tables wholesale): rebuild then."""
    if until == since:
        return True
    if until < since:
        return False
    rows = conn.execute(
        "SELECT collection, document_id, removed FROM chunk_changes WHERE version > ? AND version <= ?",
        (since, until),
    ).fetchall()
    if len(rows) != until - since:
        return False
    removed: list[str] = []
    documents: set[str] = set()
    for name, document_id, gone in rows:
        if name == collection:
            removed.extend(json.loads(gone))
            documents.add(document_id)
    index.remove(removed)
    wanted = sorted(documents)
    for lo in range(0, len(wanted), _BATCH):  # the touched documents' chunks as they are now
        index.upsert(
            (r[0], r[1], r[2] if isinstance(r[2], str) else None)
            for r in conn.execute(
                f"SELECT chunk_id, COALESCE(embed_text, text), json_extract(metadata, '$.language') FROM {table} "
                "WHERE document_id IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted[lo : lo + _BATCH]),),
            )
        )
    log.debug("keyword_index_caught_up: %d versions, %d documents", until - since, len(documents))
    return True
