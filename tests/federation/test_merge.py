"""Weighted RRF over the sources' ranks, keyed by (source, chunk id)."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragwright.federation import FEDERATION, FUSION, merge
from ragwright.model.chunk import Chunk
from ragwright.model.results import ArmHit, SearchResult


def result(cid: str, score: float = 0.5) -> SearchResult:
    chunk = Chunk(id=cid, document_id=f"doc-{cid}", text=f"text {cid}", position=0)
    return SearchResult(chunk, score, arms={"dense": ArmHit(1, score)}, fusion="convex")


def test_scores_are_weighted_reciprocal_ranks() -> None:
    merged = merge(
        {"a": [result("x", 0.9), result("y", 0.8)], "b": [result("z", 12.0)]},
        weights={"a": 1.0, "b": 0.5},
        k=60,
    )
    by = {(r.source, r.chunk_id): r.score for r in merged}
    assert by[("a", "x")] == pytest.approx(1.0 / 61)
    assert by[("a", "y")] == pytest.approx(1.0 / 62)
    assert by[("b", "z")] == pytest.approx(0.5 / 61)
    assert [(r.source, r.chunk_id) for r in merged] == [("a", "x"), ("a", "y"), ("b", "z")]


def test_trust_weight_reorders_sources() -> None:
    rankings = {"a": [result("x"), result("y")], "b": [result("u"), result("v")]}
    heavy_b = merge(rankings, weights={"a": 1.0, "b": 2.0})
    assert [r.source for r in heavy_b] == ["b", "b", "a", "a"]  # 2/61, 2/62 > 1/61, 1/62
    even = merge(rankings)
    assert [(r.source, r.chunk_id) for r in even] == [("a", "x"), ("b", "u"), ("a", "y"), ("b", "v")]


def test_colliding_chunk_ids_stay_separate_results() -> None:
    merged = merge({"a": [result("same", 0.9)], "b": [result("same", 0.1)]}, k=10)
    assert [(r.source, r.chunk_id) for r in merged] == [("a", "same"), ("b", "same")]
    assert merged[0].score == merged[1].score == pytest.approx(1 / 11)  # a tie breaks by source name


def test_evidence_kept_and_source_scores_never_compared() -> None:
    # b's raw score (a BM25 value of 40) is far above a's cosine, but only ranks count
    merged = merge({"a": [result("x", 0.3)], "b": [result("y", 40.0)]}, weights={"a": 1.0, "b": 0.9})
    first = merged[0]
    assert (first.source, first.fusion) == ("a", FUSION)
    assert first.arms["dense"] == ArmHit(1, 0.3) and first.arms[FEDERATION] == ArmHit(1, 0.3)
    assert first.to_dict()["source"] == "a" and "source" not in result("q").to_dict()


def test_top_k_and_a_source_listing_a_chunk_twice() -> None:
    merged = merge({"a": [result("x"), result("x"), result("y")], "b": [result("z")]}, top_k=2)
    assert [(r.source, r.chunk_id, r.arms[FEDERATION].rank) for r in merged] == [("a", "x", 1), ("b", "z", 1)]


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.tuples(st.integers(0, 8), st.floats(0.1, 5.0)),
        min_size=1,
    ),
    st.integers(1, 100),
)
def test_merge_is_exact_rrf_and_sorted(spec: dict[str, tuple[int, float]], k: int) -> None:
    rankings = {name: [result(f"{name}{i}") for i in range(n)] for name, (n, _) in spec.items()}
    weights = {name: w for name, (_, w) in spec.items()}
    merged = merge(rankings, weights=weights, k=k)
    assert len(merged) == sum(n for n, _ in spec.values())
    for r in merged:
        assert r.source is not None
        assert r.score == pytest.approx(weights[r.source] / (k + r.arms[FEDERATION].rank))
    assert all(a.score >= b.score for a, b in itertools.pairwise(merged))
