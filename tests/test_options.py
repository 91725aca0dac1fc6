import math

import pytest

from ragwright.errors import ConfigError
from ragwright.options import NOT_YET_ACTIVE, ChunkingOptions, IngestOptions, RagOptions, RetrievalOptions


def test_seed_defaults() -> None:
    o = RetrievalOptions()
    assert (o.top_k, o.min_score, o.redundancy_threshold, o.mmr_lambda, o.crag_score_threshold) == (
        5,
        0.0,
        0.95,
        0.5,
        0.5,
    )
    assert o.use_hyde and o.use_multi_query and o.use_parent_document and o.use_reranking
    assert not o.use_hybrid_search and not o.use_mmr and not o.use_crag and not o.use_adaptive_retrieval
    assert o.crag_fallback_mode == "replace"
    assert o.effective_candidate_count == 15
    assert RetrievalOptions(top_k=4, candidate_count=20).effective_candidate_count == 20
    assert ChunkingOptions().max_tokens == 400
    assert IngestOptions().batch_size == 64


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("top_k", 0),
        ("top_k", True),
        ("top_k", 2.5),
        ("min_score", -0.1),
        ("min_score", math.nan),
        ("redundancy_threshold", 0.0),
        ("redundancy_threshold", 1.5),
        ("mmr_lambda", 1.1),
        ("candidate_count", 2),
        ("mmr_candidate_count", 1),
        ("crag_score_threshold", 2),
        ("crag_fallback_mode", "merge"),
        ("max_context_tokens", 0),
        ("use_hybrid_search", "yes"),
        ("metadata_filter", {"bad key": 1}),
    ],
)
def test_invalid_values_name_field_value_and_range(field: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        RetrievalOptions(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field
    assert field in str(info.value) and repr(value) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_option_suggests_the_right_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'top_k'"):
        RetrievalOptions.from_dict({"topk": 3})
    with pytest.raises(ConfigError, match="unknown option"):
        RetrievalOptions().merged(nonsense=1)


def test_merged_revalidates() -> None:
    assert RetrievalOptions().merged(top_k=9).top_k == 9
    with pytest.raises(ConfigError):
        RetrievalOptions().merged(top_k=-1)


def test_rag_options_forward_retrieval_fields() -> None:
    r = RagOptions(top_k=7, min_score=0.2, metadata_filter={"a": 1}).to_retrieval_options()
    assert (r.top_k, r.min_score) == (7, 0.2)
    with pytest.raises(ConfigError, match="top_k"):
        RagOptions(top_k=0)
    with pytest.raises(ConfigError, match="temperature"):
        RagOptions(temperature=5.0)
    with pytest.raises(ConfigError, match="answer_mode"):
        RagOptions(answer_mode="poetry")  # type: ignore[arg-type]


def test_rag_options_compose_their_retrieval_part() -> None:
    """The shared names live in one RetrievalOptions part: set flat or as the part, read flat, merged."""
    part = RetrievalOptions(top_k=3, use_hybrid_search=True)
    a = RagOptions(retrieval=part, verify_answer=True)
    assert isinstance(a.retrieval, RetrievalOptions) and a.to_retrieval_options() is a.retrieval
    assert (a.top_k, a.use_hybrid_search, a.verify_answer) == (3, True, True)
    assert a == RagOptions(top_k=3, use_hybrid_search=True, verify_answer=True)
    b = a.merged(top_k=4)  # a flat name goes to the part, the rest is kept
    assert (b.top_k, b.retrieval.top_k, b.use_hybrid_search, b.verify_answer) == (4, 4, True, True)
    assert RagOptions(retrieval=part, top_k=8).top_k == 8  # a flat keyword wins over the part's value
    assert "retrieval" not in RagOptions.flat_names() and "top_k" in RagOptions.flat_names()
    assert set(RagOptions.retrieval_fields()) <= set(RetrievalOptions.flat_names())
    # what an ask cannot change is refused, never ignored silently
    with pytest.raises(ConfigError, match=r"use_mmr.*an ask cannot change"):
        RagOptions(retrieval=RetrievalOptions(use_mmr=True))
    with pytest.raises(ConfigError, match="retrieval"):
        RagOptions(retrieval={"top_k": 3})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="did you mean 'top_k'"):
        RagOptions(topk=3)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="top_k"):
        a.merged(top_k=0)


def test_inactive_options_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RetrievalOptions().inactive_requests() == []
    assert "use_crag" not in NOT_YET_ACTIVE  # corrective RAG is active (issue 11)
    monkeypatch.setattr("ragwright.retrieve.options.NOT_YET_ACTIVE", frozenset({"use_crag"}))  # its home
    assert RetrievalOptions(use_hybrid_search=True, use_mmr=True, use_crag=True).inactive_requests() == ["use_crag"]


def test_chunking_options_validated() -> None:
    with pytest.raises(ConfigError, match="min_tokens"):
        ChunkingOptions(max_tokens=100, min_tokens=100)


def test_arms_and_ensemble() -> None:
    from ragwright.options import EnsembleOptions

    assert RetrievalOptions().arms == ("dense",)
    # the sparse arm is requested with hybrid search; the pipeline runs it only where an encoder is configured
    assert RetrievalOptions(use_hybrid_search=True).arms == ("dense", "bm25", "sparse")
    assert RetrievalOptions(use_hybrid_search=True, use_sparse_search=False).arms == ("dense", "bm25")
    assert RetrievalOptions(use_hybrid_search=True, use_keyword_search=False).arms == ("dense", "sparse")
    assert RetrievalOptions(use_sparse_search=True).arms == ("dense",)  # no effect without hybrid (seed 000)
    assert RetrievalOptions(use_dense_search=False, use_keyword_search=True).arms == ("bm25",)
    with pytest.raises(ConfigError, match="no search arm"):
        RetrievalOptions(use_dense_search=False)
    assert RetrievalOptions(top_k=5).arm_candidates == 50
    assert RetrievalOptions(top_k=40, ensemble=EnsembleOptions(candidates=10)).arm_candidates == 40
    with pytest.raises(ConfigError, match="rrf_k"):
        EnsembleOptions(rrf_k=0)
    with pytest.raises(ConfigError, match="weight"):
        EnsembleOptions(dense_weight=0, bm25_weight=0, sparse_weight=0)
    with pytest.raises(ConfigError, match="method"):
        EnsembleOptions(method="borda")  # type: ignore[arg-type]
