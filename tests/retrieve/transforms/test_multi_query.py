"""Multi-query: variants parsed and validated, each runs the arms, RRF with the original highest,
and every failure falls back to the single query with ``multi_query_failed``."""

from __future__ import annotations

import logging

import pytest

from ragwright.errors import GenerationError
from ragwright.model.results import ArmHit, SearchResult
from ragwright.options import RetrievalOptions
from ragwright.retrieve.transforms import MultiQueryOptions, TransformOptions
from ragwright.retrieve.transforms.multi_query import generate_variants, parse_variants
from ragwright.retrieve.transforms.plan import fuse_branches
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import SpyStore, calls_of, chat_for, run

MQ = TransformOptions(multi_query=MultiQueryOptions())


def test_parse_variants_strips_numbering_preambles_and_the_original() -> None:
    reply = (
        "Sure! Here are three phrasings:\n"
        "1. How long is parental leave?\n"
        "2) What is the parental leave duration?\n"
        '- "how long is PARENTAL leave?"\n'
        "* Parental leave entitlement for staff\n"
        "What is the leave policy?\n"
    )
    out = parse_variants(reply, "What is the leave policy?", MultiQueryOptions(variant_count=3))
    assert out == [
        "How long is parental leave?",
        "What is the parental leave duration?",
        "Parental leave entitlement for staff",
    ]
    capped = parse_variants("x" * 400 + "\nshort one", "q", MultiQueryOptions(max_variant_chars=50))
    assert capped == ["short one"]


def test_prompt_fills_count_and_query() -> None:
    chat = ScriptedChat(["a\nb"])
    generate_variants(chat, "leave?", MultiQueryOptions(variant_count=2))
    prompt = chat.calls[0].last_user
    assert "Generate 2 different phrasings" in prompt and "Question: leave?" in prompt


def test_no_usable_variant_raises() -> None:
    with pytest.raises(GenerationError):
        generate_variants(ScriptedChat(["Here you go:\n\n"]), "q", MultiQueryOptions())


def test_variants_run_the_arms_and_are_fused(store: SpyStore, embedder: HashingEmbedder) -> None:
    variants = "How do I reset the X200 router?\nX200 power button reset\nrouter reset procedure"
    plain, _ = run(store, embedder, None, MQ, "parental leave weeks")
    store.arm_calls.clear()
    chat = chat_for(multi_query=variants)
    results, trace = run(store, embedder, chat, MQ, "parental leave weeks")
    assert len(calls_of(chat, "multi_query")) == 1
    assert trace.transforms == ["multi_query"] and trace.queries[0] == ("parental leave weeks", 1.5, "original")
    assert [w for _, w, _ in trace.queries[1:]] == [1.0, 1.0, 1.0]
    # every branch ran both arms with its own text (BM25 gets each variant verbatim)
    assert store.keyword_queries() == ["parental leave weeks", *variants.splitlines()]
    ids = [r.document_id for r in results]
    assert "x200-manual.md" in ids and "x200-manual.md" not in [r.document_id for r in plain]  # variants reach it
    assert all(r.fusion == "rrf" and set(r.arms) <= {"dense", "bm25"} for r in results)


def test_original_weighted_highest_in_fusion() -> None:
    def hit(cid: str) -> SearchResult:
        from ragwright.model.chunk import Chunk

        return SearchResult(Chunk(id=cid, document_id=cid, text=cid, position=0), 1.0, arms={"dense": ArmHit(1, 1.0)})

    fused = fuse_branches([[hit("orig")], [hit("var")]], [1.5, 1.0], 60)
    assert [r.chunk_id for r in fused] == ["orig", "var"]
    assert fused[0].score == pytest.approx(1.5 / 61) and fused[1].score == pytest.approx(1.0 / 61)


@pytest.mark.parametrize(
    "failure",
    [GenerationError("timeout"), RuntimeError("connection reset"), "Here are some:\n\n", "parental leave weeks"],
)
def test_expander_failure_falls_back_to_single_query(
    store: SpyStore, embedder: HashingEmbedder, caplog: pytest.LogCaptureFixture, failure: object
) -> None:
    plain, _ = run(store, embedder, None, MQ, "parental leave weeks")
    store.arm_calls.clear()
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        results, trace = run(store, embedder, chat_for(multi_query=failure), MQ, "parental leave weeks")  # type: ignore[arg-type]
    assert "multi_query_failed" in caplog.text and trace.fallbacks == ["multi_query_failed"]
    assert store.keyword_queries() == ["parental leave weeks"]
    assert [(r.chunk_id, r.score) for r in results] == [(r.chunk_id, r.score) for r in plain]


def test_switch_off_or_no_llm_never_calls_the_model(store: SpyStore, embedder: HashingEmbedder) -> None:
    chat = chat_for(multi_query="a\nb\nc")
    run(store, embedder, chat, MQ, "parental leave", RetrievalOptions(use_hybrid_search=True, use_multi_query=False))
    assert chat.calls == []
    results, trace = run(store, embedder, None, MQ, "parental leave")
    assert results and trace.transforms == [] and store.keyword_queries()[-1] == "parental leave"
