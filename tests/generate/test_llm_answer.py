"""LlmAnswerer: declines, citations, verification, usage; and the Rag ask/stream facade over it."""

import asyncio
import json
import logging
from typing import Any

import pytest

from ragwright import Rag, RagOptions
from ragwright.errors import ConfigError, GenerationError
from ragwright.generate.extractive import NO_SOURCES
from ragwright.generate.llm_answer import BELOW_THRESHOLD, UNSUPPORTED, LlmAnswerer
from ragwright.generate.prompt import DECLINE_SENTENCE, STRICT_SUFFIX
from ragwright.model.chunk import Chunk
from ragwright.model.results import ArmHit, RagResponse, SearchResult
from ragwright.models.llms.base import Message
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

SOURCES = [
    SearchResult(Chunk.create("refunds.md", "Refunds are possible within 30 days of delivery.", 0), 0.8),
    SearchResult(Chunk.create("gifts.md", "Gift cards cannot be refunded.", 0), 0.6),
]
ANSWER = "Refunds are possible within 30 days [Source 1], but not for gift cards [Source 2]."
SUPPORTED = json.dumps({"supported": True, "unsupported_claims": []})
UNSUPPORTED_VERDICT = json.dumps({"supported": False, "unsupported_claims": ["60 days"]})


def answer(chat: ScriptedChat, sources: list[SearchResult] = SOURCES, **options: Any) -> RagResponse:
    return LlmAnswerer(chat, embedder=HashingEmbedder()).answer(
        "What is the refund policy?", sources, RagOptions(**options)
    )


def test_answer_with_valid_citations_usage_and_timings() -> None:
    chat = ScriptedChat([ANSWER], name="test/model")
    r = answer(chat)
    assert r.answer == ANSWER and not r.declined and r.decline_reason is None
    assert [(c.source, c.document_id) for c in r.citations] == [(1, "refunds.md"), (2, "gifts.md")]
    assert r.mode == "llm" and r.model == "test/model" and r.verified is None
    assert r.usage["llm_calls"] == 1 and r.usage["completion_tokens"] > 0
    assert r.usage["total_tokens"] == r.usage["prompt_tokens"] + r.usage["completion_tokens"]
    assert r.timings["generate_s"] >= 0
    assert r.to_dict()["citations"][0]["chunk_id"] == SOURCES[0].chunk.id


def test_invalid_and_missing_citations_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ragwright.generate.llm_answer"):
        r = answer(ScriptedChat(["Refunds take 30 days [Source 1]. Shipping is free [Source 5]."]))
        assert r.invalid_citations == (5,) and [c.source for c in r.citations] == [1] and not r.uncited
        bare = answer(ScriptedChat(["Shipping is always free worldwide."]))  # no source holds these words
    assert bare.uncited and bare.citations == () and not bare.declined
    assert {"citations_invalid", "answer_uncited"} <= {rec.getMessage().split(":")[0] for rec in caplog.records}


def test_an_uncited_answer_is_cited_to_the_source_that_holds_its_words() -> None:
    r = answer(ScriptedChat(["Refunds are possible within 30 days of delivery."]))
    assert r.answer == "Refunds are possible within 30 days of delivery. [Source 1]"
    assert [c.source for c in r.citations] == [1] and not r.uncited and not r.declined
    chat = ScriptedChat(["Refunds are possible within 30 days of delivery.\n"])
    stream = LlmAnswerer(chat, embedder=HashingEmbedder()).stream("What is the refund policy?", SOURCES, RagOptions())
    deltas = list(stream)
    assert "".join(deltas) == stream.response.answer and deltas[-1] == " [Source 1]"
    assert [c.source for c in stream.response.citations] == [1]


def test_decline_no_sources_without_calling_the_model() -> None:
    chat = ScriptedChat([])
    r = answer(chat, sources=[])
    assert r.declined and r.decline_reason == "no_sources" and r.answer == NO_SOURCES
    assert chat.calls == [] and r.usage["llm_calls"] == 0


def test_decline_below_relevance_threshold_without_calling_the_model() -> None:
    weak = [
        SearchResult(SOURCES[0].chunk, 0.016, arms={"dense": ArmHit(1, 0.21), "bm25": ArmHit(2, 3.0)}, fusion="rrf"),
        SearchResult(SOURCES[1].chunk, 0.015, arms={"rerank": ArmHit(1, 0.1), "dense": ArmHit(2, 0.9)}),
    ]
    chat = ScriptedChat([])
    r = answer(chat, sources=weak, min_relevance=0.5)  # the reranker's 0.1 wins over the dense 0.9
    assert r.declined and r.decline_reason == "below_relevance_threshold" and r.answer == BELOW_THRESHOLD
    assert chat.calls == []
    strong = [SearchResult(SOURCES[0].chunk, 0.016, arms={"dense": ArmHit(1, 0.55)})]
    assert not answer(ScriptedChat([ANSWER]), sources=strong, min_relevance=0.5).declined


def test_keyword_only_hits_are_judged_with_the_embedder() -> None:
    keyword_only = [SearchResult(SOURCES[0].chunk, 0.016, arms={"bm25": ArmHit(1, 7.0)})]
    off_topic = LlmAnswerer(ScriptedChat([]), embedder=HashingEmbedder()).answer(
        "volcanoes of iceland", keyword_only, RagOptions(min_relevance=0.3)
    )
    assert off_topic.decline_reason == "below_relevance_threshold"
    on_topic = LlmAnswerer(ScriptedChat([ANSWER]), embedder=HashingEmbedder()).answer(
        "Refunds are possible within 30 days of delivery?", keyword_only, RagOptions(min_relevance=0.3)
    )
    assert not on_topic.declined


@pytest.mark.parametrize(
    "reply",
    [
        DECLINE_SENTENCE,
        "The provided context does not contain information about that.",
        "The sources do not mention the shipping cost [Source 1].",
    ],
)
def test_decline_when_the_model_says_the_context_is_insufficient(reply: str) -> None:
    r = answer(ScriptedChat([reply]))
    assert r.declined and r.decline_reason == "model_insufficient_context"
    assert r.answer == reply and r.citations == ()


def test_empty_reply_declines_honestly() -> None:
    r = answer(ScriptedChat([""]))
    assert r.declined and r.answer == DECLINE_SENTENCE
    labels_only = answer(ScriptedChat(["[Source 1] [Source 2]"]))  # a small model's non-answer
    assert labels_only.declined and labels_only.answer == "[Source 1] [Source 2] " + DECLINE_SENTENCE
    assert labels_only.decline_reason == "model_insufficient_context"


def test_generation_error_propagates() -> None:
    with pytest.raises(GenerationError):
        answer(ScriptedChat([GenerationError("backend down")]))


def test_verification_supported_first_time() -> None:
    chat = ScriptedChat([ANSWER, SUPPORTED])
    r = answer(chat, verify_answer=True)
    assert r.answer == ANSWER and r.verified is True and not r.declined
    judge = chat.calls[1]
    assert judge.kwargs["json_schema"]["required"] == ["supported", "unsupported_claims"]
    assert "<answer>\n" + ANSWER in judge.last_user and "[Source 1]" in judge.last_user
    assert r.usage["llm_calls"] == 2 and "verify_s" in r.timings


def test_verification_regenerates_once_then_delivers() -> None:
    chat = ScriptedChat(["Refunds take 60 days [Source 1].", UNSUPPORTED_VERDICT, ANSWER, SUPPORTED])
    r = answer(chat, verify_answer=True, temperature=0.7)
    assert r.answer == ANSWER and r.verified is True and not r.declined
    regen = chat.calls[2]
    assert regen.messages[0].content.endswith(STRICT_SUFFIX) and regen.kwargs["temperature"] == 0.0


def test_verification_regenerate_then_decline(caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat(
        [
            "Refunds take 60 days [Source 1].",
            UNSUPPORTED_VERDICT,
            "Refunds take 90 days [Source 1].",
            UNSUPPORTED_VERDICT,
        ]
    )
    with caplog.at_level(logging.INFO, logger="ragwright.generate"):
        r = answer(chat, verify_answer=True)
    assert r.declined and r.decline_reason == "unsupported_after_verification" and r.verified is False
    assert r.answer == UNSUPPORTED and r.citations == ()
    assert len(chat.calls) == 4  # bounded: one answer, one check, one retry, one check
    events = [rec.getMessage().split(":")[0] for rec in caplog.records]
    assert "verify_unsupported" in events and "verify_declined" in events


def test_verification_judge_failure_degrades_to_unverified(caplog: pytest.LogCaptureFixture) -> None:
    chat = ScriptedChat([ANSWER, "I think it is fine!"])
    with caplog.at_level(logging.WARNING, logger="ragwright.generate.verify"):
        r = answer(chat, verify_answer=True)
    assert r.answer == ANSWER and r.verified is None and not r.declined
    assert any(rec.getMessage().startswith("verify_failed") for rec in caplog.records)
    wrong_shape = answer(ScriptedChat([ANSWER, '{"supported": "yes"}']), verify_answer=True)
    assert wrong_shape.verified is None


def test_verification_skipped_for_a_decline() -> None:
    chat = ScriptedChat([DECLINE_SENTENCE])
    r = answer(chat, verify_answer=True)
    assert r.decline_reason == "model_insufficient_context" and len(chat.calls) == 1


@pytest.mark.parametrize(
    ("script", "options"),
    [
        ([ANSWER], {}),
        ([DECLINE_SENTENCE], {}),
        ([""], {}),
        (["[Source 1]"], {}),
        (["Refunds take 60 days [Source 1].", UNSUPPORTED_VERDICT, ANSWER, SUPPORTED], {"verify_answer": True}),
    ],
)
def test_stream_yields_the_same_text_as_the_non_streamed_answer(script: list[str], options: dict[str, Any]) -> None:
    plain = answer(ScriptedChat(list(script)), **options)
    streaming = ScriptedChat(list(script))
    stream = LlmAnswerer(streaming).stream("What is the refund policy?", SOURCES, RagOptions(**options))
    deltas = list(stream)
    assert "".join(deltas) == stream.response.answer == plain.answer
    assert stream.response.declined == plain.declined
    assert stream.response.citations == plain.citations
    if not options:
        assert (streaming.calls[0].stream and len(deltas) > 1) or not script[0]  # real token deltas


def test_stream_response_before_the_end_is_an_error() -> None:
    stream = LlmAnswerer(ScriptedChat([ANSWER])).stream("q", SOURCES, RagOptions())
    next(stream)
    with pytest.raises(GenerationError, match="not finished"):
        _ = stream.response


# -- the facade ------------------------------------------------------------------------------------------
DOCS = {
    "refunds.md": b"# Refunds\n\nCustomers may request a refund within 30 days of delivery.",
    "security.md": b"# Security\n\nCustomer data at rest is encrypted with AES-256 keys.",
}


def make_rag(chat: ScriptedChat | None, **kwargs: object) -> Rag:
    rag = Rag(MemoryStore(), HashingEmbedder(), llm=chat, **kwargs)  # type: ignore[arg-type]
    rag.ingest(BytesSource(DOCS))
    return rag


def test_rag_uses_the_chat_model_when_configured_else_extractive() -> None:
    chat = ScriptedChat(lambda msgs: "Within 30 days [Source 1].")
    rag = make_rag(chat)
    r = rag.ask("refund within 30 days of delivery?")
    assert r.mode == "llm" and r.answer == "Within 30 days [Source 1]." and r.citations[0].document_id == "refunds.md"
    assert r.retrieval_path == "dense+bm25 → convex (dense 0.7, bm25 0.3) → rocchio" and {
        "retrieve_s",
        "generate_s",
        "total_s",
    } <= set(r.timings)
    assert rag.ask("refund within 30 days of delivery?", answer_mode="extractive").mode == "extractive"
    no_llm = make_rag(None)
    assert no_llm.ask("refund within 30 days of delivery?", extractive_min_similarity=0.2).mode == "extractive"
    with pytest.raises(ConfigError, match="needs a chat model"):
        no_llm.ask("refund?", answer_mode="llm")
    with pytest.raises(ConfigError, match="needs a chat model"):
        no_llm.aask_stream("refund?", answer_mode="llm")


def test_rag_prompt_observer_sees_the_sent_messages() -> None:
    seen: list[tuple[Message, ...]] = []
    chat = ScriptedChat(lambda msgs: "Within 30 days [Source 1].")
    rag = make_rag(chat, prompt_observer=seen.append)
    rag.ask("refund within 30 days?", system_prompt="Custom prompt.")
    assert list(seen[0]) == chat.calls[0].messages and seen[0][0].content == "Custom prompt."
    assert seen[0][-1].content.startswith("Context:\n[Source 1]\n") and seen[0][-1].content.endswith(
        "\n\nQuestion: refund within 30 days?"
    )


def test_rag_ask_stream_and_aask_stream_match_ask() -> None:
    rag = make_rag(ScriptedChat(lambda msgs: "Refunds are possible within 30 days [Source 1]."))
    plain = rag.ask("refund within 30 days?")
    stream = rag.ask_stream("refund within 30 days?")
    assert "".join(stream) == stream.response.answer == plain.answer
    assert stream.response.retrieval_path == plain.retrieval_path and "retrieve_s" in stream.response.timings

    async def consume() -> tuple[str, str, str]:
        s = rag.aask_stream("refund within 30 days?")
        text = "".join([d async for d in s])
        awaited = await rag.aask_stream("refund within 30 days?")  # awaiting first works too
        text2 = "".join([d async for d in awaited])
        return text, s.response.answer, text2

    text, final, text2 = asyncio.run(consume())
    assert text == final == text2 == plain.answer


def test_rag_extractive_stream_is_one_delta() -> None:
    rag = make_rag(None)
    stream = rag.ask_stream("refund within 30 days of delivery?", extractive_min_similarity=0.2)
    deltas = list(stream)
    assert len(deltas) == 1 and deltas[0] == stream.response.answer and stream.response.mode == "extractive"


def test_rag_no_sources_decline_through_the_facade() -> None:
    chat = ScriptedChat([])
    rag = Rag(MemoryStore(), HashingEmbedder(), llm=chat)
    r = rag.ask("anything at all?")
    assert r.declined and r.decline_reason == "no_sources" and chat.calls == []
    assert r.to_dict()["decline_reason"] == "no_sources"


# -- options ---------------------------------------------------------------------------------------------
def test_options_validation() -> None:
    opts = RagOptions(conversation_history=[{"role": "user", "content": "hi"}, Message("assistant", "hello")])
    assert opts.conversation_history == (Message("user", "hi"), Message("assistant", "hello"))
    assert RagOptions().answer_mode is None and RagOptions(answer_mode="llm").answer_mode == "llm"
    assert RagOptions().inactive_requests() == []
    assert RagOptions(system_prompt="x", temperature=0.1, send_sources_as_tool_result=True).inactive_requests() == []
    bad = [
        ({"conversation_history": [{"role": "wizard", "content": "x"}]}, "conversation_history\\[0\\]"),
        ({"conversation_history": [{"content": "no role"}]}, "conversation_history\\[0\\]"),
        ({"conversation_history": [{"role": "user", "content": 5}]}, "conversation_history\\[0\\]"),
        ({"conversation_history": "hello"}, "conversation_history"),
        ({"answer_mode": "poetry"}, "answer_mode"),
        ({"max_answer_tokens": 0}, "max_answer_tokens"),
        ({"verify_answer": "yes"}, "verify_answer"),
        ({"min_relevance": float("nan")}, "min_relevance"),
        ({"temperature": 3.0}, "temperature"),
        ({"system_prompt": "  "}, "system_prompt"),
    ]
    for kwargs, field in bad:
        with pytest.raises(ConfigError, match=field):
            RagOptions(**kwargs)  # type: ignore[arg-type]


def test_async_stream_closes_after_a_cancelled_step() -> None:
    import threading

    release = threading.Event()
    closed = threading.Event()

    class SlowChat(ScriptedChat):
        def stream(self, messages: Any, **kwargs: Any) -> Any:
            def gen() -> Any:
                try:
                    yield "Refunds "
                    release.wait(5)
                    yield "take 30 days [Source 1]."
                finally:
                    closed.set()

            return gen()

    rag = make_rag(SlowChat([]))

    async def run() -> None:
        stream = rag.aask_stream("refund within 30 days?")
        assert await stream.__anext__() == "Refunds "
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(stream.__anext__(), timeout=0.05)  # the step's thread keeps running
        await stream.aclose()  # must not raise "generator already executing"
        release.set()

    asyncio.run(run())
    assert closed.wait(5)  # the model stream was closed once the running step returned
