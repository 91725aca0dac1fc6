"""The schemas of the PostgreSQL store's physical collections (see :mod:`.collections`).

``main`` is the store's own schema; collection ``gN`` is the schema ``<schema>__gN`` with its own copy
of the per-collection tables (:data:`.schema.PER_COLLECTION`) and a view of each shared one. Here:
their names and search paths,
creating one, bringing every one up to the current schema version when the store is migrated, dropping
them all when the store is wiped, and the view ``rag_live_hashes`` over every collection's registry
(what shared staging keeps).

A collection's schema may also hold *side tables*: the tables a feature creates beside the store's
own on first use (the graph's ``graph_*``, the hierarchy's ``hier_*``, conversation memory's
``memory_*``, through :meth:`PostgresStore.side_database`). They are every table there that the
store's migrations did not create (:func:`side_tables`): the schema is the store's, the migration
refuses one holding tables of anything else. Dropping a collection drops them with its schema;
emptying ``main`` (dropping it after a reindex, or wiping the store) empties them
(:func:`empty_side_tables`) — their definitions stay, so a feature holding them open keeps working.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

from ragwright.errors import StoreError
from ragwright.stores.postgres.dialect import upgrade_registry
from ragwright.stores.postgres.schema import (
    MIGRATIONS,
    PER_COLLECTION,
    SCHEMA_VERSION,
    collection_statements,
    statement_table,
)

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "LIVE_ALIAS",
    "MAIN_COLLECTION",
    "collection_schema",
    "create_schema",
    "drop_other_collections",
    "drop_schema",
    "empty_side_tables",
    "migrate_collections",
    "refresh_live_hashes",
    "search_path",
    "side_tables",
]

#: The collection every store starts with: the store's own schema.
MAIN_COLLECTION: Final = "main"
#: The alias readers follow; a reindex moves it.
LIVE_ALIAS: Final = "live"


def collection_schema(base: str, name: str) -> str:
    """The schema holding collection *name* of the store whose schema is *base*."""
    if name == MAIN_COLLECTION:
        return base
    schema = f"{base}__{name}"
    if len(schema) > 63:
        raise StoreError(
            f"the schema {base!r} is too long to hold collections ({schema!r} passes PostgreSQL's 63 "
            "characters); choose a shorter PostgresOptions.schema"
        )
    return schema


def search_path(base: str, name: str) -> str:
    """The ``search_path`` value of a connection working on collection *name* (only its own schema: the
    shared tables are views there, and a table a feature creates on first use goes to that schema)."""
    return f'"{collection_schema(base, name)}", public'


def shared_tables() -> list[str]:
    """The store's tables every collection shares (staging, the queue, the collections and the alias)."""
    created = [
        statement_table(s) for _, statements in MIGRATIONS for s in statements if s.lstrip().startswith("CREATE TABLE")
    ]
    return [t for t in created if t is not None and t not in PER_COLLECTION] + ["rag_schema_version", "rag_live_hashes"]


def store_tables() -> frozenset[str]:
    """Every table the store's migrations create (its own and the shared ones), and the version table."""
    created = [
        statement_table(s) for _, statements in MIGRATIONS for s in statements if s.lstrip().startswith("CREATE TABLE")
    ]
    return frozenset(t for t in created if t is not None) | {"rag_schema_version"}


def side_tables(conn: psycopg.Connection[Any], base: str, name: str) -> list[str]:
    """The side tables in collection *name*'s schema: its tables the store's migrations did not create."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') ORDER BY c.relname",
        (collection_schema(base, name),),
    ).fetchall()
    own = store_tables()
    return [str(r[0]) for r in rows if str(r[0]) not in own]


def empty_side_tables(conn: psycopg.Connection[Any], base: str, name: str) -> list[str]:
    """Delete every row of collection *name*'s side tables (inside the caller's transaction); returns them."""
    from psycopg import sql

    schema = sql.Identifier(collection_schema(base, name))
    tables = side_tables(conn, base, name)
    for table in tables:
        conn.execute(sql.SQL("DELETE FROM {}.{}").format(schema, sql.Identifier(table)))
    return tables


def share_tables(conn: psycopg.Connection[Any], base: str, name: str) -> None:
    """(Re)create in collection *name*'s schema a view of each shared table of the store's schema (simple
    views: reads, writes, ``ON CONFLICT`` and row locks go through to the table)."""
    from psycopg import sql

    schema = collection_schema(base, name)
    for table in shared_tables():
        conn.execute(
            sql.SQL("CREATE OR REPLACE VIEW {}.{} AS SELECT * FROM {}.{}").format(
                sql.Identifier(schema), sql.Identifier(table), sql.Identifier(base), sql.Identifier(table)
            )
        )


def create_schema(conn: psycopg.Connection[Any], base: str, name: str) -> None:
    """Create collection *name*'s schema and tables (inside the caller's transaction)."""
    import uuid

    from psycopg import sql

    schema = collection_schema(base, name)
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    conn.execute("SELECT set_config('search_path', %s, true)", (search_path(base, name),))
    for statement in collection_statements():
        conn.execute(statement)
    conn.execute("INSERT INTO rag_metadata(key, value) VALUES ('store_id', %s)", (uuid.uuid4().hex,))
    share_tables(conn, base, name)
    conn.execute("SELECT set_config('search_path', %s, true)", (search_path(base, MAIN_COLLECTION),))


def migrate_collections(conn: psycopg.Connection[Any], base: str) -> None:
    """Bring every collection's schema up to :data:`SCHEMA_VERSION` (inside the migration's transaction)."""
    rows = conn.execute(
        "SELECT name, schema_version FROM rag_collections WHERE name <> %s AND schema_version < %s",
        (MAIN_COLLECTION, SCHEMA_VERSION),
    ).fetchall()
    for name, version in rows:
        conn.execute("SELECT set_config('search_path', %s, true)", (search_path(base, name),))
        for statement in collection_statements(after=int(version)):
            conn.execute(statement)
        share_tables(conn, base, name)  # a table the migrations added or changed
        upgrade_registry(conn, int(version))
        conn.execute(f'UPDATE "{base}".rag_collections SET schema_version = %s WHERE name = %s', (SCHEMA_VERSION, name))
    if rows:
        conn.execute("SELECT set_config('search_path', %s, true)", (search_path(base, MAIN_COLLECTION),))


def drop_other_collections(conn: psycopg.Connection[Any], base: str) -> None:
    """Wiping the store: drop every collection but ``main`` and point the alias at it (in a transaction)."""
    from psycopg import sql

    for (name,) in conn.execute("SELECT name FROM rag_collections WHERE name <> %s", (MAIN_COLLECTION,)).fetchall():
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(collection_schema(base, name))))
    conn.execute("DELETE FROM rag_collections WHERE name <> %s", (MAIN_COLLECTION,))
    conn.execute(
        "INSERT INTO rag_collections(name, created_at, schema_version) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        (MAIN_COLLECTION, time.time(), SCHEMA_VERSION),
    )
    conn.execute("UPDATE rag_aliases SET collection = %s, previous = NULL", (MAIN_COLLECTION,))
    refresh_live_hashes(conn, base)


def refresh_live_hashes(conn: psycopg.Connection[Any], base: str) -> None:
    """(Re)define the view ``rag_live_hashes``: the content hashes the live records of every collection
    refer to — what staging keeps (staging is shared). Run in the transaction that adds or drops one."""
    names = [str(r[0]) for r in conn.execute(f'SELECT name FROM "{base}".rag_collections').fetchall()]
    selects = [
        f"SELECT content_hash FROM \"{collection_schema(base, n)}\".documents WHERE status <> 'deleted'" for n in names
    ]
    body = " UNION ".join(selects) or "SELECT NULL::text AS content_hash WHERE FALSE"
    conn.execute(f'CREATE OR REPLACE VIEW "{base}".rag_live_hashes AS {body}')


def drop_schema(conn: psycopg.Connection[Any], base: str, name: str) -> None:
    """Drop collection *name* (its schema; ``main``'s tables, which share the store's schema, are emptied
    — its side tables too — and its model forgotten), inside the caller's transaction."""
    from psycopg import sql

    if name == MAIN_COLLECTION:  # the store's own schema holds the shared tables too: empty main's
        conn.execute("SELECT set_config('search_path', %s, true)", (search_path(base, name),))
        for table in ("sparse_vectors", "chunks", "documents", "parents", "rag_changes"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM tag_documents")
        conn.execute("DELETE FROM tag_vectors")
        conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
        conn.execute("ALTER TABLE chunks ALTER COLUMN vector TYPE vector")
        conn.execute(
            "DELETE FROM rag_metadata WHERE key IN "
            "('embedding_model', 'embedding_dimension', 'embedding_spec', 'sparse_encoder')"
        )
        conn.execute(  # a keyword index still reading main rebuilds (empty) instead of catching up
            "INSERT INTO rag_metadata(key, value) SELECT 'changes_floor', (version + 1)::text FROM rag_state "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
        )
        conn.execute("UPDATE rag_state SET version = version + 1 WHERE id = 1")
        empty_side_tables(conn, base, name)  # the graph's, the hierarchy's, memory's rows of main
    conn.execute("DELETE FROM rag_collections WHERE name = %s", (name,))
    conn.execute("UPDATE rag_aliases SET previous = NULL WHERE previous = %s", (name,))
    refresh_live_hashes(conn, base)  # before the schema goes: the view reads it
    if name != MAIN_COLLECTION:
        schema = collection_schema(base, name)
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
