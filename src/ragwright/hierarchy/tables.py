"""Hierarchical retrieval's tables beside the store's own, one SQL for SQLite and PostgreSQL.

The hook into a store is :func:`open_hierarchy_tables`, as the graph's
(:func:`~ragwright.stores.side_tables.open_sql_side`): the PostgreSQL store's ``side_database()`` puts
them in its schema; a :class:`~ragwright.stores.sqlite.SqliteStore`'s file is opened with a second
connection (WAL); the in-memory store gets an in-memory database.

* ``hier_documents`` — one row per document: its summary (text, the chunk ids it cites, how it was
  written), the summary's vector and the centroid of the document's chunk vectors, every chunk id of
  the document, and the document's tenant and ACL.
* ``hier_vectors`` — multi-vector rows: further vectors of a parent (a parent chunk's summary,
  hypothetical questions) with the parent they resolve to, the chunks they draw from, tenant and ACL.
* ``hier_nodes`` — the summary tree, per access scope (one tenant + one ACL): level ≥ 1 nodes with
  their text, vector, the chunks beneath them and their documents.
* ``hier_state`` — the scopes whose tree is stale, and a version bumped by every write with the
  tables' *epoch*, a random token written when they are opened or first written to after a wipe
  (readers' in-memory matrices follow the pair). The counter alone may repeat: a wipe empties the
  table and it counts from 0 again, and a PostgreSQL store object following its alias to another
  collection reads that collection's tables, counted apart. The epoch never repeats, so no reader
  keeps a matrix of other rows.

Every row carries tenant and ACL, so every read is filtered by the caller's identity; the reader then
re-checks each cited chunk through the store (:mod:`ragwright.hierarchy.search`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ragwright.stores.side_tables import Run, SideDatabase, SqlSideTables, open_sql_side

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS hier_documents (
        document_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, acl {acl} NOT NULL, scope TEXT NOT NULL,
        title TEXT NOT NULL, summary TEXT NOT NULL, cited TEXT NOT NULL, chunk_ids TEXT NOT NULL,
        method TEXT NOT NULL, vector {blob}, centroid {blob}, updated_at {real} NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_documents_scope ON hier_documents(scope)",
    """CREATE TABLE IF NOT EXISTS hier_vectors (
        vector_id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, document_id TEXT NOT NULL, kind TEXT NOT NULL,
        text TEXT NOT NULL, vector {blob} NOT NULL, tenant TEXT NOT NULL, acl {acl} NOT NULL,
        chunk_ids TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_vectors_doc ON hier_vectors(document_id)",
    """CREATE TABLE IF NOT EXISTS hier_nodes (
        node_id TEXT PRIMARY KEY, scope TEXT NOT NULL, tenant TEXT NOT NULL, acl {acl} NOT NULL,
        level INTEGER NOT NULL, text TEXT NOT NULL, vector {blob} NOT NULL, chunk_ids TEXT NOT NULL,
        document_ids TEXT NOT NULL, child_ids TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS hier_nodes_scope ON hier_nodes(scope, level)",
    "CREATE TABLE IF NOT EXISTS hier_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

F32 = npt.NDArray[np.float32]


def _upsert(table: str, columns: str) -> str:
    """``INSERT`` of a whole row, replacing the row with the same key (the first column)."""
    names = [c.strip() for c in columns.split(",")]
    update = ", ".join(f"{c} = excluded.{c}" for c in names[1:])
    marks = ",".join("?" for _ in names)
    return f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT ({names[0]}) DO UPDATE SET {update}"


_DOCUMENT = _upsert(
    "hier_documents",
    "document_id, tenant, acl, scope, title, summary, cited, chunk_ids, method, vector, centroid, updated_at",
)
_VECTOR = _upsert("hier_vectors", "vector_id, parent_id, document_id, kind, text, vector, tenant, acl, chunk_ids")
_NODE = _upsert("hier_nodes", "node_id, scope, tenant, acl, level, text, vector, chunk_ids, document_ids, child_ids")
_STATE = _upsert("hier_state", "key, value")
_EPOCH = "INSERT INTO hier_state VALUES ('epoch', ?) ON CONFLICT (key) DO NOTHING"


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
    db = open_sql_side(store, hook="hierarchy_database", feature="hierarchical retrieval", busy_timeout=busy_timeout)
    return HierarchyTables(db)


class HierarchyTables(SqlSideTables):
    """The rows. Thread-safe; each write is one transaction that also bumps the version readers'
    in-memory matrices follow (:meth:`version`)."""

    def __init__(self, db: SideDatabase) -> None:
        super().__init__(db, SCHEMA, lock="hierarchy")

    def _create(self) -> None:
        """The schema, and the epoch of tables that have none yet (a store written before there was one)."""
        super()._create()
        with self.db.write(self._lock_name) as (run, _):
            run(self.dialect.sql(_EPOCH), (uuid.uuid4().hex,))

    def _before_commit(self, run: Run) -> None:
        run(_EPOCH, (uuid.uuid4().hex,))  # after a wipe emptied the table: a new one
        run(
            "INSERT INTO hier_state VALUES ('version', '1') ON CONFLICT (key) "
            "DO UPDATE SET value = CAST(CAST(hier_state.value AS INTEGER) + 1 AS TEXT)"
        )

    def version(self) -> str:
        """``epoch:counter`` of the rows now (``""`` while a wipe has left no epoch: no rows either): it
        changes with every write and never comes back (see the module docstring)."""
        state = dict(self._rows("SELECT key, value FROM hier_state WHERE key IN ('epoch', 'version')"))
        return f"{state['epoch']}:{state.get('version', 0)}" if "epoch" in state else ""

    # -- documents ----------------------------------------------------------------------------------------
    def replace_document(self, row: DocumentRow, vectors: Sequence[VectorRow] = ()) -> None:
        """Replace *row*'s document: its summary row and its multi-vector rows; its scopes go stale."""
        acl = self.dialect.encode_acl(row.acl)
        scope = scope_of(row.tenant, row.acl)
        with self._write() as (run, many):
            old = run("SELECT scope FROM hier_documents WHERE document_id = ?", (row.document_id,)).fetchone()
            run("DELETE FROM hier_vectors WHERE document_id = ?", (row.document_id,))
            run(
                _DOCUMENT,
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
            many(
                _VECTOR,
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
                self._dirty(run, s)

    def remove_document(self, document_id: str) -> None:
        """Forget a document: its summary and vectors at once; the tree nodes above it when its scope is
        rebuilt (until then they are never shown: each cited chunk is re-checked through the store)."""
        with self._write() as (run, _):
            old = run("SELECT scope FROM hier_documents WHERE document_id = ?", (document_id,)).fetchone()
            run("DELETE FROM hier_documents WHERE document_id = ?", (document_id,))
            run("DELETE FROM hier_vectors WHERE document_id = ?", (document_id,))
            if old is not None:
                self._dirty(run, str(old[0]))

    def update_access(self, document_id: str, tenant: str, acl: Sequence[str]) -> None:
        """Copy a document's new tenant/ACL onto its rows; its old and new scopes' trees go stale."""
        acl_json, scope = self.dialect.encode_acl(acl), scope_of(tenant, acl)
        with self._write() as (run, _):
            old = run("SELECT scope FROM hier_documents WHERE document_id = ?", (document_id,)).fetchone()
            run(
                "UPDATE hier_documents SET tenant = ?, acl = ?, scope = ? WHERE document_id = ?",
                (tenant, acl_json, scope, document_id),
            )
            run("UPDATE hier_vectors SET tenant = ?, acl = ? WHERE document_id = ?", (tenant, acl_json, document_id))
            for s in {scope, str(old[0]) if old else scope}:
                self._dirty(run, s)

    def documents(self) -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """``document_id -> (tenant, acl, chunk ids)`` of every summarised document."""
        rows = self._rows("SELECT document_id, tenant, acl, chunk_ids FROM hier_documents")
        return {str(d): (str(t), self.dialect.decode_acl(a), tuple(json.loads(ids))) for d, t, a, ids in rows}

    def summarised_at(self) -> dict[str, float]:
        """``document_id -> when its summary was written`` (``time.time()``)."""
        return {str(d): float(t) for d, t in self._rows("SELECT document_id, updated_at FROM hier_documents")}

    def document_rows(self, document_ids: Sequence[str] | None = None) -> list[DocumentRow]:
        sql = (
            "SELECT document_id, tenant, acl, title, summary, cited, chunk_ids, method, vector, centroid "
            "FROM hier_documents"
        )
        params: list[Any] = []
        if document_ids is not None:
            if not document_ids:
                return []
            sql += f" WHERE document_id IN ({','.join('?' for _ in document_ids)})"
            params.extend(document_ids)
        return [
            DocumentRow(
                str(d),
                str(t),
                self.dialect.decode_acl(a),
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
                    self.dialect.decode_acl(a),
                    tuple(json.loads(ids)),
                )
            )
        return out

    # -- tree -----------------------------------------------------------------------------------------------
    @staticmethod
    def _dirty(run: Run, scope: str) -> None:
        run(_STATE, (f"dirty:{scope}", "1"))

    def dirty_scopes(self) -> list[str]:
        rows = self._rows("SELECT key FROM hier_state WHERE key LIKE ? AND value = '1'", ("dirty:%",))
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
                    self.dialect.decode_acl(a),
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
        with self._write() as (run, many):
            run("DELETE FROM hier_nodes WHERE scope = ?", (scope,))
            many(
                _NODE,
                [
                    (
                        n.node_id,
                        scope,
                        n.tenant,
                        self.dialect.encode_acl(n.acl),
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
            run(_STATE, (f"dirty:{scope}", "0"))

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("hier_documents", "hier_vectors", "hier_nodes"):
            out[table.removeprefix("hier_")] = int(self._rows(f"SELECT COUNT(*) FROM {table}")[0][0])
        return out
