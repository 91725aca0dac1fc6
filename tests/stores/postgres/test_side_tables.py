"""The tables features keep beside the PostgreSQL store's own (graph, hierarchy, memory) go with its rows:
wiping the store and dropping ``main`` after a reindex leave none of their rows behind."""

from typing import Any

import numpy as np
import psycopg

from ragwright.graph.tables import open_graph_tables
from ragwright.stores.postgres import PostgresStore
from ragwright.stores.postgres.schemas import side_tables
from ragwright.testing.conformance import DIM, chunks_for, record, unit
from tests.stores.side_fill import FILLED, counts, fill


def rows_in(dsn: str, schema: str) -> dict[str, int]:
    """Every side table of *schema* with its row count, read from outside the store."""
    with psycopg.connect(dsn) as conn:
        tables = side_tables(conn, schema, "main")
        out: dict[str, Any] = {}
        for table in tables:
            row = conn.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()
            out[table] = row[0] if row else 0
    return out


def test_side_tables_are_the_features_tables_only(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        fill(store, "a")
        found = set(rows_in(pg_dsn, "ragwright"))
    assert set(FILLED) <= found
    assert not found & {"chunks", "documents", "staged", "rag_metadata", "rag_schema_version", "ingest_jobs"}
    assert all(t.startswith(("graph_", "hier_", "memory_")) for t in found), found


def test_wipe_deletes_the_rows_of_the_side_tables(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        store.bind_embedder("m", DIM)
        store.replace_document(record("a"), chunks_for("a", ["x"]), np.stack([unit(1)]))
        fill(store, "a")
        assert all(n > 0 for n in counts(store).values()), counts(store)
        store.wipe()
        assert counts(store) == dict.fromkeys(counts(store), 0)
        assert store.count_chunks() == 0
        fill(store, "b")  # the features' tables are still there, and usable
        assert all(n > 0 for n in counts(store).values())
    with PostgresStore(pg_dsn) as reopened:
        assert open_graph_tables(reopened).documents().keys() == {"b"}


def test_dropping_main_after_a_reindex_deletes_its_side_rows_and_keeps_the_new_collections(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        store.bind_embedder("m", DIM)
        fill(store, "old")  # in main's schema (the store's own)
        name = store.create_collection()
        with store.open_collection(name) as built:
            built.bind_embedder("m", DIM)
            fill(built, "new")  # in the new collection's schema
        store.switch_alias(name)
        before = rows_in(pg_dsn, "ragwright")
        assert min(before[t] for t in FILLED) > 0  # main's rows are still there before the drop
        store.drop_collection("main")
        main_rows = rows_in(pg_dsn, "ragwright")
        assert main_rows and set(main_rows.values()) == {0}, main_rows
        new_rows = rows_in(pg_dsn, f"ragwright__{name}")
        assert min(new_rows[t] for t in FILLED) > 0, new_rows  # the live collection's side rows stay
        assert store.current_collection == name and counts(store)["graph documents"] == 1


def test_the_side_database_follows_the_store_objects_collection(pg_dsn: str) -> None:
    # the store names its own location: main, a pinned collection's name, the new one after the switch
    with PostgresStore(pg_dsn) as store:
        store.bind_embedder("m", DIM)
        db = store.side_database()
        assert db.location() == "main"
        name = store.create_collection()
        with store.open_collection(name) as built:
            built.bind_embedder("m", DIM)
            assert built.side_database().location() == name
        store.switch_alias(name)
        store.count_chunks()  # a write or read follows the alias
        assert db.location() == store.current_collection == name
