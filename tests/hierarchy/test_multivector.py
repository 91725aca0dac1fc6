"""Multi-vector: a parent found through its chunks, its summary and hypothetical questions resolves to
the parent (a parent chunk when the Rag builds parents, else the document)."""

from pathlib import Path

from ragwright.hierarchy import HierarchyOptions
from ragwright.options import ParentOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import ACME, BREAD, ROCKETS, WHALES


def test_document_level_parents_are_returned_whole(rag: Rag) -> None:
    assert rag.hierarchy is not None
    found = rag.hierarchy.search("humpback whales migrate", identity=ACME, mode="multi_vector", top_k=3)
    top = found.results[0]
    assert top.document_id == "whales.md" and top.chunk.id.startswith("d-")
    assert top.chunk.metadata["document_parent"] is True
    children = {c.id for c in rag.store.document_chunks("whales.md")}
    assert set(top.chunk.metadata["children"]) == children  # type: ignore[arg-type]
    assert "blowholes" in top.chunk.text and "songs" in top.chunk.text  # the whole short document
    assert {"chunk", "summary"} <= set(top.arms)


def test_long_documents_resolve_to_their_matched_chunks(tmp_path: Path) -> None:
    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        hierarchy=HierarchyOptions(document_chars=200),
    )
    rag.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS}))
    assert rag.hierarchy is not None
    top = rag.hierarchy.search("humpback whales migrate breed", mode="multi_vector").results[0]
    assert top.document_id == "whales.md" and len(top.chunk.text) <= 200 + 120
    assert "migrate" in top.chunk.text


def test_parent_chunks_gather_their_childrens_vectors(tmp_path: Path) -> None:
    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        parents=ParentOptions(chunk_size=200, overlap=0),
        hierarchy=HierarchyOptions(),
    )
    rag.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS, "bread.md": BREAD}))
    assert rag.hierarchy is not None
    rows = rag.hierarchy.index.tables.vector_rows()
    assert rows and {r.kind for r in rows} == {"summary"} and all(r.parent_id.startswith("p-") for r in rows)
    found = rag.hierarchy.search("first liquid fuel rocket Goddard", mode="multi_vector", top_k=3)
    top = found.results[0]
    assert top.chunk.id.startswith("p-") and top.chunk.metadata.get("parent") is True
    assert "Goddard" in top.chunk.text
    assert len({r.chunk_id for r in found.results}) == len(found.results)  # one hit per parent


def test_a_hypothetical_question_finds_its_parent(tmp_path: Path) -> None:
    def questions(messages: list) -> str:  # type: ignore[type-arg]
        text = messages[-1].content
        if "Goddard" in text:
            return "Who launched the earliest liquid-propellant vehicle?"
        return "What is this about?"

    chat = ScriptedChat(questions)
    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        llm=chat,
        parents=ParentOptions(chunk_size=200, overlap=0),
        hierarchy=HierarchyOptions(summary="extractive", questions=1),
    )
    rag.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS, "bread.md": BREAD}))
    assert rag.hierarchy is not None
    kinds = {r.kind for r in rag.hierarchy.index.tables.vector_rows()}
    assert kinds == {"summary", "question"}
    found = rag.hierarchy.search("earliest liquid-propellant vehicle launched", mode="multi_vector", top_k=2)
    top = found.results[0]
    assert "question" in top.arms and top.chunk.id.startswith("p-") and "Goddard" in top.chunk.text


def test_questions_are_opt_in(rag: Rag) -> None:
    assert rag.hierarchy is not None
    assert all(r.kind != "question" for r in rag.hierarchy.index.tables.vector_rows())
