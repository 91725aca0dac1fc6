"""The keyword arm's derived state: ragwright's BM25 index, fed from the database.

PostgreSQL's own text ranking is not BM25, so the store keeps a :class:`~ragwright.index.Bm25Index`
over every chunk's embedded text in this process. It is *derived* state, versioned by the database's
change counter (``rag_state.version``): every write transaction bumps the counter and logs which
document it touched and which chunk ids it removed (``rag_changes``). Before a search the mirror
catches up with the versions it has not seen — this process's writes and other processes' alike —
by re-reading the touched documents' chunks; when the log was pruned past its version it rebuilds.
An optional snapshot file (``Bm25Index.save``) keyed by the store id and version avoids the rebuild
when a process opens a large store.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError, StoreError

if TYPE_CHECKING:
    import psycopg

    from ragwright.index import Analyzer, Bm25Index

log = logging.getLogger(__name__)

_COLUMNS = "COALESCE(embed_text, text), metadata->>'language'"


class KeywordMirror:
    """A BM25 index kept in step with the ``chunks`` table through the change counter. Thread-safe."""

    def __init__(self, analyzer: Analyzer, snapshot: Path | None = None) -> None:
        self.analyzer = analyzer
        self.snapshot = snapshot
        self.lock = threading.RLock()
        self.index: Bm25Index | None = None
        self.version = -1
        self._saved_version: int | None = None

    def reset(self) -> None:
        with self.lock:
            self.index, self.version = None, -1

    # -- catching up ---------------------------------------------------------------------------------
    def sync(self, conn: psycopg.Connection[Any], store_id: str) -> tuple[Bm25Index, int]:
        """The index caught up with the database's current version (one repeatable-read snapshot)."""
        with self.lock:
            if self.index is not None:  # the common case: nothing changed (one round trip)
                (current,) = _one(conn, "SELECT version FROM rag_state WHERE id = 1")
                if current == self.version:
                    return self.index, self.version
            return self._sync(conn, store_id)

    def _sync(self, conn: psycopg.Connection[Any], store_id: str) -> tuple[Bm25Index, int]:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            (version,) = _one(conn, "SELECT version FROM rag_state WHERE id = 1")
            if self.index is None:
                self._load_snapshot(conn, store_id, version)
            floor = _floor(conn)
            if self.index is None or self.version < floor or self.version > version:
                self._rebuild(conn, version)
            elif self.version < version:
                self._catch_up(conn, version)
            assert self.index is not None
            return self.index, self.version

    def _rebuild(self, conn: psycopg.Connection[Any], version: int) -> None:
        from ragwright.index import Bm25Index

        index = Bm25Index(self.analyzer)
        with conn.cursor(name="ragwright_bm25_rebuild") as cur:  # server-side cursor: bounded memory
            cur.itersize = 5000
            cur.execute(f"SELECT chunk_id, {_COLUMNS} FROM chunks")
            batch: list[tuple[str, str, str | None]] = []
            for row in cur:
                batch.append((row[0], row[1], row[2]))
                if len(batch) >= 5000:
                    index.upsert(batch)
                    batch = []
            index.upsert(batch)
        self.index, self.version = index, version
        log.debug("keyword_index_rebuilt: %d chunks at version %d", len(index), version)

    def _catch_up(self, conn: psycopg.Connection[Any], version: int) -> None:
        assert self.index is not None
        rows = conn.execute(
            "SELECT document_id, removed FROM rag_changes WHERE version > %s AND version <= %s",
            (self.version, version),
        ).fetchall()
        docs = sorted({r[0] for r in rows})
        self.index.remove([cid for r in rows for cid in (r[1] or ())])
        if docs:
            current = conn.execute(
                f"SELECT chunk_id, {_COLUMNS} FROM chunks WHERE document_id = ANY(%s)", (docs,)
            ).fetchall()
            self.index.upsert((r[0], r[1], r[2]) for r in current)
        self.version = version

    def apply_local(
        self, new_version: int, removed: Sequence[str], upserted: Sequence[tuple[str, str, str | None]]
    ) -> None:
        """Apply this process's own committed write, when the index is exactly one version behind."""
        with self.lock:
            if self.index is None or self.version != new_version - 1:
                return  # the next search catches up from the log
            self.index.remove(removed)
            self.index.upsert(upserted)
            self.version = new_version

    # -- snapshots -------------------------------------------------------------------------------------
    def _load_snapshot(self, conn: psycopg.Connection[Any], store_id: str, version: int) -> None:
        from ragwright.index import Bm25Index

        meta_path = _meta_path(self.snapshot)
        if self.snapshot is None or meta_path is None or not self.snapshot.exists() or not meta_path.exists():
            return
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            snap_version = int(meta["version"])
            if meta.get("store_id") != store_id or snap_version > version or snap_version < _floor(conn):
                log.info("keyword_snapshot_stale: %s (rebuilding)", self.snapshot)
                return
            index = Bm25Index.load(self.snapshot, analyzer=self.analyzer)
        except (OSError, ValueError, KeyError, StoreError, ConfigError) as exc:
            log.warning("keyword_snapshot_unusable: %s: %s (rebuilding)", self.snapshot, exc)
            return
        self.index, self.version, self._saved_version = index, snap_version, snap_version

    def save_snapshot(self, store_id: str) -> bool:
        """Write the snapshot when it is configured and the index moved since the last save."""
        meta_path = _meta_path(self.snapshot)
        with self.lock:
            if self.snapshot is None or meta_path is None or self.index is None:
                return False
            if self._saved_version == self.version:
                return False
            self.snapshot.parent.mkdir(parents=True, exist_ok=True)
            self.index.save(self.snapshot)
            meta_path.write_text(json.dumps({"store_id": store_id, "version": self.version}), encoding="utf-8")
            self._saved_version = self.version
            return True


def _meta_path(snapshot: Path | None) -> Path | None:
    return None if snapshot is None else snapshot.with_name(snapshot.name + ".json")


def _floor(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT value FROM rag_metadata WHERE key = 'changes_floor'").fetchone()
    return int(row[0]) if row else 0


def _one(conn: psycopg.Connection[Any], query: str) -> tuple[Any, ...]:
    row = conn.execute(query).fetchone()
    if row is None:  # pragma: no cover - the migration inserts it
        raise StoreError("the store's change counter is missing (rag_state); the schema is damaged")
    return tuple(row)
