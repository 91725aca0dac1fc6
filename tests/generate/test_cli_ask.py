"""``ragwright ask`` with a chat model: streamed answer, sources with scores, --show-prompt, --json."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ragwright.models.llms as llms
from ragwright.cli import main
from ragwright.generate.prompt import DEFAULT_SYSTEM_PROMPT
from ragwright.testing.doubles import ScriptedChat

REPLY = "Refunds are possible within 30 days of delivery [Source 1]."


@pytest.fixture
def store(tmp_path: Path) -> str:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nCustomers may request a refund within 30 days of delivery.\n")
    (docs / "security.md").write_text("# Security\n\nCustomer data at rest is encrypted with AES-256 keys.\n")
    path = str(tmp_path / "store.db")
    result = CliRunner().invoke(main, ["--store", path, "--embedder", "wordllama", "ingest", str(docs)])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> ScriptedChat:
    scripted = ScriptedChat(lambda messages: REPLY, name="test/scripted")
    specs: list[Any] = []

    def fake_load_chat(spec: Any, **options: Any) -> ScriptedChat | None:
        specs.append(spec)
        return None if spec in (None, "none") else scripted

    monkeypatch.setattr(llms, "load_chat", fake_load_chat)
    scripted.specs = specs  # type: ignore[attr-defined]
    return scripted


def ask(store: str, *args: str, env: dict[str, str] | None = None) -> Any:
    result = CliRunner().invoke(
        main, ["--store", store, "--embedder", "wordllama", *args], env=env, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output + result.stderr
    return result


def test_ask_streams_the_answer_then_lists_sources_with_scores(store: str, chat: ScriptedChat) -> None:
    out = ask(store, "--llm", "local", "ask", "How long do I have to ask for a refund?").stdout
    assert out.startswith(REPLY + "\n")
    assert "sources:" in out and " *[Source 1] " in out and "refunds.md" in out
    assert chat.calls[0].stream  # the answer was streamed from the model
    assert chat.specs == ["local"]  # type: ignore[attr-defined]


def test_llm_from_the_environment(store: str, chat: ScriptedChat) -> None:
    ask(store, "ask", "refund window?", env={"RAGWRIGHT_LLM": "local:0.5b"})
    assert chat.specs == ["local:0.5b"] and chat.calls  # type: ignore[attr-defined]


def test_show_prompt_prints_the_exact_messages_before_the_answer(store: str, chat: ScriptedChat) -> None:
    out = ask(store, "--llm", "local", "ask", "--show-prompt", "refund window?").stdout
    prompt, _, answer = out.partition("--- answer ---\n")
    assert prompt.startswith("--- prompt ---\n[system]\n" + DEFAULT_SYSTEM_PROMPT)
    assert "[user]\nContext:\n[Source 1]\n" in prompt and prompt.rstrip().endswith("Question: refund window?")
    assert answer.startswith(REPLY)


def test_json_prints_the_full_response_and_the_prompts(store: str, chat: ScriptedChat) -> None:
    payload = json.loads(ask(store, "--json", "--llm", "local", "ask", "--show-prompt", "refund window?").stdout)
    assert payload["answer"] == REPLY and payload["mode"] == "llm" and payload["model"] == "test/scripted"
    assert payload["citations"][0]["source"] == 1 and payload["citations"][0]["document_id"].endswith("refunds.md")
    assert {"decline_reason", "invalid_citations", "uncited", "usage", "timings", "retrieval_path"} <= set(payload)
    assert payload["usage"]["llm_calls"] == 1 and payload["retrieval_path"].startswith("dense+bm25")
    (prompt,) = payload["prompts"]
    assert [m["role"] for m in prompt] == ["system", "user"] and prompt[1]["content"].startswith("Context:\n")
    assert not chat.calls[0].stream  # --json answers in one call


def test_without_llm_the_answer_is_extractive(store: str, chat: ScriptedChat) -> None:
    result = ask(store, "ask", "--show-prompt", "Customers may request a refund within 30 days of delivery?")
    assert "(extractive answer: no model prompt" in result.stdout and chat.calls == []


def test_decline_is_shown(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llms, "load_chat", lambda spec, **kw: ScriptedChat(lambda m: "I don't know."))
    out = ask(store, "--llm", "local", "ask", "What is the refund window on Mars?").stdout
    assert "(declined: model_insufficient_context)" in out
    # Nothing retrieved at all (no keyword in the documents, no positive cosine): declined before the model.
    out = ask(store, "--llm", "local", "ask", "What is the boiling point on Mars?").stdout
    assert "(declined: no_sources)" in out
