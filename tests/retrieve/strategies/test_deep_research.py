from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ragwright.errors import GenerationError
from ragwright.model.identity import Identity
from ragwright.options import DeepResearchOptions, RetrievalOptions
from ragwright.retrieve.strategies.deep_research import DeepResearchRetriever
from ragwright.testing.doubles import ScriptedChat

from .conftest import FakeRetriever, result

ID = Identity(tenant="t1", groups=("a", "b"), user="u")


def verdict(sufficient: bool, *subs: str) -> str:
    return json.dumps({"sufficient": sufficient, "subQueries": list(subs)})


PAGES = {
    "q": [result("a", 0.9), result("b", 0.8)],
    "s1": [result("c", 0.7), result("b", 0.6)],
    "s2": [result("c", 0.5), result("d", 0.4)],
    "s3": [result("e", 0.3)],
}


def run(inner: FakeRetriever, chat: ScriptedChat, options: DeepResearchOptions | None = None, **call: Any) -> Any:
    retriever = DeepResearchRetriever(inner, chat, options)
    return asyncio.run(retriever.retrieve("q", RetrievalOptions(**call), ID))


def test_sufficient_first_page_passes_through_with_original_scores() -> None:
    inner, chat = FakeRetriever(PAGES), ScriptedChat([verdict(True)])
    out = run(inner, chat)
    assert [(r.chunk_id, r.score) for r in out] == [("a", 0.9), ("b", 0.8)]
    assert out[0] is PAGES["q"][0] and len(chat.calls) == 1
    assert out.extensions["deep_research_stop"] == "sufficient"


def test_sub_queries_are_fused_by_rrf_and_capped() -> None:
    inner = FakeRetriever(PAGES)
    chat = ScriptedChat([verdict(False, "s1", "s2"), verdict(True)])
    out = run(inner, chat, top_k=3)
    assert [c[0] for c in inner.calls] == ["q", "s1", "s2"]
    assert all(c[2] is ID for c in inner.calls)  # the identity reaches every sub-query unchanged
    # b: 1/62 + 1/62; c: 1/61 + 1/61; a: 1/61 — consensus outranks the original top hit
    assert [r.chunk_id for r in out] == ["c", "b", "a"]
    assert out[0].score == pytest.approx(2 / 61) and out[0].fusion == "rrf"
    assert out.extensions["deep_research_queries"] == ["s1", "s2"]
    assert "[1] c" in chat.calls[1].last_user  # the second check sees the fused context


@pytest.mark.parametrize(
    "reply", ["not json at all", '{"sufficient": "yes"}', '{"sufficient": false, "subQueries": 3}']
)
def test_malformed_reply_stops_with_what_it_has(reply: str) -> None:
    inner = FakeRetriever(PAGES)
    out = run(inner, ScriptedChat([reply]))
    assert [r.chunk_id for r in out] == ["a", "b"] and out.extensions["deep_research_stop"] == "malformed"
    out = run(FakeRetriever(PAGES), ScriptedChat([verdict(False, "s1"), reply]))
    assert {r.chunk_id for r in out} == {"a", "b", "c"} and out.extensions["deep_research_stop"] == "malformed"


def test_failed_call_stops_with_what_it_has() -> None:
    out = run(FakeRetriever(PAGES), ScriptedChat([GenerationError("timeout")]))
    assert [(r.chunk_id, r.score) for r in out] == [("a", 0.9), ("b", 0.8)]
    assert out.extensions["deep_research_stop"] == "failed"


def test_failed_sub_query_is_skipped() -> None:
    inner = FakeRetriever(PAGES, fail={"s1"})
    out = run(inner, ScriptedChat([verdict(False, "s1", "s3"), verdict(True)]))
    assert {r.chunk_id for r in out} == {"a", "b", "e"}


def test_first_retrieval_failure_propagates_without_a_model_call() -> None:
    chat = ScriptedChat([verdict(True)])
    with pytest.raises(RuntimeError, match="boom"):
        run(FakeRetriever(PAGES, fail={"q"}), chat)
    assert chat.calls == []


def test_depth_and_sub_query_count_are_bounded() -> None:
    counter = iter(range(1000))

    def always_more(_: list[Any]) -> str:
        return verdict(False, *(f"s{next(counter)}" for _ in range(5)))

    inner = FakeRetriever(lambda q, o: [result(q, 1.0)])
    chat = ScriptedChat(always_more)
    out = run(inner, chat, DeepResearchOptions(max_depth=2, sub_query_count=3), top_k=4)
    assert len(chat.calls) == 2 and len(inner.calls) == 1 + 2 * 3
    assert len(out) == 4 and out.extensions["deep_research_stop"] == "max_depth"


def test_repeated_sub_queries_are_not_run_again() -> None:
    inner = FakeRetriever(PAGES)
    out = run(inner, ScriptedChat([verdict(False, "s1", "Q "), verdict(False, "s1")]))
    assert [c[0] for c in inner.calls] == ["q", "s1"]
    assert out.extensions["deep_research_stop"] == "no_new_queries"
