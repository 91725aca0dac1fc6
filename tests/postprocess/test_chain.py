"""The post-retrieval chain as one function over results, options and the call's tools."""

from __future__ import annotations

import logging

import pytest

from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.postprocess.chain import Tools, postprocess
from ragwright.postprocess.options import PostprocessOptions
from ragwright.testing.doubles import HashingEmbedder


def results(*texts: str) -> list[SearchResult]:
    return [SearchResult(Chunk.create("d", t, i), 1.0 - i / 10) for i, t in enumerate(texts)]


class Reverse:
    name = "test/reverse"

    def score(self, query: str, passages: object) -> list[float]:
        return [float(i) for i, _ in enumerate(passages)]  # type: ignore[arg-type]


def test_rerank_then_trim_then_reorder() -> None:
    tools = Tools(HashingEmbedder(), reranker=Reverse())
    ranked = results("a", "b", "c", "d")
    out = postprocess("q", ranked, PostprocessOptions(), top_k=2, identity=Identity(), tools=tools)
    assert [r.chunk.text for r in out] == ["d", "c"]  # reranked over all four, then the best two
    off = postprocess("q", ranked, PostprocessOptions(use_reranking=False), top_k=2, identity=Identity(), tools=tools)
    assert [r.chunk.text for r in off] == ["a", "b"]


def test_redundancy_drops_a_duplicate_before_the_trim() -> None:
    ranked = results("same words here", "same words here", "other text entirely")
    opts = PostprocessOptions(use_redundancy_filter=True)
    out = postprocess("q", ranked, opts, top_k=2, identity=Identity(), tools=Tools(HashingEmbedder()))
    assert [r.chunk.text for r in out] == ["same words here", "other text entirely"]


def test_expansion_without_a_lookup_degrades_with_a_named_event(caplog: pytest.LogCaptureFixture) -> None:
    ranked = results("a", "b")
    with caplog.at_level(logging.WARNING):
        out = postprocess(
            "q",
            ranked,
            PostprocessOptions(neighbour_window=1),
            top_k=2,
            identity=Identity(),
            tools=Tools(HashingEmbedder(), source="VectorOnlyStore"),
        )
    assert out == ranked and "expansion_unavailable: VectorOnlyStore" in caplog.text
