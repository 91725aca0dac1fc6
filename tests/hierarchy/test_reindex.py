"""The hierarchy follows a blue/green reindex (SQLite and PostgreSQL): summaries and tree point at the
chunks the new store serves."""

from ragwright.options import ChunkingOptions
from ragwright.rag import Rag

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
