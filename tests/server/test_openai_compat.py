"""OpenAI's ``/v1/chat/completions`` end to end with the real ``openai`` client against a loopback server:
cited answers, streaming in OpenAI's chunk format, conversation history, API keys as the identity."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from ragwright import Rag, RagOptions
from ragwright.server import create_app, hash_key
from ragwright.server.live import serve_in_thread
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import KEY_A, KEY_B, REFUNDS, SECRET

QUESTION = "How many days do customers have to request a refund?"


def make_rag(llm: Any = None) -> Rag:
    rag = Rag(
        MemoryStore(),
        HashingEmbedder(),
        rag_options=RagOptions(use_hybrid_search=True, extractive_min_similarity=0.3, answerability="off"),
        llm=llm,
    )
    rag.ingest(BytesSource({"refunds.md": REFUNDS}), tenant="default")
    rag.ingest(BytesSource({"acme-refunds.md": REFUNDS}), tenant="acme")
    rag.ingest(BytesSource({"merger.md": SECRET}), tenant="globex")
    return rag


@pytest.fixture
def served(tmp_path: Any) -> Iterator[Any]:
    """``served(rag, config=None)`` → an ``openai.OpenAI`` factory for a live loopback server."""
    stack: list[Any] = []

    def start(rag: Rag, config: dict[str, Any] | None = None) -> Any:
        cm = serve_in_thread(create_app(rag, config or {"staging_dir": str(tmp_path / "staging")}))
        url = cm.__enter__()
        stack.append(cm)

        def client(key: str = "any-key-works-when-keyless") -> openai.OpenAI:
            return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=30.0)

        return client

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def test_an_answer_with_citations(served: Any) -> None:
    client = served(make_rag())()
    reply = client.chat.completions.create(model="ragwright", messages=[{"role": "user", "content": QUESTION}])
    content = reply.choices[0].message.content or ""
    assert reply.object == "chat.completion" and reply.choices[0].finish_reason == "stop"
    assert "[Source 1]" in content and "30 days" in content
    assert "\n\nSources:\n[Source 1]" in content and "refunds.md" in content
    extension = (reply.model_extra or {})["ragwright"]
    assert not extension["declined"] and extension["citations"][0]["document_id"].endswith("refunds.md")
    assert "acme-refunds.md" not in content  # the anonymous caller sees the default tenant only
    assert [m.id for m in client.models.list().data] == ["ragwright"]


def test_streaming_chunks_add_up_to_the_answer(served: Any) -> None:
    client = served(make_rag())()
    whole = client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    stream = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None  # include_usage: the last chunk


def test_earlier_turns_are_the_history_and_the_chat_model_answers(served: Any) -> None:
    llm = ScriptedChat(default="Customers have 30 days to ask for a refund [Source 1].")
    client = served(make_rag(llm))()
    messages: list[Any] = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "I bought a kettle last week."},
        {"role": "assistant", "content": "Thanks, noted."},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    ]
    stream = client.chat.completions.create(model="local", messages=messages, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.startswith("Customers have 30 days to ask for a refund [Source 1].")
    assert "Sources:\n[Source 1]" in text
    answer_call = next(c for c in llm.calls if c.stream)
    contents = [m.content for m in answer_call.messages]
    assert "I bought a kettle last week." in contents and "Thanks, noted." in contents  # the history
    assert QUESTION in answer_call.last_user  # the last user message is the question
    reply = client.chat.completions.create(
        model="local", messages=[{"role": "user", "content": QUESTION}], extra_body={"ragwright": {"top_k": 1}}
    )
    assert len((reply.model_extra or {})["ragwright"]["sources"]) == 1  # ragwright options ride along


def test_the_api_key_is_the_identity(served: Any, tmp_path: Any) -> None:
    config = {
        "keys": [{"hash": hash_key(KEY_A), "tenant": "acme"}, {"hash": hash_key(KEY_B), "tenant": "globex"}],
        "staging_dir": str(tmp_path / "staging"),
    }
    client = served(make_rag(), config)
    with pytest.raises(openai.PermissionDeniedError):
        client("not-a-configured-key-0123").chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}]
        )
    acme = client(KEY_A).chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}])
    assert "acme-refunds.md" in (acme.choices[0].message.content or "")
    globex = client(KEY_B).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "When does the merger with Initech close?"}],
        user="acme",  # OpenAI's end-user field never changes who asks
    )
    assert "merger.md" in (globex.choices[0].message.content or "")
    with pytest.raises(openai.PermissionDeniedError):  # nor does an identity in the ragwright options
        client(KEY_B).chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], extra_body={"ragwright": {"tenant": "acme"}}
        )


def test_a_bad_request_is_a_clear_400(served: Any) -> None:
    client = served(make_rag())()
    with pytest.raises(openai.BadRequestError, match="needs a user message"):
        client.chat.completions.create(model="m", messages=[{"role": "system", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="only text content"):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}],
        )
    with pytest.raises(openai.BadRequestError, match="top_kk"):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], extra_body={"ragwright": {"top_kk": 1}}
        )
