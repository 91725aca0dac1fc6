"""GraphRAG's tables beside the store's own, written once for SQLite and PostgreSQL.

The hook into a store is :func:`open_graph_tables` (:func:`~ragwright.stores.side_tables.open_sql_side`):
the PostgreSQL store's ``side_database()`` puts them in its schema; an
:class:`~ragwright.stores.sqlite.SqliteStore`'s file is opened with a second connection (WAL: the store's
readers and writers are not blocked; writes wait up to *busy_timeout*); the in-memory store gets an
in-memory database. The statements are the same on both; a
:class:`~ragwright.stores.side_tables.SideDialect` says what differs (placeholders, column types, how
an ACL is stored and filtered).

Every mention, relation and acronym alias row copies the tenant and ACL of the chunk it came from, so
visibility is filtered in SQL with the store's own security expression; the graph then re-checks each
chunk through the store (:mod:`ragwright.graph.visibility`). Entity-resolution merges (``graph_aliases``
with ``source='similarity'``) are per tenant and logged in ``graph_merge_log``; removing one reverses it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ragwright.graph.model import Extraction
from ragwright.stores.side_tables import Run, SideDatabase, SqlSideTables, open_sql_side

__all__ = ["SCHEMA", "GraphTables", "open_graph_tables"]

# ``end`` is quoted: a reserved word in PostgreSQL.
SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS graph_documents (
        document_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, acl {acl} NOT NULL, extractor TEXT NOT NULL,
        updated_at {real} NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS graph_mentions (
        chunk_id TEXT NOT NULL, document_id TEXT NOT NULL, tenant TEXT NOT NULL, acl {acl} NOT NULL,
        key TEXT NOT NULL, surface TEXT NOT NULL, type TEXT NOT NULL, start INTEGER NOT NULL,
        "end" INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS graph_mentions_key ON graph_mentions(tenant, key)",
    "CREATE INDEX IF NOT EXISTS graph_mentions_doc ON graph_mentions(document_id)",
    "CREATE INDEX IF NOT EXISTS graph_mentions_chunk ON graph_mentions(chunk_id)",
    """CREATE TABLE IF NOT EXISTS graph_relations (
        chunk_id TEXT NOT NULL, document_id TEXT NOT NULL, tenant TEXT NOT NULL, acl {acl} NOT NULL,
        source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL,
        start INTEGER NOT NULL, "end" INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS graph_relations_source ON graph_relations(tenant, source)",
    "CREATE INDEX IF NOT EXISTS graph_relations_target ON graph_relations(tenant, target)",
    "CREATE INDEX IF NOT EXISTS graph_relations_doc ON graph_relations(document_id)",
    """CREATE TABLE IF NOT EXISTS graph_aliases (
        tenant TEXT NOT NULL, alias TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL,
        acl {acl} NOT NULL, reason TEXT NOT NULL, score {real}, PRIMARY KEY (tenant, alias, source))""",
    """CREATE TABLE IF NOT EXISTS graph_merge_log (
        at {real} NOT NULL, tenant TEXT NOT NULL, alias TEXT NOT NULL, key TEXT NOT NULL, action TEXT NOT NULL,
        reason TEXT NOT NULL, score {real})""",
    """CREATE TABLE IF NOT EXISTS graph_communities (
        tenant TEXT NOT NULL, level INTEGER NOT NULL, community INTEGER NOT NULL, key TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS graph_communities_at ON graph_communities(tenant, level, community)",
    """CREATE TABLE IF NOT EXISTS graph_summaries (
        tenant TEXT NOT NULL, level INTEGER NOT NULL, community INTEGER NOT NULL, payload TEXT NOT NULL,
        chunk_ids TEXT NOT NULL, PRIMARY KEY (tenant, level, community))""",
    "CREATE TABLE IF NOT EXISTS graph_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

_MENTION = 'chunk_id, document_id, key, surface, type, start, "end"'
_RELATION = 'chunk_id, document_id, source, target, type, start, "end"'
_UPSERT_DOCUMENT = (
    "INSERT INTO graph_documents VALUES (?,?,?,?,?) ON CONFLICT (document_id) DO UPDATE SET "
    "tenant = excluded.tenant, acl = excluded.acl, extractor = excluded.extractor, updated_at = excluded.updated_at"
)
_UPSERT_ALIAS = (
    "INSERT INTO graph_aliases VALUES (?,?,?,?,?,?,?) ON CONFLICT (tenant, alias, source) DO UPDATE SET "
    "key = excluded.key, acl = excluded.acl, reason = excluded.reason, score = excluded.score"
)
_SET_STATE = "INSERT INTO graph_state VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"

Row = tuple[Any, ...]
#: A security predicate over the columns ``tenant`` / ``acl`` and its parameters (see visibility.py).
Predicate = tuple[str, list[Any]]


def open_graph_tables(store: Any, *, busy_timeout: float = 30.0) -> GraphTables:
    """The graph tables of *store* (see the module docstring for the hook)."""
    return GraphTables(open_sql_side(store, hook="graph_database", feature="GraphRAG", busy_timeout=busy_timeout))


class GraphTables(SqlSideTables):
    """The graph's rows. Thread-safe; each write is one transaction."""

    def __init__(self, db: SideDatabase) -> None:
        super().__init__(db, SCHEMA, lock="graph")

    # -- documents --------------------------------------------------------------------------------------
    def replace_document(
        self,
        document_id: str,
        tenant: str,
        acl: Sequence[str],
        extractor: str,
        extractions: Iterable[tuple[str, Extraction]],
    ) -> None:
        """Replace everything *document_id* contributed by *extractions* (``(chunk document id, extraction)``)."""
        access = self.dialect.encode_acl(acl)
        mentions, relations, aliases = [], [], []
        for doc, x in extractions:
            for m in x.mentions:
                mentions.append((m.chunk_id, doc, tenant, access, m.key, m.surface, m.type, m.start, m.end))
            for r in x.relations:
                relations.append((r.chunk_id, doc, tenant, access, r.source, r.target, r.type, r.start, r.end))
            for a in x.aliases:
                aliases.append((tenant, a.alias, a.key, document_id, access, a.reason, None))
        with self._write() as (run, many):
            self._delete(run, document_id)
            run(_UPSERT_DOCUMENT, (document_id, tenant, access, extractor, time.time()))
            if mentions:
                many("INSERT INTO graph_mentions VALUES (?,?,?,?,?,?,?,?,?)", mentions)
            if relations:
                many("INSERT INTO graph_relations VALUES (?,?,?,?,?,?,?,?,?)", relations)
            if aliases:
                many(_UPSERT_ALIAS, list({(a[0], a[1]): a for a in aliases}.values()))
            self._dirty(run, tenant)

    @staticmethod
    def _delete(run: Run, document_id: str) -> None:
        for table in ("graph_mentions", "graph_relations"):
            run(f"DELETE FROM {table} WHERE document_id = ?", (document_id,))
        run("DELETE FROM graph_aliases WHERE source = ?", (document_id,))
        run("DELETE FROM graph_documents WHERE document_id = ?", (document_id,))

    def remove_document(self, document_id: str) -> None:
        with self._write() as (run, _):
            row = run("SELECT tenant FROM graph_documents WHERE document_id = ?", (document_id,)).fetchone()
            self._delete(run, document_id)
            if row is not None:
                self._dirty(run, str(row[0]))

    def update_access(self, document_id: str, tenant: str, acl: Sequence[str]) -> None:
        """Copy a document's new tenant/ACL onto everything it contributed (an ACL change follows at once)."""
        access = self.dialect.encode_acl(acl)
        with self._write() as (run, _):
            old = run("SELECT tenant FROM graph_documents WHERE document_id = ?", (document_id,)).fetchone()
            for table in ("graph_mentions", "graph_relations", "graph_documents"):
                run(f"UPDATE {table} SET tenant = ?, acl = ? WHERE document_id = ?", (tenant, access, document_id))
            run("UPDATE graph_aliases SET tenant = ?, acl = ? WHERE source = ?", (tenant, access, document_id))
            for t in {tenant, str(old[0]) if old else tenant}:
                self._dirty(run, t)

    def documents(self) -> dict[str, tuple[str, tuple[str, ...], str]]:
        """``document_id -> (tenant, acl, extractor)`` of every document in the graph."""
        rows = self._rows("SELECT document_id, tenant, acl, extractor FROM graph_documents")
        return {str(d): (str(t), self.dialect.decode_acl(a), str(e)) for d, t, a, e in rows}

    def forget_extractions(self) -> None:
        """Mark every document's rows as out of date: the next sync extracts each one again (after a
        reindex changed the chunks the rows point at)."""
        with self._write() as (run, _):
            run("UPDATE graph_documents SET updated_at = 0")

    def extracted_at(self) -> dict[str, float]:
        """``document_id -> when its graph rows were written`` (seconds since the epoch)."""
        return {str(d): float(at) for d, at in self._rows("SELECT document_id, updated_at FROM graph_documents")}

    # -- reads under a security predicate ---------------------------------------------------------------
    def mentions(self, tenant_sql: Predicate, keys: Sequence[str] | None = None) -> list[Row]:
        """``(chunk_id, document_id, key, surface, type, start, end)`` of mentions (of *keys*) passing the
        security predicate ``tenant_sql`` (SQL over columns ``tenant``/``acl`` and its parameters)."""
        where, params = tenant_sql[0], list(tenant_sql[1])
        if keys is not None:
            if not keys:
                return []
            where += f" AND key IN ({','.join('?' for _ in keys)})"
            params += list(keys)
        return self._rows(f"SELECT {_MENTION} FROM graph_mentions WHERE {where}", params)

    def relations(self, tenant_sql: Predicate, keys: Sequence[str] | None = None) -> list[Row]:
        """``(chunk_id, document_id, source, target, type, start, end)`` touching *keys* (all when None)."""
        where, params = tenant_sql[0], list(tenant_sql[1])
        select = f"SELECT {_RELATION} FROM graph_relations WHERE"
        if keys is None:
            return self._rows(f"{select} {where}", params)
        if not keys:
            return []
        # one indexed query per column: "source IN … OR target IN …" makes SQLite scan the tenant's rows
        marks = ",".join("?" for _ in keys)
        by_source = self._rows(f"{select} {where} AND source IN ({marks})", [*params, *keys])
        by_target = self._rows(
            f"{select} {where} AND target IN ({marks}) AND source NOT IN ({marks})", [*params, *keys, *keys]
        )
        return by_source + by_target

    def aliases(self, tenant_sql: Predicate) -> dict[str, str]:
        """``alias -> key`` of the aliases passing the predicate (acronyms carry their document's access;
        similarity merges are the tenant's, ACL ``*``, written by :meth:`merge`)."""
        rows = self._rows(f"SELECT alias, key FROM graph_aliases WHERE {tenant_sql[0]}", tenant_sql[1])
        return {str(a): str(k) for a, k in rows}

    def tenant_view(self, tenant: str) -> Predicate:
        """The predicate of every row of *tenant* (community building reads a tenant's whole graph)."""
        return "tenant = ?", [tenant]

    def chunk_access(self, tenant: str) -> list[tuple[str, tuple[str, ...]]]:
        """``(chunk id, ACL)`` of every chunk *tenant*'s mentions and relations came from."""
        rows = self._rows(
            "SELECT DISTINCT chunk_id, acl FROM graph_relations WHERE tenant = ? "
            "UNION SELECT DISTINCT chunk_id, acl FROM graph_mentions WHERE tenant = ?",
            (tenant, tenant),
        )
        return [(str(c), self.dialect.decode_acl(a)) for c, a in rows]

    def tenants(self) -> list[str]:
        order = f"tenant{self.dialect.byte_order}"
        return [str(r[0]) for r in self._rows(f"SELECT DISTINCT {order} FROM graph_documents ORDER BY 1")]

    def tenant_keys(self, tenant: str) -> list[tuple[str, str, str, int]]:
        """``(key, type, a surface, mentions)`` of every key of *tenant* (entity resolution reads them)."""
        rows = self._rows(
            f"SELECT key, type, MIN(surface{self.dialect.byte_order}), COUNT(*) FROM graph_mentions "
            "WHERE tenant = ? GROUP BY key, type",
            (tenant,),
        )
        return [(str(k), str(t), str(s), int(n)) for k, t, s, n in rows]

    # -- entity resolution ------------------------------------------------------------------------------
    def merge(self, tenant: str, alias: str, key: str, reason: str, score: float | None = None) -> None:
        """Record that *alias* names the entity *key* in *tenant* (reversible with :meth:`unmerge`)."""
        with self._write() as (run, _):
            run(_UPSERT_ALIAS, (tenant, alias, key, "similarity", self.dialect.encode_acl(["*"]), reason, score))
            run(
                "INSERT INTO graph_merge_log VALUES (?,?,?,?,?,?,?)",
                (time.time(), tenant, alias, key, "merge", reason, score),
            )
            self._dirty(run, tenant)

    def unmerge(self, tenant: str, alias: str) -> bool:
        with self._write() as (run, _):
            row = run(
                "SELECT key, reason, score FROM graph_aliases WHERE tenant = ? AND alias = ? AND source = 'similarity'",
                (tenant, alias),
            ).fetchone()
            if row is None:
                return False
            run("DELETE FROM graph_aliases WHERE tenant = ? AND alias = ? AND source = 'similarity'", (tenant, alias))
            run(
                "INSERT INTO graph_merge_log VALUES (?,?,?,?,?,?,?)",
                (time.time(), tenant, alias, row[0], "unmerge", row[1], row[2]),
            )
            self._dirty(run, tenant)
            return True

    def merges(self, tenant: str) -> list[tuple[str, str, str, float | None]]:
        rows = self._rows(
            "SELECT alias, key, reason, score FROM graph_aliases "
            f"WHERE tenant = ? AND source = 'similarity' ORDER BY alias{self.dialect.byte_order}",
            (tenant,),
        )
        return [(str(a), str(k), str(r), s) for a, k, r, s in rows]

    def merge_log(self, tenant: str) -> list[Row]:
        return self._rows(
            "SELECT at, alias, key, action, reason, score FROM graph_merge_log WHERE tenant = ? ORDER BY at", (tenant,)
        )

    # -- communities ------------------------------------------------------------------------------------
    @staticmethod
    def _dirty(run: Run, tenant: str) -> None:
        run(_SET_STATE, (f"dirty:{tenant}", "1"))

    def dirty_tenants(self) -> list[str]:
        rows = self._rows("SELECT key FROM graph_state WHERE key LIKE ? AND value = '1'", ("dirty:%",))
        return sorted(str(r[0]).split(":", 1)[1] for r in rows)

    def set_communities(
        self,
        tenant: str,
        members: Sequence[tuple[int, int, str]],
        summaries: Sequence[tuple[int, int, dict[str, Any], Sequence[str]]],
    ) -> None:
        """Replace *tenant*'s communities (``(level, community, key)``) and their summaries."""
        with self._write() as (run, many):
            run("DELETE FROM graph_communities WHERE tenant = ?", (tenant,))
            run("DELETE FROM graph_summaries WHERE tenant = ?", (tenant,))
            if members:
                many("INSERT INTO graph_communities VALUES (?,?,?,?)", [(tenant, *m) for m in members])
            if summaries:
                many(
                    "INSERT INTO graph_summaries VALUES (?,?,?,?,?)",
                    [(tenant, lv, cm, json.dumps(p), json.dumps(sorted(set(ids)))) for lv, cm, p, ids in summaries],
                )
            run(_SET_STATE, (f"dirty:{tenant}", "0"))

    def summaries(self, tenant: str, level: int | None = None) -> list[tuple[int, int, dict[str, Any], list[str]]]:
        sql = "SELECT level, community, payload, chunk_ids FROM graph_summaries WHERE tenant = ?"
        params: list[Any] = [tenant]
        if level is not None:
            sql += " AND level = ?"
            params.append(level)
        return [
            (int(lv), int(cm), json.loads(p), json.loads(ids))
            for lv, cm, p, ids in self._rows(sql + " ORDER BY level, community", params)
        ]

    def communities_of(self, tenant: str, key: str) -> list[tuple[int, int]]:
        rows = self._rows("SELECT level, community FROM graph_communities WHERE tenant = ? AND key = ?", (tenant, key))
        return [(int(a), int(b)) for a, b in rows]

    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("graph_documents", "graph_mentions", "graph_relations", "graph_aliases", "graph_summaries"):
            out[table.removeprefix("graph_")] = int(self._rows(f"SELECT COUNT(*) FROM {table}")[0][0])
        return out
