"""The PostgreSQL schema of a ragwright store: versioned migrations and row ↔ object conversion.

Migrations are ordered lists of statements; ``rag_schema_version`` records which ran. They apply
under a transaction-scoped advisory lock, so several workers opening a fresh database at once do not
race. The ``vector`` column is created without a dimension and typed (``vector(d)``) with its HNSW
index when the first embedding model is bound.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ragwright.model.chunk import Chunk
from ragwright.stores.common import chunk_from_columns

CHUNK_COLUMNS: Final = (
    "chunk_id, document_id, position, text, embed_text, section_path, page, page_end, parent_id, "
    "prev_id, next_id, metadata, tenant, acl"
)

#: (version, statements). Append new versions; never edit a released one.
MIGRATIONS: Final[tuple[tuple[int, tuple[str, ...]], ...]] = (
    (
        1,
        (
            "CREATE TABLE rag_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            # One row: the change counter. Every write bumps it inside its transaction, which orders
            # writers; rag_changes says which documents each version touched (derived state catches up).
            "CREATE TABLE rag_state (id INT PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
            "INSERT INTO rag_state VALUES (1, 0)",
            "CREATE TABLE rag_changes (version BIGINT NOT NULL, document_id TEXT NOT NULL, removed TEXT[] NOT NULL)",
            "CREATE INDEX rag_changes_version ON rag_changes(version)",
            """CREATE TABLE documents (
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
                acl TEXT[] NOT NULL,
                source_root TEXT,
                title TEXT,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                metadata JSONB NOT NULL DEFAULT '{}'
            )""",
            "CREATE INDEX documents_status ON documents(status)",
            """CREATE TABLE chunks (
                chunk_id TEXT PRIMARY KEY,
                document_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                text TEXT NOT NULL,
                embed_text TEXT,
                section_path TEXT[] NOT NULL,
                page INTEGER,
                page_end INTEGER,
                parent_id TEXT,
                prev_id TEXT,
                next_id TEXT,
                metadata JSONB NOT NULL,
                tenant TEXT NOT NULL,
                acl TEXT[] NOT NULL,
                vector vector NOT NULL
            )""",
            "CREATE INDEX chunks_document ON chunks(document_id, position)",
            "CREATE INDEX chunks_tenant ON chunks(tenant)",
            "CREATE INDEX chunks_acl ON chunks USING gin (acl)",
            "CREATE INDEX chunks_metadata ON chunks USING gin (metadata jsonb_path_ops)",
            # Learned sparse vectors (see ragwright.stores.postgres.sparse); they go with their chunk.
            """CREATE TABLE sparse_vectors (
                chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id) ON DELETE CASCADE,
                vector sparsevec NOT NULL
            )""",
            """CREATE TABLE parents (
                parent_id TEXT PRIMARY KEY,
                document_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                text TEXT NOT NULL,
                metadata JSONB NOT NULL,
                tenant TEXT NOT NULL,
                acl TEXT[] NOT NULL
            )""",
            "CREATE INDEX parents_document ON parents(document_id)",
            "CREATE TABLE staged (content_hash TEXT PRIMARY KEY, data BYTEA NOT NULL, size BIGINT NOT NULL)",
            """CREATE TABLE parsed (
                content_hash TEXT NOT NULL,
                parser_version TEXT NOT NULL,
                document JSONB NOT NULL,
                PRIMARY KEY (content_hash, parser_version)
            )""",
            # The distributed-ingestion queue (see ragwright.stores.postgres.queue).
            """CREATE TABLE ingest_jobs (
                job_id BIGSERIAL PRIMARY KEY,
                document_id TEXT NOT NULL,
                uri TEXT NOT NULL,
                name_hint TEXT NOT NULL DEFAULT '',
                fingerprint TEXT,
                payload BYTEA,
                record JSONB,
                item_metadata JSONB NOT NULL DEFAULT '{}',
                tenant TEXT NOT NULL,
                acl TEXT[],
                metadata JSONB NOT NULL DEFAULT '{}',
                status TEXT NOT NULL DEFAULT 'queued',
                attempts INTEGER NOT NULL DEFAULT 0,
                worker TEXT,
                lease_until TIMESTAMPTZ,
                started_at TIMESTAMPTZ,
                error TEXT,
                enqueued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )""",
            "CREATE INDEX ingest_jobs_claim ON ingest_jobs(status, job_id)",
        ),
    ),
    (
        2,
        (
            # Tag-based retrieval (see ragwright.stores.postgres.tags): one vector per (model, key, value),
            # float32 little-endian bytes; which documents carry which tags.
            """CREATE TABLE tag_vectors (
                model TEXT NOT NULL,
                tag_key TEXT NOT NULL,
                tag_value TEXT NOT NULL,
                vector BYTEA NOT NULL,
                PRIMARY KEY (model, tag_key, tag_value)
            )""",
            """CREATE TABLE tag_documents (
                document_id TEXT NOT NULL,
                tag_key TEXT NOT NULL,
                tag_value TEXT NOT NULL,
                PRIMARY KEY (document_id, tag_key, tag_value)
            )""",
            "CREATE INDEX tag_documents_tag ON tag_documents(tag_key, tag_value)",
        ),
    ),
    (
        3,
        (
            # Staging leases of ingestion runs in flight (see ragwright.stores.base.Staging).
            """CREATE TABLE staging_leases (
                run_id TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                leased_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                PRIMARY KEY (run_id, content_hash)
            )""",
        ),
    ),
    (
        4,
        (
            # Physical collections (see ragwright.stores.postgres.collections): "main" is this schema's own
            # tables, every other one a schema of its own; the "live" alias names the one readers use.
            # "builder" is set while a reindex builds the collection (its process holds an advisory lock).
            """CREATE TABLE rag_collections (
                name TEXT PRIMARY KEY,
                created_at DOUBLE PRECISION NOT NULL,
                note TEXT NOT NULL DEFAULT '',
                builder TEXT,
                schema_version INTEGER NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE rag_aliases (
                alias TEXT PRIMARY KEY,
                collection TEXT NOT NULL,
                previous TEXT,
                switched_at DOUBLE PRECISION NOT NULL
            )""",
            "INSERT INTO rag_collections(name, created_at) VALUES ('main', extract(epoch FROM now()))",
            "INSERT INTO rag_aliases(alias, collection, switched_at) "
            "VALUES ('live', 'main', extract(epoch FROM now()))",
        ),
    ),
    (
        5,
        (
            # The registry fields as typed columns (ragwright.stores.sql_registry); rows written before
            # are moved over once by migrate.py (they were "_"-prefixed keys of the metadata column).
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS name_hint TEXT",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS parent_document TEXT",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS children TEXT[]",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS metadata_keys TEXT[]",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS warnings TEXT[]",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS source_meta JSONB",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS error_type TEXT",
            "ALTER TABLE documents ADD COLUMN IF NOT EXISTS attempts BIGINT",
        ),
    ),
)
SCHEMA_VERSION: Final = MIGRATIONS[-1][0]

#: The tables each physical collection has of its own (in its own schema, see :mod:`.collections`); the
#: others (staging, the queue, the collections and the alias) are the store's, in its base schema.
PER_COLLECTION: Final = frozenset(
    {"rag_metadata", "rag_state", "rag_changes", "documents", "chunks", "sparse_vectors", "parents"}
    | {"tag_vectors", "tag_documents"}
)
_TARGET = re.compile(r"^\s*(?:CREATE TABLE|CREATE INDEX \w+ ON|INSERT INTO|ALTER TABLE|UPDATE)\s+(\w+)", re.I)


def statement_table(statement: str) -> str | None:
    """The table a migration statement creates, indexes, fills or alters (``None``: not one of those)."""
    match = _TARGET.match(statement)
    return None if match is None else match.group(1)


def collection_statements(after: int = 0) -> list[str]:
    """The statements of the migrations after version *after* that concern a collection's own tables
    (run in a collection's schema to create it, or to bring it up to :data:`SCHEMA_VERSION`)."""
    return [
        statement
        for version, statements in MIGRATIONS
        if version > after
        for statement in statements
        if statement_table(statement) in PER_COLLECTION
    ]


def pg_text(value: str) -> str:
    """PostgreSQL text cannot hold NUL: it becomes U+FFFD (the replacement character)."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return pg_text(value)
    if isinstance(value, dict):
        return {pg_text(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def pg_json(value: Any) -> str:
    """JSON for a JSONB parameter (JSONB cannot hold ``\\u0000`` either)."""
    return json.dumps(_clean(value), default=str)


def chunk_from_row(row: tuple[Any, ...] | Any) -> Chunk:
    return chunk_from_columns(row)


def chunk_row(c: Chunk) -> tuple[Any, ...]:
    """The chunk's columns (without the vector) as parameters, in CHUNK_COLUMNS order."""
    return (
        c.id,
        c.document_id,
        c.position,
        pg_text(c.text),
        None if c.embed_text is None else pg_text(c.embed_text),
        [pg_text(s) for s in c.section_path],
        c.page,
        c.page_end,
        c.parent_id,
        c.prev_id,
        c.next_id,
        pg_json(c.metadata),
        c.tenant,
        list(c.acl),
    )
