"""The hierarchy follows a blue/green reindex (SQLite and PostgreSQL): summaries and tree point at the
chunks the new store serves."""

from ragwright.hierarchy import HierarchyOptions
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.testing.doubles import HashingEmbedder
from tests.graph.backends import open_following

from .conftest import ACME, BOARD, SECRET_WORDS


def test_summaries_follow_a_reindex_with_a_new_chunker(rag: Rag) -> None:
    before = {c.id for c in rag.store.document_chunks("whales.md")}
    report = rag.reindex(chunking=ChunkingOptions(max_tokens=16, min_tokens=1))
    assert report.switched, report.reason
    assert {c.id for c in rag.store.document_chunks("whales.md")} != before  # new chunk ids
    hierarchy = rag.hierarchy
    assert hierarchy is not None and hierarchy.index.store is rag.store
    docs = hierarchy.index.tables.documents()
    assert set(docs) == {"whales.md", "rockets.md", "bread.md", "secret.md"}
    for doc, (_tenant, _acl, cited) in docs.items():  # every summary cites chunks the new store serves
        assert cited and set(cited) <= {c.id for c in rag.store.document_chunks(doc)}, doc
    found = hierarchy.search("How far do humpback whales migrate?", identity=ACME)
    assert found.results and found.results[0].document_id == "whales.md"
    shown = " ".join(r.chunk.text for r in hierarchy.search("Zorblax merger", identity=ACME, mode="tree").results)
    assert not any(word in shown for word in SECRET_WORDS)  # still only what the caller may see
    assert any(r.document_id == "secret.md" for r in hierarchy.search("Zorblax merger", identity=BOARD).results)


def _later(location: str) -> Rag:
    """The same store opened by another process (on PostgreSQL: re-reading the alias at every query)."""
    return Rag(open_following(location), HashingEmbedder(max_tokens=64), hierarchy=HierarchyOptions(branching=2))


def test_another_process_follows_the_reindex_to_the_new_tree(location: str, rag: Rag) -> None:
    """A process that searched before another's reindex serves the new collection's tree afterwards, never
    its cached matrices of the old one (on PostgreSQL each collection's tables count their versions apart:
    the same count there once read the old collection's tree, whose chunks are gone, and the tree arm
    fell silent)."""
    other = _later(location)
    assert other.hierarchy is not None
    question = "How far do humpback whales migrate?"
    before = other.hierarchy.search(question, identity=ACME, mode="tree").results
    assert before and "tree" in before[0].arms
    report = rag.reindex(chunking=ChunkingOptions(max_tokens=16, min_tokens=1))
    assert report.switched, report.reason
    assert other.store.document_chunks("whales.md") == rag.store.document_chunks("whales.md")  # it follows
    served = {c.id for c in rag.store.document_chunks("whales.md")}
    found = other.hierarchy.search(question, identity=ACME, mode="tree").results
    assert found and all(r.chunk.id in served for r in found if r.document_id == "whales.md")
    assert "tree" in found[0].arms  # the tree over the new chunks, not the old collection's cached one


def test_a_reindex_by_a_process_without_the_hierarchy_is_caught_up(location: str, rag: Rag) -> None:
    """Another process reindexes without the hierarchy (on PostgreSQL: into a collection without its tables,
    which this process then reads; on SQLite: under summaries citing the old chunks); this process's
    hierarchy catches up at its next search: summaries of the new chunks, the tree over them."""
    mine = _later(location)
    assert mine.hierarchy is not None
    question = "How far do humpback whales migrate?"
    assert "tree" in mine.hierarchy.search(question, identity=ACME, mode="tree").results[0].arms
    plain = Rag(open_following(location), HashingEmbedder(max_tokens=64))
    report = plain.reindex(chunking=ChunkingOptions(max_tokens=16, min_tokens=1))
    assert report.switched, report.reason
    served = {
        c.id for doc in ("whales.md", "rockets.md", "bread.md", "secret.md") for c in plain.store.document_chunks(doc)
    }
    found = mine.hierarchy.search(question, identity=ACME, mode="tree").results
    assert found and found[0].document_id == "whales.md" and "tree" in found[0].arms
    assert {r.chunk.id for r in found} <= served
    docs = mine.hierarchy.index.tables.documents()
    assert set(docs) == {"whales.md", "rockets.md", "bread.md", "secret.md"}
    assert all(set(ids) <= served for _t, _a, ids in docs.values())  # every summary over the new chunks
    shown = " ".join(r.chunk.text for r in mine.hierarchy.search("Zorblax merger", identity=ACME, mode="tree").results)
    assert not any(word in shown for word in SECRET_WORDS)
