"""rerank_min_score: the reranker's threshold makes "nothing relevant" a possible outcome."""

from collections.abc import Sequence

from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder


class KeywordReranker:
    name = "test/keyword"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [1.0 if "refund" in p.lower() else -1.0 for p in passages]


def test_results_below_the_rerank_threshold_are_dropped() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder(), reranker=KeywordReranker())
    rag.ingest(BytesSource({"a.md": b"# Refunds\n\nRefund within thirty days.", "b.md": b"# Dogs\n\nThe dog naps."}))
    everything = rag.search("policy", top_k=5)
    assert {r.document_id for r in everything} == {"a.md", "b.md"}
    kept = rag.search("policy", top_k=5, rerank_min_score=0.0)
    assert [r.document_id for r in kept] == ["a.md"] and kept[0].arms["rerank"].score == 1.0
    assert rag.search("policy", top_k=5, rerank_min_score=2.0) == []
