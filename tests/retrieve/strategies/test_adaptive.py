from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ragwright.errors import GenerationError
from ragwright.model.identity import Identity
from ragwright.model.outcome import RetrievalOutcome
from ragwright.options import AdaptiveOptions, RetrievalOptions
from ragwright.retrieve.request import RetrievalRequest
from ragwright.retrieve.strategies.adaptive import AdaptiveRetriever, classify_heuristic
from ragwright.testing.doubles import ScriptedChat

from .conftest import FakeRetriever

LONG = "the warranty period of the blue kettle sold in the northern stores"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("refund policy", "simple"),
        ("What is the kettle refund policy", "simple"),
        ("What is the refund policy for kettles", None),
        ("How do refunds work", "complex"),
        ("why was the order cancelled", "complex"),
        ("compare the two warranty plans", "complex"),
        ("explain chunking", "complex"),
        ("what is the difference between them", "complex"),
        ("refunds and returns and exchanges", "multi_hop"),
        ("shipping times as well as refund rules and fees", "multi_hop"),
        ("how do refunds and also returns work", "multi_hop"),
        (LONG, None),
    ],
)
def test_heuristic(query: str, expected: str | None) -> None:
    assert classify_heuristic(query) == expected


def run(query: str, llm: ScriptedChat | None = None, **call: Any) -> tuple[Any, RetrievalOptions]:
    inner = FakeRetriever()
    out = asyncio.run(AdaptiveRetriever(inner, llm).retrieve(query, RetrievalOptions(**call), Identity()))
    return out, inner.calls[0][1]


@pytest.mark.parametrize(
    ("query", "top_k", "multi_query", "hyde"),
    [
        ("refund policy", 3, False, False),
        ("How do refunds work", 8, True, False),
        ("refunds and returns and exchanges", 10, True, True),
    ],
)
def test_mapping_to_options(query: str, top_k: int, multi_query: bool, hyde: bool) -> None:
    out, seen = run(query, use_adaptive_retrieval=True, use_multi_query=not multi_query, use_hyde=not hyde)
    assert (seen.top_k, seen.use_multi_query, seen.use_hyde) == (top_k, multi_query, hyde)
    assert out.extensions["adaptive_source"] == "heuristic"


def test_llm_fallback_then_default() -> None:
    out, seen = run(LONG, ScriptedChat(['{"complexity": "multi_hop"}']), use_adaptive_retrieval=True)
    assert (seen.top_k, out.extensions["adaptive_complexity"], out.extensions["adaptive_source"]) == (
        10,
        "multi_hop",
        "llm",
    )
    out, seen = run(LONG, ScriptedChat(["simple"]), use_adaptive_retrieval=True)
    assert (seen.top_k, out.extensions["adaptive_source"]) == (3, "llm")
    for llm in (ScriptedChat([GenerationError("down")]), ScriptedChat(["no idea"]), None):
        out, seen = run(LONG, llm, use_adaptive_retrieval=True)
        assert (seen.top_k, out.extensions["adaptive_complexity"], out.extensions["adaptive_source"]) == (
            8,
            "complex",
            "default",
        )


def test_off_per_call_and_candidate_counts_fit() -> None:
    _, seen = run("refund policy", top_k=4)
    assert seen == RetrievalOptions(top_k=4)
    _, seen = run("How do refunds work", use_adaptive_retrieval=True, top_k=2, candidate_count=5, mmr_candidate_count=6)
    assert (seen.top_k, seen.candidate_count, seen.mmr_candidate_count) == (8, 8, 8)
    custom = AdaptiveRetriever(FakeRetriever(), options=AdaptiveOptions(simple_top_k=2))
    assert custom.plan("simple", "heuristic").top_k == 2


def test_hyde_turned_on_by_the_plan_bypasses_the_embedding_cache() -> None:
    seen: list[bool] = []

    class Stage:
        async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
            seen.append(request.fresh_embeddings)  # the request says so; nothing beside it
            return RetrievalOutcome()

    retriever = AdaptiveRetriever(Stage())
    for query in ("refunds and returns and exchanges", "refund policy"):
        out = asyncio.run(
            retriever.retrieve(query, RetrievalOptions(use_adaptive_retrieval=True, use_hyde=False), Identity())
        )
        assert out.outcome.adaptive is not None
    assert seen == [True, False]
