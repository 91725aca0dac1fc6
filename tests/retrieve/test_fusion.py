import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragwright.retrieve.fusion import rrf, weighted_score


def test_rrf_formula_and_evidence() -> None:
    fused = rrf({"dense": [("a", 0.9), ("b", 0.8)], "bm25": [("b", 12.0), ("c", 3.0)]}, k=60)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["c"] == pytest.approx(1 / 62)
    assert [f.chunk_id for f in fused] == ["b", "a", "c"]
    b = fused[0]
    assert (b.arms["dense"].rank, b.arms["dense"].score) == (2, 0.8)
    assert (b.arms["bm25"].rank, b.arms["bm25"].score) == (1, 12.0)


def test_rrf_weights() -> None:
    rankings = {"dense": [("a", 0.9)], "bm25": [("b", 5.0)]}
    assert rrf(rankings, weights={"dense": 1.0, "bm25": 2.0})[0].chunk_id == "b"
    assert rrf(rankings, weights={"dense": 2.0, "bm25": 1.0})[0].chunk_id == "a"


def test_weighted_score_fusion() -> None:
    rankings = {"dense": [("a", 0.9), ("b", 0.5), ("c", 0.1)], "bm25": [("c", 10.0), ("b", 9.0)]}
    minmax = {f.chunk_id: f.score for f in weighted_score(rankings)}
    assert minmax["b"] == pytest.approx(0.5 + 0.0)  # dense (0.5-0.1)/0.8, bm25 worst of its list
    assert minmax["c"] == pytest.approx(0.0 + 1.0)
    assert minmax["a"] == pytest.approx(1.0 + 0.0)  # absent from bm25 → that arm's floor
    z = weighted_score(rankings, normalization="zscore")
    assert len(z) == 3


rankings = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8).map(
    lambda ids: [(cid, float(len(ids) - i)) for i, cid in enumerate(ids)]
)


@given(rankings, rankings)
def test_rrf_properties(dense: list[tuple[str, float]], bm25: list[tuple[str, float]]) -> None:
    fused = rrf({"dense": dense, "bm25": bm25})
    ids = [f.chunk_id for f in fused]
    assert len(ids) == len(set(ids)) == len({c for c, _ in dense} | {c for c, _ in bm25})
    assert all(fused[i].score >= fused[i + 1].score for i in range(len(fused) - 1))
    assert all(0 < f.score <= 2 / 61 + 1e-12 for f in fused)
    both = {c for c, _ in dense} & {c for c, _ in bm25}
    for f in fused:
        assert set(f.arms) == ({"dense", "bm25"} if f.chunk_id in both else set(f.arms))
