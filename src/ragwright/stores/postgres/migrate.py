"""Schema creation, versioned migrations, the collection guard and wiping."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.postgres.connection import PostgresOptions, import_psycopg
from ragwright.stores.postgres.dialect import upgrade_registry
from ragwright.stores.postgres.schema import MIGRATIONS, SCHEMA_VERSION
from ragwright.stores.postgres.schemas import (
    MAIN_COLLECTION,
    drop_other_collections,
    empty_side_tables,
    migrate_collections,
    refresh_live_hashes,
)

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

_DATA_TABLES = (
    "sparse_vectors",
    "chunks",
    "documents",
    "parents",
    "staged",
    "parsed",
    "staging_leases",
    "rag_changes",
    "ingest_jobs",
    "tag_documents",
    "tag_vectors",
)


def migrate(conn: psycopg.Connection[Any], options: PostgresOptions, collection: str | None, where: str) -> str:
    """Create or upgrade the store's schema; apply the collection guard; return the store id."""
    psycopg_mod = import_psycopg()
    from psycopg import sql

    schema = sql.Identifier(options.schema)
    try:
        with conn.transaction():
            # One migrator at a time, across processes (a fresh database opened by several workers).
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('ragwright.migrate'))")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
            conn.execute(sql.SQL("SET LOCAL search_path TO {}, public").format(schema))
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (options.schema,)
                )
            }
            if tables and "rag_schema_version" not in tables:
                raise StoreError(
                    f"the schema {options.schema!r} of {where} holds tables but is not a ragwright store; "
                    "it was left untouched — choose another schema (PostgresOptions.schema)"
                )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS rag_schema_version "
                "(version INT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM rag_schema_version").fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"{where} has store schema version {current}; this ragwright reads up to version "
                    f"{SCHEMA_VERSION}. Upgrade ragwright, or use another schema"
                )
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute("INSERT INTO rag_schema_version(version) VALUES (%s)", (version,))
                log.info("store_migrated: %s schema %s to version %d", where, options.schema, version)
            if upgrade_registry(conn, current):
                log.info("registry_upgraded: %s schema %s", where, options.schema)
            migrate_collections(conn, options.schema)
            if conn.execute("SELECT to_regclass('rag_live_hashes')").fetchone() == (None,):
                refresh_live_hashes(conn, options.schema)
            conn.execute(
                "INSERT INTO rag_metadata(key, value) VALUES ('store_id', %s) ON CONFLICT DO NOTHING",
                (uuid.uuid4().hex,),
            )
            if collection is not None:
                stored = _meta(conn, "collection")
                if stored is not None and stored != collection:
                    log.warning(
                        "collection_mismatch_wiped: %s held collection %r, opened as %r; all rows wiped",
                        where,
                        stored,
                        collection,
                    )
                    _wipe_rows(conn, options.schema)
                conn.execute(
                    "INSERT INTO rag_metadata(key, value) VALUES ('collection', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (collection,),
                )
            store_id = _meta(conn, "store_id")
    except psycopg_mod.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"{where}: not allowed to create the store's schema or the pgvector extension ({exc}); "
            "ask the database owner to run CREATE EXTENSION vector, or connect as a role that may"
        ) from exc
    except psycopg_mod.errors.FeatureNotSupported as exc:  # pragma: no cover - depends on the server
        raise StoreError(f"{where}: {exc}") from exc
    except psycopg_mod.errors.UndefinedFile as exc:
        raise StoreError(f"{where}: the pgvector extension is not installed on this server ({exc})") from exc
    assert store_id is not None
    return store_id


def wipe(conn: psycopg.Connection[Any], base: str) -> str:
    """Delete every row (the side tables' too: the graph's, the hierarchy's, memory's) and the model binding,
    and every collection but ``main``; returns the new store id."""
    from psycopg import sql

    with conn.transaction():
        conn.execute(sql.SQL("SET LOCAL search_path TO {}, public").format(sql.Identifier(base)))
        _wipe_rows(conn, base)
        store_id = _meta(conn, "store_id")
    assert store_id is not None
    return store_id


def _wipe_rows(conn: psycopg.Connection[Any], base: str) -> None:
    drop_other_collections(conn, base)
    for table in _DATA_TABLES:
        conn.execute(f"DELETE FROM {table}")
    empty_side_tables(conn, base, MAIN_COLLECTION)
    conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
    conn.execute("ALTER TABLE chunks ALTER COLUMN vector TYPE vector")
    conn.execute(
        "DELETE FROM rag_metadata WHERE key IN "
        "('embedding_model', 'embedding_dimension', 'embedding_spec', 'changes_floor', 'sparse_encoder')"
    )
    conn.execute("UPDATE rag_metadata SET value = %s WHERE key = 'store_id'", (uuid.uuid4().hex,))
    # Derived state elsewhere (other processes' keyword indexes) must rebuild, not catch up.
    conn.execute(
        "INSERT INTO rag_metadata(key, value) SELECT 'changes_floor', (version + 1)::text FROM rag_state "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    )
    conn.execute("UPDATE rag_state SET version = version + 1 WHERE id = 1")


def _meta(conn: psycopg.Connection[Any], key: str) -> str | None:
    row = conn.execute("SELECT value FROM rag_metadata WHERE key = %s", (key,)).fetchone()
    return None if row is None else str(row[0])
