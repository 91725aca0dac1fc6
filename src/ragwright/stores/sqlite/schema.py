"""The SQLite schema of a ragwright store, and row ↔ object conversion."""

from __future__ import annotations

import json
from typing import Any, Final

from ragwright.model.chunk import Chunk
from ragwright.model.records import DocumentRecord, DocumentStatus

SCHEMA_VERSION: Final = 1

CHUNK_COLUMNS: Final = (
    "chunk_id, document_id, position, text, embed_text, section_path, page, page_end, parent_id, "
    "prev_id, next_id, metadata, tenant, acl"
)

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS rag_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS documents (
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
        metadata TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX IF NOT EXISTS documents_status ON documents(status)",
    "CREATE INDEX IF NOT EXISTS documents_model ON documents(embedding_model)",
    """CREATE TABLE IF NOT EXISTS chunks (
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
    "CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id, position)",
    "CREATE INDEX IF NOT EXISTS chunks_tenant ON chunks(tenant)",
    """CREATE TABLE IF NOT EXISTS parents (
        parent_id TEXT PRIMARY KEY,
        document_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        tenant TEXT NOT NULL,
        acl TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS parents_document ON parents(document_id)",
    """CREATE TABLE IF NOT EXISTS staged (
        content_hash TEXT PRIMARY KEY,
        data BLOB NOT NULL,
        size INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS parsed (
        content_hash TEXT NOT NULL,
        parser_version TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (content_hash, parser_version)
    )""",
)


def chunk_from_row(row: tuple[Any, ...]) -> Chunk:
    (cid, doc, pos, text, embed_text, section, page, page_end, parent, prev, nxt, meta, tenant, acl) = row
    return Chunk(
        id=cid,
        document_id=doc,
        text=text,
        position=pos,
        section_path=tuple(json.loads(section)),
        page=page,
        page_end=page_end,
        parent_id=parent,
        prev_id=prev,
        next_id=nxt,
        metadata=json.loads(meta),
        tenant=tenant,
        acl=tuple(json.loads(acl)),
        embed_text=embed_text,
    )


def record_from_row(row: tuple[Any, ...]) -> DocumentRecord:
    (doc, source, chash, status, pv, cv, em, count, stage, reason, tenant, acl, root, title, ca, ua, meta) = row
    return DocumentRecord(
        document_id=doc,
        source=source,
        content_hash=chash,
        status=DocumentStatus(status),
        parser_version=pv,
        chunker_version=cv,
        embedding_model=em,
        chunk_count=count,
        stage=stage,
        reason=reason,
        tenant=tenant,
        acl=tuple(json.loads(acl)),
        source_root=root,
        title=title,
        created_at=ca,
        updated_at=ua,
        metadata=json.loads(meta),
    )


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
