"""Tag-based retrieval on PostgreSQL: the tag table, its migration, and the security of injected tags."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions, TagRetrievalOptions
from ragwright.rag import Rag
from ragwright.retrieve.strategies.options import StrategyOptions
from ragwright.sources import BytesSource
from ragwright.stores.postgres import PostgresStore
from ragwright.stores.tags import TagTable
from ragwright.testing.doubles import HashingEmbedder

LOOSE = TagRetrievalOptions(min_score=0.5)


@pytest.fixture
def rag(pg_dsn: str) -> Iterator[Rag]:
    rag = Rag(
        PostgresStore(pg_dsn),
        HashingEmbedder(),
        retrieval_options=RetrievalOptions(),
        strategies=StrategyOptions(tags=LOOSE),
    )
    try:
        yield rag
    finally:
        rag.close()


def ingest(rag: Rag, doc: str, text: str, metadata: dict[str, Any], **kw: Any) -> None:
    rag.ingest(BytesSource({doc: text.encode()}), metadata=metadata, **kw)


def table(rag: Rag) -> TagTable:
    store = rag.store
    assert isinstance(store, PostgresStore)
    return store.tag_table()


def test_the_query_discovers_the_tag_and_each_tag_is_embedded_once(rag: Rag) -> None:
    ingest(rag, "fin1.txt", "Budget targets for the next quarter were raised.", {"department": "finance"})
    ingest(rag, "fin2.txt", "The budget review found the targets realistic.", {"department": "finance"})
    ingest(rag, "ops.txt", "Budget targets for the warehouse fleet.", {"department": "operations", "region": "north"})
    assert isinstance(table(rag), TagTable)
    assert table(rag).embedded(rag.embedder.name) == {
        ("department", '"finance"'),
        ("department", '"operations"'),
        ("region", '"north"'),
    }
    assert "ops.txt" in {r.document_id for r in rag.search("finance budget targets", top_k=5, use_tag_retrieval=False)}
    found: Any = rag.search("finance budget targets", top_k=5)
    assert {r.document_id for r in found} == {"fin1.txt", "fin2.txt"}
    assert found.extensions["tag_filter"] == {"department": "finance"}
    calls = rag.embedder.calls  # type: ignore[attr-defined]
    ingest(rag, "fin3.txt", "Another finance memo about the budget.", {"department": "finance"})
    assert rag.embedder.calls == calls + 1  # type: ignore[attr-defined]  # the chunks only; the tag is known


def test_vectors_round_trip_and_values_keep_their_kind(rag: Rag) -> None:
    import numpy as np

    ingest(rag, "a.txt", "Report of the year.", {"year": 2024, "label": "2024", "draft": True})
    entries = {(k, v): vec for k, v, vec in table(rag).visible(rag.embedder.name, Identity())}
    assert set(entries) == {("year", "2024"), ("label", '"2024"'), ("draft", "true")}
    expected = rag.embedder.embed_documents(["2024"])[0]
    got = entries[("year", "2024")]
    assert got.dtype == np.float32 and np.allclose(got, expected)


def test_a_tag_only_in_another_tenants_documents_is_never_injected(rag: Rag) -> None:
    ingest(rag, "acme.txt", "Budget of the merger project.", {"project": "merger"}, tenant="acme")
    ingest(rag, "secret.txt", "Budget of the merger project.", {"project": "merger"}, acl=["board"])
    ingest(rag, "public.txt", "Budget of the canteen.", {"project": "canteen"})
    tags = table(rag)
    assert {v for _, v, _ in tags.visible(rag.embedder.name, Identity())} == {'"canteen"'}
    found: Any = rag.search("merger project budget", top_k=5)
    assert "merger" not in found.extensions["tag_filter"].values()
    assert {r.document_id for r in found} == {"public.txt"}
    acme: Any = rag.search("merger project budget", top_k=5, identity=Identity(tenant="acme"))
    assert acme.extensions["tag_filter"] == {"project": "merger"}
    assert {r.document_id for r in acme} == {"acme.txt"}
    board = Identity(groups=("board",))
    assert {v for _, v, _ in tags.visible(rag.embedder.name, board)} == {'"merger"', '"canteen"'}
    # ACL changes and removals apply at once: visibility joins the registry
    rag.update_acl("secret.txt", groups=["finance"])
    assert {v for _, v, _ in tags.visible(rag.embedder.name, board)} == {'"canteen"'}
    rag.update_acl("secret.txt", groups=["board"])
    rag.remove("secret.txt")
    assert {v for _, v, _ in tags.visible(rag.embedder.name, board)} == {'"canteen"'}
    store = rag.store
    assert isinstance(store, PostgresStore)
    with store._conn() as conn:
        rows = conn.execute("SELECT document_id FROM tag_documents ORDER BY 1").fetchall()
    assert rows == [("acme.txt",), ("public.txt",)]


def test_an_existing_version_1_store_gains_the_tag_tables(pg_dsn: str) -> None:
    store = PostgresStore(pg_dsn)
    with store._conn() as conn:
        # what versions 2, 3 and 4 added
        conn.execute("DROP TABLE tag_vectors, tag_documents, staging_leases, rag_collections, rag_aliases")
        conn.execute("DELETE FROM rag_schema_version WHERE version >= 2")
    store.close()
    again = PostgresStore(pg_dsn)
    try:
        tags = again.tag_table()
        assert tags.embedded("m") == set()
        tags.add_vectors("m", [("k", '"v"', HashingEmbedder().embed_query("v"))])
        assert tags.embedded("m") == {("k", '"v"')}
        again.wipe()
        assert tags.embedded("m") == set()
    finally:
        again.close()
