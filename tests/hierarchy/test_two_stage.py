"""Two-stage search: documents by summary first, then chunks restricted to the best documents."""

import dataclasses

from ragwright.rag import Rag

from .conftest import ACME


def test_stage_one_ranks_documents_by_summary(rag: Rag) -> None:
    assert rag.hierarchy is not None
    docs = rag.hierarchy.searcher.documents("rocket engines and orbits", ACME, 2)
    assert docs[0].document_id == "rockets.md" and docs[0].rank == 1
    assert {"summary", "centroid", "bm25"} & set(docs[0].arms)
    assert docs[0].summary.startswith("Rockets")


def test_two_stage_alone_returns_only_chunks_of_the_best_documents(rag: Rag) -> None:
    h = rag.hierarchy
    assert h is not None
    h.index.options = dataclasses.replace(h.options, combine="two_stage", documents=1)
    found = h.search("rocket engines propellant thrust", identity=ACME, top_k=10)
    assert [d.document_id for d in found.documents] == ["rockets.md"]
    assert found.results and {r.document_id for r in found.results} == {"rockets.md"}
    assert all({"dense", "bm25", "document"} & set(r.arms) for r in found.results)
    assert "documents (1)" in found.path


def test_rrf_combines_with_the_flat_result(rag: Rag) -> None:
    h = rag.hierarchy
    assert h is not None
    found = h.search("rocket engines propellant thrust", identity=ACME, top_k=6)
    assert found.results[0].document_id == "rockets.md"
    assert {"flat", "two_stage"} & set(found.results[0].arms)
    assert "rrf" in found.path


def test_doc_prior_reranks_the_flat_result(rag: Rag) -> None:
    h = rag.hierarchy
    assert h is not None
    h.index.options = dataclasses.replace(h.options, combine="doc_prior", documents=1)
    found = h.search("whales sing songs", identity=ACME, top_k=3)
    assert found.results[0].document_id == "whales.md"
    assert "document" in found.results[0].arms


def test_ask_answers_from_the_two_stage_evidence_with_citations(rag: Rag) -> None:
    assert rag.hierarchy is not None
    response = rag.hierarchy.ask("How far do humpback whales migrate?", identity=ACME)
    assert not response.declined
    assert response.citations and all(c.document_id == "whales.md" for c in response.citations)
    assert response.retrieval_path and "documents" in response.retrieval_path
