"""Registry fields as typed columns on PostgreSQL (stores/sql_registry.py): records read back exactly as
written, the columns are typed, the metadata column holds only the caller's metadata, and a store written
before them (schema version 4: the fields under ``_`` keys in the metadata, with a second collection) is
migrated once."""

from __future__ import annotations

import dataclasses
import json

from ragwright.model.records import DocumentStatus
from ragwright.stores.postgres import PostgresStore
from tests.stores.test_sql_registry import FIELDS, TYPED, record


def test_records_read_back_and_the_fields_are_typed_columns(pg_dsn: str) -> None:
    import psycopg

    mine = {"_children": "a caller's own key", "_attempts": True, "plain": 1}
    with PostgresStore(pg_dsn) as store:
        store.record(record("a", {"year": 2024}, **TYPED))
        store.record(record("b", mine))
        store.record(record("c", {}, metadata_keys=()))
        assert store.get_record("a") == record("a", {"year": 2024}, **TYPED)
        assert store.get_record("b") == record("b", mine)
        assert store.get_record("c") == record("c", {}, metadata_keys=())
        assert store.get_record("b").metadata_keys is None  # type: ignore[union-attr]
        assert [r.document_id for r in store.list_records(DocumentStatus.INDEXED)] == ["a", "b", "c"]
        assert store.update_access("a", "other", ("board",)) == 0  # no chunks; the record follows
        moved = store.get_record("a")
        assert moved is not None and (moved.tenant, moved.acl) == ("other", ("board",))
        assert dataclasses.replace(moved, tenant="acme", acl=("hr", "*")) == record("a", {"year": 2024}, **TYPED)
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute(
            "SELECT metadata, name_hint, children, attempts, source_meta FROM ragwright.documents "
            "WHERE document_id = 'a'"
        ).fetchone()
        types: dict[str, str] = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'ragwright' AND table_name = 'documents'"
            ).fetchall()
        )
    assert row == ({"year": 2024}, "report.pdf", FIELDS["_children"], 3, FIELDS["_source_meta"])
    assert (types["children"], types["source_meta"], types["attempts"]) == ("ARRAY", "jsonb", "bigint")


def test_a_store_of_schema_version_4_is_migrated_once_in_every_collection(pg_dsn: str) -> None:
    import psycopg

    from ragwright.stores.sql_registry import REGISTRY_FIELDS

    with PostgresStore(pg_dsn) as store:
        store.record(record("main-doc", {}))
        name = store.create_collection()
        with store.open_collection(name) as other:
            other.record(record("g-doc", {}))
    old = json.dumps({"year": 2024, **FIELDS})
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # back to version 4: no columns, fields in metadata
        for schema in ("ragwright", f"ragwright__{name}"):
            for field in REGISTRY_FIELDS:
                conn.execute(f"ALTER TABLE {schema}.documents DROP COLUMN {field.column}")
            conn.execute(f"UPDATE {schema}.documents SET metadata = %s::jsonb", (old,))
        conn.execute("DELETE FROM ragwright.rag_schema_version WHERE version = 5")
        conn.execute("UPDATE ragwright.rag_collections SET schema_version = 4 WHERE name = %s", (name,))
    with PostgresStore(pg_dsn) as store:
        assert store.get_record("main-doc") == record("main-doc", {"year": 2024}, **TYPED)
        with store.open_collection(name) as other:
            assert other.get_record("g-doc") == record("g-doc", {"year": 2024}, **TYPED)
    with psycopg.connect(pg_dsn) as conn:
        for schema in ("ragwright", f"ragwright__{name}"):
            row = conn.execute(f"SELECT metadata, name_hint FROM {schema}.documents").fetchone()
            assert row == ({"year": 2024}, "report.pdf")
        (versions,) = conn.execute(
            "SELECT array_agg(version ORDER BY version) FROM ragwright.rag_schema_version"
        ).fetchone()  # type: ignore[misc]
    assert versions == [1, 2, 3, 4, 5]
