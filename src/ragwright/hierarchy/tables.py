"""Hierarchical retrieval's tables in SQLite, beside the store's own (created lazily, on first use).

The hook into a store is :func:`open_hierarchy_tables`, as the graph's: a store may offer
``hierarchy_database()`` returning an ``sqlite3.Connection``; else a
:class:`~ragwright.stores.sqlite.SqliteStore`'s file is opened with a second connection (WAL); the
in-memory store gets an in-memory database.

* ``hier_documents`` — one row per document: its summary (text, the chunk ids it cites, how it was
  written), the summary's vector and the centroid of the document's chunk vectors, every chunk id of
  the document, and the document's tenant and ACL.
* ``hier_vectors`` — multi-vector rows: further vectors of a parent (a parent chunk's summary,
  hypothetical questions) with the parent they resolve to, the chunks they draw from, tenant and ACL.
* ``hier_nodes`` — the summary tree, per access scope (one tenant + one ACL): level ≥ 1 nodes with
  their text, vector, the chunks beneath them and their documents.
* ``hier_state`` — the scopes whose tree is stale, and a version bumped by every write (readers'
  in-memory matrices follow it).

Every row carries tenant and ACL, so every read is filtered by the caller's identity; the reader then
re-checks each cited chunk through the store (:mod:`ragwright.hierarchy.search`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ragwright.stores.side_tables import SideTables, open_side_database

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS hier_documents (
        document_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, acl TEXT NOT NULL, scope TEXT NOT NULL,
        title TEXT NOT NULL, summary TEXT NOT NULL, cited TEXT NOT NULL, chunk_ids TEXT NOT NULL,
        method TEXT NOT NULL, vector BLOB, centroid BLOB, updated_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_documents_scope ON hier_documents(scope)",
    """CREATE TABLE IF NOT EXISTS hier_vectors (
        vector_id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, document_id TEXT NOT NULL, kind TEXT NOT NULL,
        text TEXT NOT NULL, vector BLOB NOT NULL, tenant TEXT NOT NULL, acl TEXT NOT NULL, chunk_ids TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_vectors_doc ON hier_vectors(document_id)",
    """CREATE TABLE IF NOT EXISTS hier_nodes (
        node_id TEXT PRIMARY KEY, scope TEXT NOT NULL, tenant TEXT NOT NULL, acl TEXT NOT NULL,
        level INTEGER NOT NULL, text TEXT NOT NULL, vector BLOB NOT NULL, chunk_ids TEXT NOT NULL,
        document_ids TEXT NOT NULL, child_ids TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_nodes_scope ON hier_nodes(scope, level)",
    "CREATE TABLE IF NOT EXISTS hier_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

F32 = npt.NDArray[np.float32]


def scope_of(tenant: str, acl: Sequence[str]) -> str:
    """The access scope of a tenant and ACL: documents of one scope are visible to exactly the same callers."""
    return f"{tenant}\x1f{json.dumps(sorted(set(acl)))}"


def _blob(vector: Any) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def _vec(blob: bytes | None) -> F32 | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


@dataclass(frozen=True, slots=True)
class DocumentRow:
    document_id: str
    tenant: str
    acl: tuple[str, ...]
    title: str
    summary: str
    cited: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    method: str
    vector: F32 | None
    centroid: F32 | None


@dataclass(frozen=True, slots=True)
class VectorRow:
    vector_id: str
    parent_id: str
    document_id: str
    kind: str
    text: str
    vector: F32
    tenant: str
    acl: tuple[str, ...]
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeRow:
    node_id: str
    scope: str
    tenant: str
    acl: tuple[str, ...]
    level: int
    text: str
    vector: F32
    chunk_ids: tuple[str, ...]
    document_ids: tuple[str, ...]
    child_ids: tuple[str, ...]


def open_hierarchy_tables(store: Any, *, busy_timeout: float = 30.0) -> HierarchyTables:
    """The hierarchy tables of *store* (see the module docstring for the hook)."""
    conn = open_side_database(
        store, hook="hierarchy_database", feature="hierarchical retrieval", busy_timeout=busy_timeout
    )
    return HierarchyTables(conn)


class HierarchyTables(SideTables):
    """The rows. Thread-safe: one connection behind a lock; each write is one transaction that also
    bumps the version readers' in-memory matrices follow."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn, SCHEMA)

    def _before_commit(self) -> None:
        self._conn.execute(
            "INSERT INTO hier_state VALUES ('version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    def version(self) -> int:
        rows = self._rows("SELECT value FROM hier_state WHERE key = 'version'")
        return int(rows[0][0]) if rows else 0

    # -- documents ----------------------------------------------------------------------------------------
    def replace_document(self, row: DocumentRow, vectors: Sequence[VectorRow] = ()) -> None:
        """Replace *row*'s document: its summary row and its multi-vector rows; its scopes go stale."""
        acl = json.dumps(sorted(row.acl))
        scope = scope_of(row.tenant, row.acl)
        with self._write() as c:
            old = c.execute("SELECT scope FROM hier_documents WHERE document_id = ?", (row.document_id,)).fetchone()
            c.execute("DELETE FROM hier_vectors WHERE document_id = ?", (row.document_id,))
            c.execute(
                "INSERT OR REPLACE INTO hier_documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row.document_id,
                    row.tenant,
                    acl,
                    scope,
                    row.title,
                    row.summary,
                    json.dumps(list(row.cited)),
                    json.dumps(list(row.chunk_ids)),
                    row.method,
                    _blob(row.vector),
                    _blob(row.centroid),
                    time.time(),
                ),
            )
            c.executemany(
                "INSERT OR REPLACE INTO hier_vectors VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        v.vector_id,
                        v.parent_id,
                        v.document_id,
                        v.kind,
                        v.text,
                        _blob(v.vector),
                        v.tenant,
                        acl,
                        json.dumps(list(v.chunk_ids)),
                    )
                    for v in vectors
                ],
            )
            for s in {scope, str(old[0]) if old else scope}:
                self._dirty(c, s)

    def remove_document(self, document_id: str) -> None:
        """Forget a document: its summary and vectors at once; the tree nodes above it when its scope is
        rebuilt (until then they are never shown: each cited chunk is re-checked through the store)."""
        with self._write() as c:
            old = c.execute("SELECT scope FROM hier_documents WHERE document_id = ?", (document_id,)).fetchone()
            c.execute("DELETE FROM hier_documents WHERE document_id = ?", (document_id,))
            c.execute("DELETE FROM hier_vectors WHERE document_id = ?", (document_id,))
            if old is not None:
                self._dirty(c, str(old[0]))

    def update_access(self, document_id: str, tenant: str, acl: Sequence[str]) -> None:
        """Copy a document's new tenant/ACL onto its rows; its old and new scopes' trees go stale."""
        acl_json, scope = json.dumps(sorted(acl)), scope_of(tenant, acl)
        with self._write() as c:
            old = c.execute("SELECT scope FROM hier_documents WHERE document_id = ?", (document_id,)).fetchone()
            c.execute(
                "UPDATE hier_documents SET tenant = ?, acl = ?, scope = ? WHERE document_id = ?",
                (tenant, acl_json, scope, document_id),
            )
            c.execute(
                "UPDATE hier_vectors SET tenant = ?, acl = ? WHERE document_id = ?", (tenant, acl_json, document_id)
            )
            for s in {scope, str(old[0]) if old else scope}:
                self._dirty(c, s)

    def documents(self) -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """``document_id -> (tenant, acl, chunk ids)`` of every summarised document."""
        rows = self._rows("SELECT document_id, tenant, acl, chunk_ids FROM hier_documents")
        return {str(d): (str(t), tuple(json.loads(a)), tuple(json.loads(ids))) for d, t, a, ids in rows}

    def document_rows(self, document_ids: Sequence[str] | None = None) -> list[DocumentRow]:
        sql = (
            "SELECT document_id, tenant, acl, title, summary, cited, chunk_ids, method, vector, centroid "
            "FROM hier_documents"
        )
        params: list[Any] = []
        if document_ids is not None:
            sql += " WHERE document_id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(document_ids)))
        return [
            DocumentRow(
                str(d),
                str(t),
                tuple(json.loads(a)),
                str(ti),
                str(s),
                tuple(json.loads(ci)),
                tuple(json.loads(ids)),
                str(m),
                _vec(v),
                _vec(ce),
            )
            for d, t, a, ti, s, ci, ids, m, v, ce in self._rows(sql + " ORDER BY document_id", params)
        ]

    def vector_rows(self) -> list[VectorRow]:
        rows = self._rows(
            "SELECT vector_id, parent_id, document_id, kind, text, vector, tenant, acl, chunk_ids FROM hier_vectors "
            "ORDER BY vector_id"
        )
        out = []
        for vid, pid, doc, kind, text, vec, t, a, ids in rows:
            vector = _vec(vec)
            assert vector is not None
            out.append(
                VectorRow(
                    str(vid),
                    str(pid),
                    str(doc),
                    str(kind),
                    str(text),
                    vector,
                    str(t),
                    tuple(json.loads(a)),
                    tuple(json.loads(ids)),
                )
            )
        return out

    # -- tree -----------------------------------------------------------------------------------------------
    @staticmethod
    def _dirty(c: sqlite3.Connection, scope: str) -> None:
        c.execute("INSERT OR REPLACE INTO hier_state VALUES (?, '1')", (f"dirty:{scope}",))

    def dirty_scopes(self) -> list[str]:
        rows = self._rows("SELECT key FROM hier_state WHERE key LIKE 'dirty:%' AND value = '1'")
        return sorted(str(r[0]).split(":", 1)[1] for r in rows)

    def scope_documents(self, scope: str) -> dict[str, tuple[str, ...]]:
        """``document_id -> chunk ids`` of the documents of *scope*."""
        rows = self._rows("SELECT document_id, chunk_ids FROM hier_documents WHERE scope = ?", (scope,))
        return {str(d): tuple(json.loads(ids)) for d, ids in rows}

    def nodes(self, scope: str | None = None) -> list[NodeRow]:
        sql = (
            "SELECT node_id, scope, tenant, acl, level, text, vector, chunk_ids, document_ids, child_ids "
            "FROM hier_nodes"
        )
        params: list[Any] = []
        if scope is not None:
            sql += " WHERE scope = ?"
            params.append(scope)
        out = []
        for nid, s, t, a, lv, text, vec, ids, docs, kids in self._rows(sql + " ORDER BY level, node_id", params):
            vector = _vec(vec)
            assert vector is not None
            out.append(
                NodeRow(
                    str(nid),
                    str(s),
                    str(t),
                    tuple(json.loads(a)),
                    int(lv),
                    str(text),
                    vector,
                    tuple(json.loads(ids)),
                    tuple(json.loads(docs)),
                    tuple(json.loads(kids)),
                )
            )
        return out

    def set_nodes(self, scope: str, nodes: Sequence[NodeRow]) -> None:
        """Replace *scope*'s tree by *nodes* and mark it fresh."""
        with self._write() as c:
            c.execute("DELETE FROM hier_nodes WHERE scope = ?", (scope,))
            c.executemany(
                "INSERT OR REPLACE INTO hier_nodes VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        n.node_id,
                        scope,
                        n.tenant,
                        json.dumps(sorted(n.acl)),
                        n.level,
                        n.text,
                        _blob(n.vector),
                        json.dumps(list(n.chunk_ids)),
                        json.dumps(list(n.document_ids)),
                        json.dumps(list(n.child_ids)),
                    )
                    for n in nodes
                ],
            )
            c.execute("INSERT OR REPLACE INTO hier_state VALUES (?, '0')", (f"dirty:{scope}",))

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("hier_documents", "hier_vectors", "hier_nodes"):
            out[table.removeprefix("hier_")] = int(self._rows(f"SELECT COUNT(*) FROM {table}")[0][0])
        return out
