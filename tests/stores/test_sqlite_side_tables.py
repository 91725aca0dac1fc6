"""The tables features keep beside the SQLite store's own (graph, hierarchy, memory) go with its rows:
the ``collection`` guard's wipe leaves none of their rows behind (as wiping a PostgreSQL store does,
tests/stores/postgres/test_side_tables.py); dropping a collection that is not live leaves them, since
every collection of a file shares them."""

import sqlite3
from pathlib import Path

import numpy as np

from ragwright.graph.tables import open_graph_tables
from ragwright.hierarchy.tables import open_hierarchy_tables
from ragwright.memory.store import open_memory
from ragwright.models.sparse.base import SparseVector
from ragwright.stores.sqlite import SqliteStore
from ragwright.stores.sqlite.side_tables import side_tables
from ragwright.testing.conformance import DIM, chunks_for, record, unit
from tests.stores.side_fill import FILLED, SCOPE, counts, fill


def rows_in(path: Path) -> dict[str, int]:
    """Every side table of the file with its row count, read from outside the store."""
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in side_tables(conn)}
    finally:
        conn.close()


def index(store: SqliteStore, doc: str) -> None:
    store.bind_embedder("m", DIM)
    store.replace_document(record(doc), chunks_for(doc, ["x"]), np.stack([unit(1)]))


def test_side_tables_are_the_features_tables_only(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        index(store, "a")
        store.put_sparse([(store.document_chunks("a")[0].id, SparseVector.from_dict({1: 0.5}))], encoder="splade")
        store.tag_table()  # the tag tables (the store's own)
        built = store.create_collection()  # a second collection's tables (the store's own)
        fill(store, "a")
    conn = sqlite3.connect(path)
    try:
        every = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    found = set(rows_in(path))
    assert set(FILLED) <= found
    assert {"chunks", "documents", "staged", "rag_metadata", f"chunks__{built}", "sparse_vectors"} <= every - found
    assert all(t.startswith(("graph_", "hier_", "memory_")) for t in found), found


def test_collection_mismatch_wipe_deletes_the_rows_of_the_side_tables(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, collection="v1") as store:
        index(store, "a")
        fill(store, "a")
        assert all(n > 0 for n in counts(store).values()), counts(store)
    with SqliteStore(path, collection="v2") as store:  # the guard's wipe
        assert store.count_chunks() == 0
        assert counts(store) == dict.fromkeys(counts(store), 0)
        left = rows_in(path)  # emptied, not dropped (opening the hierarchy again wrote its new epoch)
        assert set(FILLED) <= set(left) and {n for t, n in left.items() if t != "hier_state"} == {0}, left
        fill(store, "b")  # the features' tables are still there, and usable
        assert all(n > 0 for n in counts(store).values())
    with SqliteStore(path, collection="v2") as reopened:  # same name: nothing wiped
        assert open_graph_tables(reopened).documents().keys() == {"b"}
        assert open_hierarchy_tables(reopened).documents().keys() == {"b"}


def test_features_held_open_across_the_wipe_keep_working(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, collection="v1") as store:
        index(store, "a")
        fill(store, "a")
        graph, hierarchy, memory = open_graph_tables(store), open_hierarchy_tables(store), open_memory(store)
        assert hierarchy.documents().keys() == {"a"} and len(memory.items(SCOPE)) == 1
        before = hierarchy.version()
        SqliteStore(path, collection="v2").close()  # another store object opens it under another name
        assert graph.documents() == {} and hierarchy.documents() == {} and memory.items(SCOPE) == []
        assert hierarchy.version() != before  # readers keyed on it drop what they hold
        fill(store, "b")
        assert graph.documents().keys() == {"b"} and hierarchy.documents().keys() == {"b"}
        assert hierarchy.version() != before and len(memory.items(SCOPE)) == 1


def test_dropping_a_collection_keeps_the_side_rows_the_collections_share(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        index(store, "old")
        fill(store, "old")
        name = store.create_collection()
        with store.open_collection(name) as built:
            index(built, "new")
            fill(built, "new")  # the same tables: every collection of the file shares them
        store.switch_alias(name)
        before = rows_in(path)
        assert min(before[t] for t in FILLED) > 0
        store.drop_collection("main")
        assert rows_in(path) == before
        assert store.count_chunks() == 1 and store.current_collection == name  # reads the live one


def test_collection_mismatch_wipe_leaves_no_row_of_the_old_collection(tmp_path: Path) -> None:
    """Every persisted row goes, the store's own tables too: main's sparse vectors, the tags, the change
    log, staging and its leases (only the file's bookkeeping stays)."""
    path = tmp_path / "s.db"
    with SqliteStore(path, collection="v1") as store:
        index(store, "a")
        store.put_sparse([(store.document_chunks("a")[0].id, SparseVector.from_dict({1: 0.5}))], encoder="splade")
        tags = store.tag_table()
        tags.add_vectors("m", [("k", "v", unit(1))])
        tags.set_document_tags("a", [("k", "v")])
        store.stage("h1", b"raw")
        store.lease_staging("run", "h1")
        fill(store, "a")
    before = table_rows(path)
    assert all(before[t] > 0 for t in ("sparse_vectors", "tag_vectors", "tag_documents", "chunk_changes")), before
    assert before["staging_leases"] > 0 and before["staged"] > 0
    with SqliteStore(path, collection="v2") as store:
        assert store.sparse_encoder is None
    kept = {"rag_metadata", "collections", "aliases", "hier_state"}
    assert {t: n for t, n in table_rows(path).items() if n and t not in kept} == {}


def table_rows(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        names = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in names}
    finally:
        conn.close()
