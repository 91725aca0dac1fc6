"""The summary tree: levels, nodes resolving to the chunks beneath, scopes, incremental rebuilds."""

import pytest

from ragwright.hierarchy.tree import kmeans, node_cited
from ragwright.rag import Rag
from ragwright.sources import BytesSource

from .conftest import ACME, WHALES


def _nodes(rag: Rag) -> list:  # type: ignore[type-arg]
    assert rag.hierarchy is not None
    rag.hierarchy.index.refresh_trees()
    return rag.hierarchy.index.tables.nodes()


def test_levels_and_nodes_resolve_to_the_chunks_beneath(rag: Rag) -> None:
    nodes = _nodes(rag)
    public = [n for n in nodes if n.acl == ("*",)]
    levels = {n.level for n in public}
    assert levels >= {1, 2}
    by_id = {n.node_id: n for n in nodes}
    chunks = {c.id for d in ("whales.md", "rockets.md", "bread.md") for c in rag.store.document_chunks(d)}
    level1 = [n for n in public if n.level == 1]
    assert sorted(c for n in level1 for c in n.chunk_ids) == sorted(chunks)  # a partition of the leaves
    for n in public:
        assert set(node_cited(n)) <= set(n.chunk_ids)
        if n.level > 1:
            assert n.child_ids and set(n.chunk_ids) == {c for k in n.child_ids for c in by_id[k].chunk_ids}
    top = max(n.level for n in public)
    assert len([n for n in public if n.level == top]) <= 2


def test_one_tree_per_access_scope(rag: Rag) -> None:
    nodes = _nodes(rag)
    secret = {c.id for c in rag.store.document_chunks("secret.md")}
    for n in nodes:
        if set(n.chunk_ids) & secret:
            assert n.acl == ("board",) and set(n.chunk_ids) <= secret and n.document_ids == ("secret.md",)


def test_collapsed_tree_search_mixes_levels_and_returns_chunks(rag: Rag) -> None:
    assert rag.hierarchy is not None
    found = rag.hierarchy.search("whales migrate to breed", identity=ACME, mode="tree", top_k=5)
    assert found.nodes and len({n.level for n in found.nodes}) >= 2
    assert found.results[0].document_id == "whales.md"
    for n in found.nodes:
        assert n.summary and set(n.cited) <= set(n.chunk_ids)


def test_a_changed_document_rebuilds_only_the_nodes_that_used_it(rag: Rag) -> None:
    before = [n for n in _nodes(rag) if n.acl == ("*",)]
    old_whales = {c.id for c in rag.store.document_chunks("whales.md")}
    untouched = {n.node_id for n in before if n.level == 1 and not set(n.chunk_ids) & old_whales}
    assert untouched
    changed = WHALES + b"\n\n## Diet\n\nBlue whales eat krill by the tonne."
    rag.ingest(BytesSource({"whales.md": changed}), tenant="acme")
    after = [n for n in _nodes(rag) if n.acl == ("*",)]
    new_whales = {c.id for c in rag.store.document_chunks("whales.md")}
    assert new_whales - old_whales
    every = {c for n in after for c in n.chunk_ids}
    assert not (old_whales - new_whales) & every  # no node keeps a chunk that is gone
    assert new_whales <= every
    assert untouched <= {n.node_id for n in after if n.level == 1}  # the other documents' nodes were kept
    assert rag.hierarchy is not None
    (row,) = rag.hierarchy.index.tables.document_rows(["whales.md"])
    assert set(row.chunk_ids) == new_whales


def test_a_deleted_document_leaves_summaries_and_tree(rag: Rag) -> None:
    whales = {c.id for c in rag.store.document_chunks("whales.md")}
    _nodes(rag)
    rag.remove("whales.md")
    assert rag.hierarchy is not None
    assert "whales.md" not in rag.hierarchy.index.tables.documents()
    nodes = _nodes(rag)
    assert not any(set(n.chunk_ids) & whales for n in nodes)
    assert all("whales.md" not in n.document_ids for n in nodes)
    found = rag.hierarchy.search("whales migrate", identity=ACME, mode="tree")
    assert all(r.document_id != "whales.md" for r in found.results)


def test_kmeans_is_deterministic_and_fills_every_cluster() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    m = rng.normal(size=(40, 8)).astype(np.float32)
    a, b = kmeans(m, 5), kmeans(m, 5)
    assert (a == b).all() and set(a.tolist()) == set(range(5))
    assert kmeans(m[:3], 5).tolist() == [0, 1, 2]


def test_a_failing_tree_build_degrades_to_the_flat_result(
    rag: Rag, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from ragwright.hierarchy.tree import TreeBuilder

    def broken(self: TreeBuilder) -> list[str]:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(TreeBuilder, "refresh", broken)
    assert rag.hierarchy is not None
    found = rag.hierarchy.search("whales migrate", identity=ACME, mode="tree")
    assert found.results and found.results[0].document_id == "whales.md"
    assert "hierarchy_tree_failed" in caplog.text
