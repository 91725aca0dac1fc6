"""Native (OpenAI-compatible) tool calling: the client's ``chat_with_tools`` and the loop over it,
against a scripted local HTTP server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ragwright.agent import AgentLoop, AgentOptions, ToolChatModel
from ragwright.errors import ConfigError, GenerationError
from ragwright.models.llms import Message, OpenAICompatChat
from ragwright.rag import Rag
from ragwright.rag_agent import enable_agent
from ragwright.testing.doubles import ScriptedChat
from tests.agent.conftest import ACME
from tests.models.fake_http import FakeServer, Reply, serve


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    for name in ("RAGWRIGHT_LLM_BASE_URL", "RAGWRIGHT_LLM_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield from serve()


def client(server: FakeServer) -> OpenAICompatChat:
    return OpenAICompatChat("tool-model", base_url=server.url + "/v1", api_key="sk-test", backoff=0.0)


def calls_reply(*calls: tuple[str, dict[str, Any]]) -> Reply:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return Reply(body={"choices": [{"message": message, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 9}})


def text_reply(text: str) -> Reply:
    message = {"role": "assistant", "content": text}
    return Reply(body={"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"completion_tokens": 5}})


def test_chat_with_tools_sends_tools_and_reads_tool_calls(server: FakeServer) -> None:
    server.script(calls_reply(("search", {"query": "x"})))
    chat = client(server)
    assert isinstance(chat, ToolChatModel)
    spec = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    reply, calls = chat.chat_with_tools([Message("user", "hi")], spec, tool_choice="auto", max_tokens=32)
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    assert calls == (
        {"id": "call_0", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}},
    )
    body = server.requests[0].body
    assert body["tools"] == spec and body["tool_choice"] == "auto" and body["max_tokens"] == 32
    assert chat.ledger.snapshot()["llm_calls"] == 1


def test_malformed_tool_calls_raise(server: FakeServer) -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}
    server.script(Reply(body={"choices": [{"message": message}]}))
    with pytest.raises(GenerationError, match="malformed tool call"):
        client(server).chat_with_tools([Message("user", "hi")], [])


def test_the_loop_over_native_tool_calls(server: FakeServer, rag: Rag) -> None:
    server.script(
        calls_reply(("search", {"query": "director of Big Stone Gap", "tenant": "globex"})),
        calls_reply(("search", {"query": "Adriana Trigiani lives"}), ("calculate", {"expression": "2014 - 1960"})),
        text_reply("Adriana Trigiani lives in Greenwich Village [Source 2]."),
    )
    response = enable_agent(rag, AgentOptions(first_search=False), llm=client(server)).ask(
        "Where does the director of Big Stone Gap live?", identity=ACME
    )
    assert not response.declined and response.citations and "Greenwich Village" in response.answer
    assert [s["tool"] for s in response.trajectory] == ["search", "search", "calculate"]
    assert response.trajectory[0]["ignored_arguments"] == ["tenant"]
    first, second, third = (r.body for r in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["search", "fetch", "calculate"]
    assert "response_format" not in first
    # the tool results go back as role=tool messages answering each call id
    tool_messages = [m for m in third["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_0", "call_1"]
    assert "2014 - 1960 = 54" in tool_messages[-1]["content"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "search"


def test_native_mode_needs_a_tool_calling_model(rag: Rag) -> None:
    with pytest.raises(ConfigError, match="tool calling"):
        AgentLoop(ScriptedChat(), enable_agent(rag).tools_for(ACME), AgentOptions(tool_mode="native"))
    assert not AgentLoop(ScriptedChat(), enable_agent(rag).tools_for(ACME)).native  # auto: JSON actions


def test_json_mode_can_be_forced_on_a_tool_calling_model(server: FakeServer, rag: Rag) -> None:
    loop = AgentLoop(client(server), enable_agent(rag).tools_for(ACME), AgentOptions(tool_mode="json"))
    assert not loop.native


def test_a_native_answer_before_any_source_is_sent_back_as_a_user_turn(server: FakeServer, rag: Rag) -> None:
    server.script(
        text_reply("Paris."),
        calls_reply(("search", {"query": "Big Stone Gap film"})),
        text_reply("It is a comedy film [Source 1]."),
    )
    opts = AgentOptions(first_search=False)
    response = enable_agent(rag, opts, llm=client(server)).ask("What is Big Stone Gap?", identity=ACME)
    assert not response.declined and response.citations
    second = server.requests[1].body["messages"]
    assert second[-2:] == [
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "You have not found any source yet. Search first."},
    ]
