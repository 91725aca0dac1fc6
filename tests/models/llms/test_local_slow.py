"""The real local model (Qwen2.5-Coder-0.5B, extra ``llm-small``) end to end: chat, stream, JSON, scoring."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragwright.models.llms import Message, load_chat, parse_json
from ragwright.models.llms.local import LlamaCppChat
from ragwright.models.rerankers import LlmPointwiseReranker

pytestmark = pytest.mark.slow  # needs the llm-small extra (the test extra installs it)

QUESTION = [Message("system", "You are a concise assistant."), Message("user", "What is the capital of France?")]


@pytest.fixture(scope="module")
def llm() -> Iterator[LlamaCppChat]:
    chat = load_chat("local:0.5b", n_ctx=1024)
    assert isinstance(chat, LlamaCppChat)
    yield chat.load()


def test_chat_and_stream_agree_at_temperature_zero(llm: LlamaCppChat) -> None:
    reply = llm.chat(QUESTION, temperature=0.0, max_tokens=12)
    assert "Paris" in reply.text
    assert reply.usage.prompt_tokens > 10 and 0 < reply.usage.completion_tokens <= 12
    assert reply.seconds > 0 and reply.model.startswith("llama.cpp:qwen2.5-coder-0.5b")
    pieces = list(llm.stream(QUESTION, temperature=0.0, max_tokens=12))
    assert len(pieces) > 1
    assert "".join(pieces) == reply.text


def test_json_mode_is_enforced(llm: LlamaCppChat) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }
    reply = llm.chat([Message("user", "Name the capital of Italy and its country.")], json_schema=schema, max_tokens=40)
    value = parse_json(reply.text)
    assert isinstance(value, dict) and set(value) == {"city", "country"}
    assert "rome" in value["city"].lower()


def test_pointwise_reranker_prefers_the_relevant_passage(llm: LlamaCppChat) -> None:
    reranker = LlmPointwiseReranker(llm)
    query = "How do plants turn sunlight into food?"
    relevant = "Photosynthesis lets plants convert light energy, water and carbon dioxide into glucose and oxygen."
    irrelevant = "The stock exchange closed lower on Friday after bank shares fell sharply."
    scores = reranker.score(query, [irrelevant, relevant])
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[1] > scores[0]
    # The KV prefix kept between prompts must not change a score: the same pairs in the other order agree.
    again = reranker.score(query, [relevant, irrelevant])
    assert again[0] == pytest.approx(scores[1], abs=0.02) and again[1] == pytest.approx(scores[0], abs=0.02)
    # Scoring leaves the model usable for generation (its cached state stays consistent).
    assert "Paris" in llm.chat(QUESTION, temperature=0.0, max_tokens=12).text


def test_concurrent_calls_are_serialised(llm: LlamaCppChat) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        chats = [pool.submit(llm.chat, QUESTION, temperature=0.0, max_tokens=12) for _ in range(2)]
        scores = pool.submit(LlmPointwiseReranker(llm).score, "capital of France", ["Paris is the capital of France."])
        texts = [f.result().text for f in chats]
    assert all("Paris" in t for t in texts) and texts[0] == texts[1]
    assert 0.0 <= scores.result()[0] <= 1.0
