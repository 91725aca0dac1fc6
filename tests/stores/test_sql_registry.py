"""Registry fields as typed columns (issue 23, "habits to add"): written once for SQLite and PostgreSQL
(stores/sql_registry.py); a record reads back exactly as written; an SQLite file written before the
columns existed is migrated once, with a backup."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.sql_registry import REGISTRY_FIELDS, join_fields, split_fields
from ragwright.stores.sqlite import SqliteStore

FIELDS = {
    "_name": "report.pdf",
    "_parent": "mail.eml",
    "_children": ["mail.eml#1", "mail.eml#2"],
    "_keys": ["author", "year"],
    "_warnings": [],
    "_source_meta": {"author": "Ada", "tags": ["a", "b"]},
    "_error_type": "ParseError",
    "_attempts": 3,
}


def record(doc_id: str, metadata: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord(
        document_id=doc_id,
        source=f"file:///{doc_id}",
        content_hash="h-" + doc_id,
        status=DocumentStatus.INDEXED,
        tenant="acme",
        acl=("hr", "*"),
        created_at=1.0,
        updated_at=2.0,
        metadata=metadata,
    )


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"year": 2024, **FIELDS},
        {"_children": "not a list", "_attempts": True, "_name": 7, "_source_meta": [1], "user": {"_name": "x"}},
        {"_keys": ["ok", 3], "_warnings": ["w"], "_private": "not a registry field"},
    ],
    ids=["empty", "all-fields", "wrong-types-stay-in-metadata", "mixed"],
)
def test_split_then_join_gives_the_metadata_back(metadata: dict[str, Any]) -> None:
    rest, values = split_fields(metadata)
    assert join_fields(rest, values) == metadata
    assert not {f.key for f, v in zip(REGISTRY_FIELDS, values, strict=True) if v is not None} & set(rest)


def test_sqlite_keeps_the_registry_fields_in_typed_columns_and_reads_records_back(tmp_path: Path) -> None:
    odd = {"_children": "not a list", "_attempts": True, "plain": 1}
    with SqliteStore(tmp_path / "s.db") as store:
        store.record(record("a", {"year": 2024, **FIELDS}))
        store.record(record("b", odd))
        assert store.get_record("a") == record("a", {"year": 2024, **FIELDS})
        assert store.get_record("b") == record("b", odd)
        assert [r.document_id for r in store.list_records(DocumentStatus.INDEXED)] == ["a", "b"]
    conn = sqlite3.connect(tmp_path / "s.db")
    row = conn.execute(
        "SELECT metadata, name_hint, parent_document, children, attempts, source_meta FROM documents "
        "WHERE document_id = 'a'"
    ).fetchone()
    assert json.loads(row[0]) == {"year": 2024}
    assert row[1:5] == ("report.pdf", "mail.eml", json.dumps(FIELDS["_children"]), 3)
    assert json.loads(row[5]) == FIELDS["_source_meta"]
    (children,) = conn.execute("SELECT document_id FROM documents WHERE parent_document = 'mail.eml'").fetchone()
    assert children == "a"  # SQL can read the fields now
    conn.close()


def test_an_sqlite_file_of_the_old_layout_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        store.record(record("kept", {"year": 2024}))
    conn = sqlite3.connect(path)  # the version-2 layout: no registry columns, the fields in the metadata
    for field in REGISTRY_FIELDS:
        conn.execute(f"ALTER TABLE documents DROP COLUMN {field.column}")
    conn.execute(
        "UPDATE documents SET metadata = ? WHERE document_id = 'kept'", (json.dumps({"year": 2024, **FIELDS}),)
    )
    conn.execute("UPDATE rag_metadata SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with SqliteStore(path) as store:
        assert store.upgrade_backup == tmp_path / "s.db.bak-v2"
        assert store.get_record("kept") == record("kept", {"year": 2024, **FIELDS})
        store.record(record("new", {"_name": "n.md"}))
    conn = sqlite3.connect(path)
    metadata, name, version = conn.execute(
        "SELECT metadata, name_hint, (SELECT value FROM rag_metadata WHERE key = 'schema_version') FROM documents "
        "WHERE document_id = 'kept'"
    ).fetchone()
    conn.close()
    assert (json.loads(metadata), name, version) == ({"year": 2024}, "report.pdf", "3")
    with SqliteStore(path) as again:  # once: nothing to upgrade the second time
        assert again.upgrade_backup is None
        assert again.get_record("kept") == record("kept", {"year": 2024, **FIELDS})
        assert again.get_record("new") == record("new", {"_name": "n.md"})
