"""Registry fields as typed record fields and typed columns (issue 23, "habits to add"): written once for
SQLite and PostgreSQL (stores/sql_registry.py); a record reads back exactly as written and its ``metadata``
holds only the caller's metadata; an SQLite file written before the columns existed (the fields under
``_`` keys in the metadata) is migrated once, with a backup."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import Store
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sql_registry import REGISTRY_FIELDS, legacy_fields
from ragwright.stores.sqlite import SqliteStore

#: The registry fields as older stores kept them: ``_`` keys in the metadata.
FIELDS: dict[str, Any] = {
    "_name": "report.pdf",
    "_parent": "mail.eml",
    "_children": ["mail.eml#1", "mail.eml#2"],
    "_keys": ["author", "year"],
    "_warnings": ["page 3: no text layer"],
    "_source_meta": {"author": "Ada", "tags": ["a", "b"]},
    "_error_type": "ParseError",
    "_attempts": 3,
}
#: The same fields as the record carries them now.
TYPED: dict[str, Any] = {
    "name_hint": "report.pdf",
    "parent": "mail.eml",
    "children": ("mail.eml#1", "mail.eml#2"),
    "metadata_keys": ("author", "year"),
    "warnings": ("page 3: no text layer",),
    "source_meta": {"author": "Ada", "tags": ["a", "b"]},
    "error_type": "ParseError",
    "attempts": 3,
}


def record(doc_id: str, metadata: dict[str, Any], **fields: Any) -> DocumentRecord:
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
        **fields,
    )


def test_the_table_names_every_typed_field_of_the_record_once() -> None:
    declared = {f.name for f in dataclasses.fields(DocumentRecord)}
    assert [f.attr for f in REGISTRY_FIELDS] == list(TYPED)
    assert set(TYPED) <= declared
    assert [f.legacy_key for f in REGISTRY_FIELDS] == list(FIELDS)


def test_a_record_without_the_fields_has_their_defaults() -> None:
    r = record("a", {})
    assert (r.name_hint, r.parent, r.children, r.metadata_keys, r.warnings) == (None, None, (), None, ())
    assert (r.source_meta, r.error_type, r.attempts, r.metadata) == ({}, None, 0, {})


@pytest.mark.parametrize(
    ("metadata", "user", "fields"),
    [
        ({}, {}, {}),
        ({"year": 2024, **FIELDS}, {"year": 2024}, TYPED),
        (
            {"_children": "not a list", "_attempts": True, "_name": 7, "_source_meta": [1], "user": {"_name": "x"}},
            {"_children": "not a list", "_attempts": True, "_name": 7, "_source_meta": [1], "user": {"_name": "x"}},
            {},
        ),
        (
            {"_keys": ["ok", 3], "_warnings": ["w"], "_private": "not a registry field"},
            {"_keys": ["ok", 3], "_private": "not a registry field"},
            {"warnings": ("w",)},
        ),
    ],
    ids=["empty", "all-fields", "wrong-types-stay-in-metadata", "mixed"],
)
def test_legacy_metadata_splits_into_user_metadata_and_record_fields(
    metadata: dict[str, Any], user: dict[str, Any], fields: dict[str, Any]
) -> None:
    assert legacy_fields(metadata) == (user, fields)
    assert record("a", user, **fields).metadata == user  # the fields build a record


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "s.db")
    yield s
    s.close()


def test_every_store_keeps_the_typed_fields_and_the_user_metadata_apart(store: Store) -> None:
    full = record("a", {"year": 2024}, **TYPED)
    bare = record("b", {})
    no_keys = record("c", {}, metadata_keys=(), children=(), source_meta={})  # () is not "not recorded"
    mine = record("d", {"_name": "mine", "_parent": "p", "_attempts": 9})  # a caller's own "_" keys
    for r in (full, bare, no_keys, mine):
        store.record(r)
    assert [store.get_record(r.document_id) for r in (full, bare, no_keys, mine)] == [full, bare, no_keys, mine]
    got = store.get_record("d")
    assert got is not None and (got.name_hint, got.parent, got.attempts) == (None, None, 0)
    assert store.get_record("c").metadata_keys == ()  # type: ignore[union-attr]
    assert store.get_record("b").metadata_keys is None  # type: ignore[union-attr]
    assert [r.document_id for r in store.list_records(DocumentStatus.INDEXED)] == ["a", "b", "c", "d"]


def test_sqlite_keeps_the_registry_fields_in_typed_columns(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        store.record(record("a", {"year": 2024}, **TYPED))
        store.record(record("b", {"_children": "mine"}))
    conn = sqlite3.connect(tmp_path / "s.db")
    row = conn.execute(
        "SELECT metadata, name_hint, parent_document, children, attempts, source_meta, error_type, metadata_keys "
        "FROM documents WHERE document_id = 'a'"
    ).fetchone()
    assert json.loads(row[0]) == {"year": 2024}
    assert row[1:5] == ("report.pdf", "mail.eml", json.dumps(FIELDS["_children"]), 3)
    assert json.loads(row[5]) == FIELDS["_source_meta"]
    assert (row[6], json.loads(row[7])) == ("ParseError", ["author", "year"])
    (children,) = conn.execute("SELECT document_id FROM documents WHERE parent_document = 'mail.eml'").fetchone()
    assert children == "a"  # SQL can read the fields
    stored, column = conn.execute("SELECT metadata, children FROM documents WHERE document_id = 'b'").fetchone()
    assert (json.loads(stored), json.loads(column)) == ({"_children": "mine"}, [])
    conn.close()


def _to_version_2(path: Path, metadata: dict[str, Any], doc_id: str = "kept") -> None:
    """Rewrite the SQLite file at *path* to the version-2 layout: no registry columns, *metadata* (with
    the fields under ``_`` keys) in the metadata column of *doc_id*."""
    conn = sqlite3.connect(path)
    for field in REGISTRY_FIELDS:
        conn.execute(f"ALTER TABLE documents DROP COLUMN {field.column}")
    conn.execute("UPDATE documents SET metadata = ? WHERE document_id = ?", (json.dumps(metadata), doc_id))
    conn.execute("UPDATE rag_metadata SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def test_an_sqlite_file_of_the_old_layout_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        store.record(record("kept", {"year": 2024}))
        store.record(record("odd", {}))
        store.record(record("plain", {"year": 1999}))
    _to_version_2(path, {"year": 2024, **FIELDS})
    conn = sqlite3.connect(path)
    odd = {"_children": "not a list", "_attempts": True, "_name": "o.md", "x": 1}
    conn.execute("UPDATE documents SET metadata = ? WHERE document_id = 'odd'", (json.dumps(odd),))
    conn.commit()
    conn.close()
    with SqliteStore(path) as store:
        assert store.upgrade_backup == tmp_path / "s.db.bak-v2"
        assert store.get_record("kept") == record("kept", {"year": 2024}, **TYPED)
        assert store.get_record("odd") == record(
            "odd", {"_children": "not a list", "_attempts": True, "x": 1}, name_hint="o.md"
        )
        assert store.get_record("plain") == record("plain", {"year": 1999})
        store.record(record("new", {}, name_hint="n.md"))
    conn = sqlite3.connect(path)
    metadata, name, version = conn.execute(
        "SELECT metadata, name_hint, (SELECT value FROM rag_metadata WHERE key = 'schema_version') FROM documents "
        "WHERE document_id = 'kept'"
    ).fetchone()
    conn.close()
    assert (json.loads(metadata), name, version) == ({"year": 2024}, "report.pdf", "3")
    with SqliteStore(path) as again:  # once: nothing to upgrade the second time
        assert again.upgrade_backup is None
        assert again.get_record("kept") == record("kept", {"year": 2024}, **TYPED)
        assert again.get_record("new") == record("new", {}, name_hint="n.md")
