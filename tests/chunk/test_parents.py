import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragwright.chunk.parents import attach_parents
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.options import ParentOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def children(texts: list[str]) -> list[Chunk]:
    return [Chunk.create("doc", t, i) for i, t in enumerate(texts)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=300).filter(str.strip), min_size=1, max_size=30))
def test_every_child_has_a_parent_that_contains_its_start(texts: list[str]) -> None:
    linked, parents = attach_parents("doc", children(texts), chunk_size=200, overlap=20)
    by_id = {p.id: p for p in parents}
    assert len(linked) == len(texts) and all(c.parent_id in by_id for c in linked)
    for c in linked:
        assert c.text in by_id[c.parent_id].text  # type: ignore[index]  # the whole child lies in its parent
    for p in parents:
        assert len(p.text) <= 200 or len(p.metadata["children"]) <= 2  # only an oversized child breaks the size
    assert [c.id for c in linked] == [c.id for c in children(texts)]


def test_options_validated() -> None:
    assert (ParentOptions().chunk_size, ParentOptions().overlap) == (2048, 100)
    with pytest.raises(ConfigError, match="overlap"):
        ParentOptions(chunk_size=100, overlap=100)


@pytest.mark.parametrize("make_store", [MemoryStore, lambda: SqliteStore(":memory:")])
def test_children_are_searched_and_parents_returned(make_store: object) -> None:
    rag = Rag(make_store(), HashingEmbedder(max_tokens=20), parents=ParentOptions(chunk_size=400, overlap=40))  # type: ignore[operator]
    text = "\n\n".join(f"Paragraph {i} talks about topic{i} in some detail here." for i in range(30))
    rag.ingest(BytesSource({"doc.md": text.encode()}), acl=["staff"])
    staff = Identity(groups=("staff",))
    hits = rag.search("topic7 detail", top_k=3, identity=staff, use_hybrid_search=False)
    assert hits and all(h.chunk.id.startswith("p-") for h in hits)
    assert "topic7" in hits[0].chunk.text and len(hits[0].chunk.text) > 100
    assert hits[0].chunk.metadata["matched_children"]
    plain = rag.search("topic7 detail", top_k=3, identity=staff, use_hybrid_search=False, use_parent_document=False)
    assert all(not h.chunk.id.startswith("p-") for h in plain)
    assert rag.search("topic7 detail", identity=Identity()) == []  # parents carry the document's ACL
    rag.update_acl("doc.md", groups=None)
    assert rag.search("topic7 detail", identity=Identity())[0].chunk.id.startswith("p-")
    rag.remove("doc.md")
    assert rag.store.get_parents([hits[0].chunk.id], staff) == []


def test_missing_parent_falls_back_to_children(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    rag = Rag(store, HashingEmbedder(max_tokens=20), parents=ParentOptions(chunk_size=300, overlap=30))
    rag.ingest(BytesSource({"doc.md": "\n\n".join(f"alpha beta {i} gamma." for i in range(20)).encode()}))
    store._parents.clear()  # e.g. a store restored without its parents
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        hits = rag.search("alpha beta gamma", top_k=2)
    assert hits and all(not h.chunk.id.startswith("p-") for h in hits)
    assert any("parent_lookup_failed" in r.message for r in caplog.records)


def test_auto_merge_swaps_only_well_covered_parents() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder(max_tokens=20), parents=ParentOptions(chunk_size=300, overlap=0))
    body = "\n\n".join(f"Note {i} covers subject{i} briefly in this document today." for i in range(12))
    rag.ingest(BytesSource({"doc.md": body.encode()}))
    children = rag.store.document_chunks("doc.md")
    first_parent = children[0].parent_id
    siblings = [c for c in children if c.parent_id == first_parent]
    assert len(siblings) >= 2
    one = rag.search(
        "subject0",
        top_k=1,
        use_dense_search=False,
        use_keyword_search=True,
        parent_mode="auto_merge",
        auto_merge_ratio=1.0,
    )
    assert one[0].chunk.id == children[0].id  # one hit of several siblings: the child stays
    query = " ".join(f"subject{i}" for i in range(len(siblings)))
    many = rag.search(
        query,
        top_k=len(siblings),
        use_dense_search=False,
        use_keyword_search=True,
        parent_mode="auto_merge",
        auto_merge_ratio=0.5,
    )
    assert any(r.chunk.id == first_parent for r in many)  # most siblings hit: merged into the parent
    swapped = rag.search("subject0", top_k=1, use_dense_search=False, use_keyword_search=True)
    assert swapped[0].chunk.id == first_parent  # the default mode always swaps


def test_results_without_parents_are_kept_beside_swapped_ones() -> None:
    store = MemoryStore()
    Rag(store, HashingEmbedder()).ingest(BytesSource({"plain.md": b"zebra facts without parents"}))
    rag = Rag(store, HashingEmbedder(), parents=ParentOptions(chunk_size=300, overlap=0))
    rag.ingest(BytesSource({"withparents.md": b"zebra facts with parents"}))
    hits = rag.search("zebra facts", top_k=5, use_dense_search=False, use_keyword_search=True)
    kinds = {h.document_id: h.chunk.id.startswith("p-") for h in hits}
    assert kinds == {"plain.md": False, "withparents.md": True}
