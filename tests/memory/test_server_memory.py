"""The OpenAI-compatible chat endpoint budgets the message list it receives through conversation
memory, and keeps a persistent memory per named API key (never for another key or anonymous callers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from ragwright import Rag, RagOptions
from ragwright.chunk.tokens import count_tokens
from ragwright.memory import MESSAGE_OVERHEAD, MemoryOptions, PersistentMemoryOptions
from ragwright.memory.recall import RECALL_PREFIX
from ragwright.models.llms.base import Message
from ragwright.rag_memory import enable_memory
from ragwright.server import create_app, hash_key
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

REFUNDS = b"# Refunds\n\n## Policy\n\nCustomers may request a refund within 30 days of delivery.\n"
QUESTION = "How many days do customers have to request a refund?"
ANN_KEY, BOB_KEY = "ann-key-0123456789abcdef", "bob-key-0123456789abcdef"


def make_rag(llm: ScriptedChat, memory: MemoryOptions) -> Rag:
    rag = Rag(
        MemoryStore(),
        HashingEmbedder(),
        rag_options=RagOptions(use_hybrid_search=True, answerability="off"),
        llm=llm,
    )
    rag.ingest(BytesSource({"refunds.md": REFUNDS}), tenant="default")
    enable_memory(rag, memory)
    return rag


def client(rag: Rag, tmp_path: Path, keys: list[dict[str, Any]] | None = None) -> TestClient:
    config: dict[str, Any] = {"staging_dir": str(tmp_path / "staging")}
    if keys:
        config["keys"] = keys
    return TestClient(create_app(rag, config))


def ask(http: TestClient, messages: list[dict[str, str]], key: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    reply = http.post("/v1/chat/completions", json={"model": "m", "messages": messages}, headers=headers)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def answer_call(llm: ScriptedChat) -> list[Message]:
    return [c for c in llm.calls if c.last_user.startswith("Context:") or QUESTION in c.last_user][-1].messages


def test_a_long_message_list_is_budgeted_newest_turns_kept(tmp_path: Path) -> None:
    llm = ScriptedChat(default="Customers have 30 days [Source 1].")
    rag = make_rag(llm, MemoryOptions(budget_tokens=400, summarize="off"))
    messages = [{"role": "system", "content": "Answer briefly."}]
    for i in range(40):
        messages.append({"role": "user", "content": f"Earlier question {i} about my order number {i}?"})
        messages.append({"role": "assistant", "content": f"Earlier answer {i}: your order {i} shipped. " * 3})
    messages.append({"role": "user", "content": QUESTION})
    body = ask(client(rag, tmp_path), messages)
    assert "30 days" in body["choices"][0]["message"]["content"]
    sent = answer_call(llm)
    contents = [m.content for m in sent]
    assert sent[0].content == "Answer briefly."  # the caller's system message is never dropped
    assert "Earlier question 39 about my order number 39?" in contents  # the newest turn is kept
    assert "Earlier question 0 about my order number 0?" not in contents  # the oldest went
    history = [m for m in sent[1:-1] if m.role in ("user", "assistant")]
    assert 0 < len(history) < 80
    system_prompt = sent[1].content
    fixed = (
        count_tokens("Answer briefly.") + count_tokens(system_prompt) + count_tokens(QUESTION) + 3 * MESSAGE_OVERHEAD
    )
    assert fixed + sum(count_tokens(m.content) + MESSAGE_OVERHEAD for m in history) <= 400


def test_the_dropped_turns_are_summarised_by_the_model(tmp_path: Path) -> None:
    def reply(messages: list[Message]) -> str:
        if messages[0].content.startswith("You keep the memory"):
            return "The user asked about several orders."
        return "Customers have 30 days [Source 1]."

    llm = ScriptedChat(reply)
    rag = make_rag(llm, MemoryOptions(budget_tokens=400, summary_max_tokens=64))
    messages = []
    for i in range(20):
        messages.append({"role": "user", "content": f"Earlier question {i} about my order?"})
        messages.append({"role": "assistant", "content": "It shipped. " * 10})
    ask(client(rag, tmp_path), [*messages, {"role": "user", "content": QUESTION}])
    sent = answer_call(llm)
    assert sent[0].content == "Summary of the earlier conversation: The user asked about several orders."


def test_persistent_memory_per_named_key_only(tmp_path: Path) -> None:
    llm = ScriptedChat(default="Customers have 30 days to request a refund [Source 1].")
    rag = make_rag(llm, MemoryOptions(persistent=PersistentMemoryOptions(min_score=0.1)))
    keys = [
        {"hash": hash_key(ANN_KEY), "tenant": "default", "name": "ann"},
        {"hash": hash_key(BOB_KEY), "tenant": "default", "name": "bob"},
    ]
    http = client(rag, tmp_path, keys)
    ask(http, [{"role": "user", "content": QUESTION}], ANN_KEY)
    assert not answer_call(llm)[0].content.startswith(RECALL_PREFIX)  # nothing to recall yet
    ask(http, [{"role": "user", "content": "Remind me: how many days for a refund request?"}], ANN_KEY)
    recalled = llm.calls[-1].messages[0]
    assert recalled.role == "system" and recalled.content.startswith(RECALL_PREFIX) and "30 days" in recalled.content
    ask(http, [{"role": "user", "content": "Remind me: how many days for a refund request?"}], BOB_KEY)
    assert not llm.calls[-1].messages[0].content.startswith(RECALL_PREFIX)  # ann's memory never reaches bob
    assert rag.memory is not None
    from ragwright.model.identity import Identity

    assert len(rag.memory.items(identity=Identity("default", user="ann"))) == 2
    assert len(rag.memory.items(identity=Identity("default", user="bob"))) == 1


def test_anonymous_callers_get_no_persistent_memory(tmp_path: Path) -> None:
    llm = ScriptedChat(default="Customers have 30 days to request a refund [Source 1].")
    rag = make_rag(llm, MemoryOptions(persistent=PersistentMemoryOptions()))
    http = client(rag, tmp_path)
    ask(http, [{"role": "user", "content": QUESTION}])
    ask(http, [{"role": "user", "content": QUESTION}])
    assert not llm.calls[-1].messages[0].content.startswith(RECALL_PREFIX)
    assert rag.memory is not None
    from ragwright.model.identity import Identity

    assert rag.memory.items(identity=Identity()) == []


def test_a_streamed_answer_is_remembered_too(tmp_path: Path) -> None:
    llm = ScriptedChat(default="Customers have 30 days to request a refund [Source 1].")
    rag = make_rag(llm, MemoryOptions(persistent=PersistentMemoryOptions()))
    http = client(rag, tmp_path, [{"hash": hash_key(ANN_KEY), "tenant": "default", "name": "ann"}])
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}], "stream": True}
    with http.stream("POST", "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {ANN_KEY}"}) as r:
        text = "".join(r.iter_text())
    assert "30 days" in text and text.rstrip().endswith("data: [DONE]")
    from ragwright.model.identity import Identity

    assert rag.memory is not None
    (item,) = rag.memory.items(identity=Identity("default", user="ann"))
    assert item.kind == "turn" and "30 days" in item.text and item.sources
