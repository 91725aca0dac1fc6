import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragwright.retrieve.fusion import Scale, convex, rrf, weighted_score


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


# -- convex fusion (the default) ---------------------------------------------------------------------
def test_convex_reads_each_arm_on_its_scale() -> None:
    rankings = {"dense": [("a", 0.8), ("b", 0.6)], "bm25": [("b", 12.0), ("a", 3.0)]}
    fused = convex(rankings, weights={"dense": 0.7, "bm25": 0.3}, scales={"dense": "raw", "bm25": "max"})
    scores = {f.chunk_id: f.score for f in fused}
    assert scores["a"] == pytest.approx(0.7 * 0.8 + 0.3 * 3.0 / 12.0)  # cosine as is, BM25 / the best
    assert scores["b"] == pytest.approx(0.7 * 0.6 + 0.3 * 1.0)
    assert [f.chunk_id for f in fused] == ["b", "a"]
    assert fused[0].arms["bm25"].rank == 1 and fused[0].arms["dense"].rank == 2


def test_convex_missing_scores_floor_completion_and_complete_arms() -> None:
    rankings = {"dense": [("a", 0.9), ("b", 0.5)], "bm25": [("c", 8.0), ("b", 4.0)]}
    weights = {"dense": 0.7, "bm25": 0.3}
    scales: dict[str, Scale] = {"dense": "raw", "bm25": "max"}
    plain = {f.chunk_id: f.score for f in convex(rankings, weights=weights, scales=scales)}
    assert plain["c"] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)  # not in dense: dense's lowest returned score
    assert plain["a"] == pytest.approx(0.7 * 0.9 + 0.3 * 0.5)  # not in bm25: bm25's lowest (4/8)
    exact = convex(rankings, weights=weights, scales=scales, completions={"dense": {"c": 0.2}})
    assert {f.chunk_id: f.score for f in exact}["c"] == pytest.approx(0.7 * 0.2 + 0.3 * 1.0)
    assert "dense" not in next(f for f in exact if f.chunk_id == "c").arms  # a completion is not evidence
    done = convex(rankings, weights=weights, scales=scales, complete=["bm25"])
    assert {f.chunk_id: f.score for f in done}["a"] == pytest.approx(0.7 * 0.9)  # nothing else matched: 0


def test_convex_keeps_a_decisive_keyword_match_on_top() -> None:
    # 40 near-duplicates the dense arm cannot tell apart; one holds the rare code the query names.
    dense = [(f"r{i}", 0.80 - 0.001 * i) for i in range(40)]
    bm25 = [("r31", 9.0)] + [(f"r{i}", 1.0) for i in range(40) if i != 31]
    fused = convex({"dense": dense, "bm25": bm25}, weights={"dense": 0.7, "bm25": 0.3}, scales={"dense": "raw"})
    assert fused[0].chunk_id == "r31"
    assert rrf({"dense": dense, "bm25": bm25})[0].chunk_id != "r31"  # rank fusion buries it


def test_convex_empty_arm_contributes_nothing() -> None:
    fused = convex({"dense": [("a", 0.5)], "bm25": []}, weights={"dense": 0.7, "bm25": 0.3})
    assert [(f.chunk_id, f.score) for f in fused] == [("a", pytest.approx(0.7 * 1.0))]  # max scale: 0.5 / 0.5


@given(rankings, rankings)
def test_convex_is_deterministic_and_keyed_by_id(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    fused = convex({"dense": a, "bm25": b}, weights={"dense": 0.7, "bm25": 0.3})
    ids = [f.chunk_id for f in fused]
    assert sorted(ids) == sorted({cid for cid, _ in a + b})
    assert fused == convex({"bm25": b, "dense": a}, weights={"dense": 0.7, "bm25": 0.3})
