"""End to end with the real local model (Qwen2.5-Coder-0.5B on llama.cpp): HyDE and multi-query run
through the pipeline and return results. Needs the ``llm-small`` extra; bounded to a few short
generations (~30 tok/s on one thread)."""

from __future__ import annotations

import pytest

from ragwright.options import RetrievalOptions
from ragwright.retrieve.transforms import HydeOptions, MultiQueryOptions, TransformOptions
from ragwright.testing.doubles import HashingEmbedder

from .conftest import SpyStore, run

pytestmark = pytest.mark.slow


def test_hyde_and_multi_query_with_the_local_model(store: SpyStore, embedder: HashingEmbedder) -> None:
    from ragwright.models.llms import load_chat

    chat = load_chat("local:0.5b")
    assert chat is not None
    transforms = TransformOptions(
        multi_query=MultiQueryOptions(variant_count=2, max_tokens=64),
        hyde=HydeOptions(hypothesis_count=2, max_tokens=48),
    )
    options = RetrievalOptions(use_hybrid_search=True, top_k=3)
    results, trace = run(
        store, embedder, chat, transforms, "How many weeks of parental leave do employees get?", options
    )
    assert results and len(results) <= 3
    assert "hyde" in trace.transforms and trace.hypotheses >= 1  # the model wrote at least one passage
    # a 0.5B model may repeat the question; then multi-query falls back, and says so
    assert "multi_query" in trace.transforms or trace.fallbacks == ["multi_query_failed"]
    assert store.keyword_queries()[0] == "How many weeks of parental leave do employees get?"
