"""The version a hierarchy reader's cached matrices key on never comes back: not after a wipe empties the
tables and new writes count up to the old number again (on both stores), not through the store's public
wipe (PostgreSQL)."""

import pytest

from ragwright.hierarchy.tables import HierarchyTables, open_hierarchy_tables
from ragwright.sources import BytesSource
from tests.graph.backends import open_at

from .conftest import ACME, BREAD, ROCKETS, WHALES, make


def _counter(tables: HierarchyTables) -> int:
    rows = tables._rows("SELECT value FROM hier_state WHERE key = 'version'")
    return int(rows[0][0]) if rows else 0


def _write_until(tables: HierarchyTables, count: int) -> None:
    """Writes (each bumps the counter) until the counter reads *count*."""
    while _counter(tables) < count:
        tables.remove_document("no-such-document")
    assert _counter(tables) == count


def test_emptied_tables_never_repeat_a_version(location: str) -> None:
    store = open_at(location)
    tables = open_hierarchy_tables(store)
    assert tables.version().endswith(":0")  # opened, nothing written yet
    _write_until(tables, 3)
    old = tables.version()
    with tables.db.write("hierarchy") as (run, _):  # what a wipe does to the side tables
        for table in ("hier_documents", "hier_vectors", "hier_nodes", "hier_state"):
            run(f"DELETE FROM {table}")
    assert tables.version() != old
    _write_until(tables, 3)  # the counter is back where it was
    assert tables.version() != old
    tables.close()
    store.close()


@pytest.mark.integration
def test_a_wipe_never_lets_a_searcher_serve_its_cached_rows(pg_dsn: str) -> None:
    rag = make(pg_dsn, branching=2)
    rag.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS, "bread.md": BREAD}), tenant="acme")
    hierarchy = rag.hierarchy
    assert hierarchy is not None
    assert hierarchy.search("humpback whales migrate", identity=ACME).results[0].document_id == "whales.md"
    rows, _ = hierarchy.searcher.document_matrix()  # cached now
    assert {r.document_id for r in rows} == {"whales.md", "rockets.md", "bread.md"}
    count = _counter(hierarchy.index.tables)
    rag.store.wipe()
    later = make(pg_dsn, branching=2)  # the store rebound to its model, as a new ingestion opens it
    later.ingest(BytesSource({"bread.md": BREAD}), tenant="acme")
    assert 0 < _counter(hierarchy.index.tables) < count
    _write_until(hierarchy.index.tables, count)  # the same number the cache was built at
    rows, _ = hierarchy.searcher.document_matrix()
    assert {r.document_id for r in rows} == {"bread.md"}  # the rows now, not the ones cached before the wipe
    found = hierarchy.search("humpback whales migrate", identity=ACME, mode="tree").results
    assert all(r.document_id == "bread.md" for r in found)


def test_a_reader_opened_on_an_older_store_has_a_version(location: str) -> None:
    """Tables written before the epoch existed get one when opened, so their version is never empty."""
    store = open_at(location)
    tables = open_hierarchy_tables(store)
    _write_until(tables, 2)
    with tables.db.write("hierarchy") as (run, _):
        run("DELETE FROM hier_state WHERE key = 'epoch'")  # as a store written by an older ragwright
    tables.close()
    again = open_hierarchy_tables(store)
    assert again.version().endswith(":2") and len(again.version()) > len(":2")
    again.close()
    store.close()
