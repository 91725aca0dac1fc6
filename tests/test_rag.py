import asyncio
import logging
from pathlib import Path

import pytest

from ragwright import Identity, MinScoreSpec, Rag, RagOptions, RetrievalOptions
from ragwright.errors import ConfigError
from ragwright.options import EnsembleOptions
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

DOCS = {
    "refunds.md": b"# Refunds\n\nCustomers may request a refund within 30 days of delivery.\n\n"
    b"## Exceptions\n\nGift cards cannot be refunded under any circumstances.",
    "security.md": b"# Security\n\nCustomer data at rest is encrypted with AES-256 keys.",
}


@pytest.fixture
def rag() -> Rag:
    r = Rag(MemoryStore(), HashingEmbedder())
    r.ingest(BytesSource(DOCS), metadata={"department": "support"})
    return r


def test_search_returns_explained_results(rag: Rag) -> None:
    results = rag.search("how do I request a refund within 30 days")
    assert results[0].document_id == "refunds.md"
    top = results[0]
    assert top.arms["dense"].rank == 1 and top.arms["bm25"].rank == 1
    # Convex fusion (the default): 0.7 x the cosine + 0.3 x the keyword score relative to the best (1.0 here).
    assert top.score == pytest.approx(0.7 * top.arms["dense"].score + 0.3)
    assert len(rag.search("refund", top_k=1)) == 1


def test_min_score_and_specification_filter(rag: Rag) -> None:
    assert rag.search("encrypted AES-256", min_score=0.99, use_hybrid_search=False) == []
    results = rag.search("encrypted", RetrievalOptions(filter=MinScoreSpec(0.01)))
    assert results and all(r.score >= 0.01 for r in results)


def test_metadata_filter_typed(rag: Rag) -> None:
    assert rag.search("refund", metadata_filter={"department": "support"})
    assert rag.search("refund", metadata_filter={"department": "legal"}) == []


def test_ask_cites_sources(rag: Rag) -> None:
    response = rag.ask("Can customers request a refund within 30 days of delivery?", extractive_min_similarity=0.3)
    assert not response.declined
    assert "[Source 1]" in response.answer
    assert response.citations[0].document_id == "refunds.md"
    assert response.citations[0].quote in response.sources[0].chunk.text


def test_ask_declines_when_nothing_supports_an_answer(rag: Rag) -> None:
    response = rag.ask("volcano eruption in iceland", extractive_min_similarity=0.5)
    assert response.declined and response.citations == ()
    empty = Rag(MemoryStore(), HashingEmbedder())
    assert empty.ask("anything").declined


def test_security_identity_applies_to_search_and_ask(tmp_path: Path) -> None:
    r = Rag(MemoryStore(), HashingEmbedder(), identity=Identity("acme"))
    r.ingest(BytesSource({"a.md": b"acme quarterly revenue figures"}), tenant="acme", acl=["finance"])
    r.ingest(BytesSource({"b.md": b"globex quarterly revenue figures"}), tenant="globex")
    assert r.search("quarterly revenue") == []  # acme member without the finance group
    fin = Identity("acme", groups=("finance",))
    assert [x.document_id for x in r.search("quarterly revenue", identity=fin)] == ["a.md"]
    glob = Identity("globex")
    assert [x.document_id for x in r.search("quarterly revenue", identity=glob)] == ["b.md"]
    assert all(s.document_id == "a.md" for s in r.ask("quarterly revenue", identity=fin).sources)


def test_async_api_is_the_same_implementation(rag: Rag) -> None:
    async def go() -> tuple[list[str], bool]:
        results = await rag.asearch("gift cards")
        response = await rag.aask("gift cards refunded?")
        return [r.chunk_id for r in results], response.declined

    ids, _ = asyncio.run(go())
    assert ids == [r.chunk_id for r in rag.search("gift cards")]


def test_sync_api_works_inside_a_running_loop(rag: Rag) -> None:
    async def go() -> int:
        return len(rag.search("refund"))

    assert asyncio.run(go()) > 0


def test_invalid_overrides_and_queries_are_refused(rag: Rag) -> None:
    with pytest.raises(ConfigError, match="top_k"):
        rag.search("x", top_k=0)
    with pytest.raises(ConfigError, match="unknown option"):
        rag.search("x", topk=3)
    with pytest.raises(ConfigError, match="query"):
        rag.search("   ")
    with pytest.raises(ConfigError, match="answer_mode"):
        rag.ask("x", RagOptions(), answer_mode="poetry")


def test_inactive_option_is_logged(rag: Rag, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragwright.retrieve.options.NOT_YET_ACTIVE", frozenset({"use_crag"}))  # the mechanism
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        rag.search("refund", use_crag=True)
    assert any("option_not_active" in r.message and "use_crag" in r.message for r in caplog.records)


def test_remove_and_status(rag: Rag) -> None:
    assert rag.status()["documents"] == 2
    assert rag.remove("security.md") == 1
    assert rag.status()["documents"] == 1 and rag.status()["deleted"] == 1
    assert all(r.document_id != "security.md" for r in rag.search("encrypted AES-256"))
    with pytest.raises(ConfigError, match="no document"):
        rag.remove("nope.md")


def test_hybrid_is_the_facade_default_and_explains_fusion(rag: Rag) -> None:
    results = rag.search("gift cards refunded")
    assert results[0].fusion == "convex"
    assert set(results[0].arms) <= {"dense", "bm25"} and "bm25" in results[0].arms
    assert all(r.score <= 1.0 for r in results)  # 0.7 x cosine + 0.3 x relative keyword score
    rrf = rag.search("gift cards refunded", ensemble=EnsembleOptions(method="rrf"))
    assert rrf[0].fusion == "rrf" and all(r.score < 0.05 for r in rrf)  # ordinal, about 1/60 per arm


def test_keyword_only_and_dense_only_modes(rag: Rag) -> None:
    bm25 = rag.search("AES-256", use_dense_search=False, use_keyword_search=True)
    assert [r.document_id for r in bm25] == ["security.md"] and set(bm25[0].arms) == {"bm25"}
    dense = rag.search("AES-256", use_hybrid_search=False)
    assert set(dense[0].arms) == {"dense"} and dense[0].fusion is None


def test_min_score_applies_to_dense_not_bm25(rag: Rag) -> None:
    results = rag.search("AES-256 encrypted", min_score=0.99)
    assert results and all(set(r.arms) == {"bm25"} for r in results)


def test_metadata_filter_inside_the_keyword_arm(rag: Rag) -> None:
    assert rag.search("gift cards", metadata_filter={"department": "legal"}) == []


def test_weighted_fusion_option(rag: Rag) -> None:
    from ragwright.options import EnsembleOptions

    results = rag.search("gift cards", ensemble=EnsembleOptions(method="weighted", bm25_weight=2.0))
    assert results[0].fusion == "weighted" and results[0].document_id == "refunds.md"


def test_postprocessing_chain_through_the_facade() -> None:
    r = Rag(MemoryStore(), HashingEmbedder())
    docs = {f"d{i}.md": f"apples and oranges fruit basket number {i}".encode() for i in range(6)}
    docs["dup.md"] = b"apples and oranges fruit basket number 0"
    r.ingest(BytesSource(docs))
    plain = r.search("apples oranges fruit", top_k=7, use_hybrid_search=False)
    dedup = r.search("apples oranges fruit", top_k=7, use_hybrid_search=False, use_redundancy_filter=True)
    assert len(dedup) == len(plain) - 1  # the duplicate text is gone
    budget = r.search("apples oranges fruit", top_k=7, max_context_tokens=20)
    assert 1 <= len(budget) < 7
    reordered = r.search("apples oranges fruit", top_k=5, use_lost_in_the_middle_reordering=True)
    ranked = r.search("apples oranges fruit", top_k=5)
    assert reordered[0] == ranked[0] and reordered[-1] == ranked[1]
    diverse = r.search("apples oranges fruit", top_k=3, use_mmr=True, mmr_lambda=0.3, use_hybrid_search=False)
    assert len(diverse) == 3


def test_reranker_over_fetches_and_can_be_switched_off() -> None:
    class ByLength:
        name = "by-length"

        def __init__(self) -> None:
            self.seen: list[int] = []

        def score(self, query: str, passages: list[str]) -> list[float]:
            self.seen.append(len(passages))
            return [float(len(p)) for p in passages]

    reranker = ByLength()
    r = Rag(MemoryStore(), HashingEmbedder(), reranker=reranker)
    r.ingest(BytesSource({f"d{i}.md": ("word " * (i + 1)).encode() for i in range(12)}))
    top = r.search("word", top_k=2)
    assert reranker.seen[-1] == 6  # candidate_count defaults to top_k × 3
    assert [len(x.chunk.text) for x in top] == sorted((len(x.chunk.text) for x in top), reverse=True)
    assert "rerank" in top[0].arms
    assert "rerank" not in r.search("word", top_k=2, use_reranking=False)[0].arms
