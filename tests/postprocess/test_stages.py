import logging

import numpy as np
import pytest

from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.postprocess.budget import apply_budget
from ragwright.postprocess.diversity import mmr, redundancy_filter
from ragwright.postprocess.reorder import lost_in_the_middle
from ragwright.postprocess.rerank import rerank


def unit(*v: float) -> np.ndarray:  # type: ignore[type-arg]
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def results(*texts: str) -> list[SearchResult]:
    return [SearchResult(Chunk.create("d", t, i), 1.0 - i / 10) for i, t in enumerate(texts)]


def test_redundancy_filter_drops_near_duplicates_in_rank_order() -> None:
    vectors = np.stack([unit(1, 0), unit(1, 0.01), unit(0, 1), unit(0.02, 1)])
    assert redundancy_filter(vectors, 0.95) == [0, 2]
    assert redundancy_filter(vectors, 0.99999) == [0, 1, 2, 3]


def test_mmr_maths() -> None:
    q = unit(1, 0, 0)
    vectors = np.stack([unit(1, 0.1, 0), unit(1, 0.12, 0), unit(0.7, 0, 0.7)])
    assert mmr(q, vectors, 2, lambda_=1.0) == [0, 1]  # pure relevance
    assert mmr(q, vectors, 2, lambda_=0.5) == [0, 2]  # the near-duplicate loses to a different result
    assert mmr(q, vectors, 5, lambda_=0.5) == [0, 2, 1]
    assert mmr(q, vectors[:0], 3) == []


def test_lost_in_the_middle_puts_best_at_the_ends() -> None:
    assert lost_in_the_middle([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert lost_in_the_middle([]) == []


def test_budget_drops_whole_chunks_lowest_ranked_first(caplog: pytest.LogCaptureFixture) -> None:
    items = ["alpha " * 50, "beta " * 50, "gamma " * 50]  # 50 tokens each in cl100k
    with caplog.at_level(logging.INFO, logger="ragwright"):
        kept = apply_budget(items, lambda t: t, 120)
    assert kept == items[:2]  # never truncated
    assert any("budget_dropped" in r.message and "1 of 3" in r.message for r in caplog.records)
    assert apply_budget(items, lambda t: t, None) == items
    assert apply_budget(items, lambda t: t, 10) == []


class Fixed:
    name = "fixed"

    def __init__(self, scores: object) -> None:
        self.scores = scores

    def score(self, query: str, passages: list[str]) -> list[float]:
        if isinstance(self.scores, Exception):
            raise self.scores
        return self.scores  # type: ignore[return-value]


def test_rerank_reorders_and_keeps_evidence() -> None:
    rs = results("a", "b", "c")
    out = rerank(Fixed([0.1, 0.9, 0.5]), "q", rs)
    assert [r.chunk.text for r in out] == ["b", "c", "a"]
    assert out[0].score == 0.9 and out[0].arms["rerank"].rank == 1
    assert [r.chunk.text for r in rerank(Fixed([0.1, 0.9, 0.5]), "q", rs, min_score=0.4)] == ["b", "c"]


@pytest.mark.parametrize("bad", [RuntimeError("model exploded"), [0.1], ["x", 1, 2], [float("nan"), 1.0, 2.0]])
def test_rerank_failure_keeps_the_original_order(bad: object, caplog: pytest.LogCaptureFixture) -> None:
    rs = results("a", "b", "c")
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        assert rerank(Fixed(bad), "q", rs) == rs
    assert any("rerank_failed" in r.message for r in caplog.records)


def test_neighbour_expansion_merges_adjacent_hits_and_respects_acl() -> None:
    from ragwright.model.identity import Identity
    from ragwright.rag import Rag
    from ragwright.sources import BytesSource
    from ragwright.stores.memory import MemoryStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(MemoryStore(), HashingEmbedder(max_tokens=12))
    text = "\n\n".join(f"Section {i} mentions the keyword item{i} once and nothing else." for i in range(12))
    rag.ingest(BytesSource({"doc.md": text.encode()}))
    one = rag.search("item5", top_k=1, use_hybrid_search=False, use_keyword_search=True, use_dense_search=False)
    grown = rag.search("item5", top_k=1, use_dense_search=False, use_keyword_search=True, neighbour_window=1)
    assert "item5" in one[0].chunk.text and "item4" not in one[0].chunk.text
    assert "item4" in grown[0].chunk.text and "item6" in grown[0].chunk.text
    assert grown[0].chunk.text.count("item5") == 1 and len(grown[0].chunk.metadata["passage_chunks"]) == 3
    both = rag.search("item5 item6", top_k=2, use_dense_search=False, use_keyword_search=True, neighbour_window=1)
    assert len(both) == 1  # adjacent hits became one passage
    rag.update_acl("doc.md", groups=["x"])
    assert rag.search("item5", identity=Identity(), neighbour_window=2) == []
