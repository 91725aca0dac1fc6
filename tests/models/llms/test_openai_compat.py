"""OpenAICompatChat against a scripted local HTTP server (no network)."""

from __future__ import annotations

import pytest

from ragwright.errors import ConfigError, GenerationError
from ragwright.models.llms import Message, OpenAICompatChat, Usage, parse_json
from tests.models.fake_http import FakeServer, Reply


def completion(text: str, prompt: int = 3, completion: int = 2) -> dict[str, object]:
    return {
        "model": "served-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def client(server: FakeServer, **kwargs: object) -> OpenAICompatChat:
    options: dict[str, object] = {"base_url": server.url + "/v1", "api_key": "sk-test", "backoff": 0.0}
    options.update(kwargs)
    return OpenAICompatChat("my-model", **options)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RAGWRIGHT_LLM_BASE_URL", "RAGWRIGHT_LLM_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_chat_success_sends_the_openai_request(fake_server: FakeServer) -> None:
    fake_server.script(Reply(body=completion("Hello there")))
    chat = client(fake_server, temperature=0.2, max_tokens=64)
    reply = chat.chat([Message("system", "be brief"), Message("user", "hi")], stop=["\n\n"])
    assert reply.text == "Hello there"
    assert reply.usage == Usage(3, 2)
    assert reply.model == "served-model" and reply.finish_reason == "stop"
    assert reply.seconds > 0
    seen = fake_server.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body["model"] == "my-model"
    assert seen.body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert seen.body["temperature"] == 0.2 and seen.body["max_tokens"] == 64 and seen.body["stop"] == ["\n\n"]
    assert "response_format" not in seen.body
    assert chat.ledger.snapshot()["llm_calls"] == 1 and chat.ledger.usage == Usage(3, 2)


def test_env_configures_base_url_and_key(fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_LLM_BASE_URL", fake_server.url + "/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    fake_server.script(Reply(body=completion("ok")))
    chat = OpenAICompatChat("m", backoff=0.0)
    assert chat.base_url == fake_server.url + "/v1"
    assert chat.chat([Message("user", "x")]).text == "ok"
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_openai_without_a_key_is_refused_before_any_request() -> None:
    with pytest.raises(ConfigError, match="needs a key"):
        OpenAICompatChat("gpt-4o-mini")
    with pytest.raises(ConfigError, match="base_url"):
        OpenAICompatChat("m", base_url="localhost:11434")


def test_json_mode_object_and_schema(fake_server: FakeServer) -> None:
    schema = {"type": "object", "properties": {"intent": {"type": "string"}}, "required": ["intent"]}
    fake_server.script(Reply(body=completion('{"intent": "lookup"}')))
    chat = client(fake_server)
    reply = chat.chat([Message("user", "classify")], json_schema=schema)
    assert parse_json(reply.text) == {"intent": "lookup"}
    body = fake_server.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["role"] == "system" and '"intent"' in body["messages"][0]["content"]

    strict = client(fake_server, json_format="json_schema")
    strict.chat([Message("system", "sys"), Message("user", "classify")], json_schema=schema)
    body = fake_server.requests[1].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == schema
    assert body["messages"][0] == {"role": "system", "content": "sys"}  # enforced, not prompted


def test_server_rejecting_response_format_is_asked_again_without_it(fake_server: FakeServer) -> None:
    fake_server.script(Reply(400, {"error": "response_format not supported"}), Reply(body=completion("{}")))
    chat = client(fake_server)
    assert chat.chat([Message("user", "x")], json_schema={"type": "object"}).text == "{}"
    assert "response_format" in fake_server.requests[0].body
    assert "response_format" not in fake_server.requests[1].body
    assert chat.json_format == "none"


def test_streaming_sse(fake_server: FakeServer) -> None:
    events = [
        {"choices": [{"delta": {"role": "assistant"}}]},
        {"choices": [{"delta": {"content": "Hel"}}]},
        {"choices": [{"delta": {"content": "lo"}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 4, "completion_tokens": 2}},
        "[DONE]",
    ]
    fake_server.script(Reply(events=events))
    chat = client(fake_server)
    assert list(chat.stream([Message("user", "hi")])) == ["Hel", "lo"]
    assert fake_server.requests[0].body["stream"] is True
    assert chat.ledger.usage == Usage(4, 2)


def test_retries_after_500_and_429_then_succeeds(fake_server: FakeServer) -> None:
    fake_server.script(
        Reply(500, {"error": "overloaded"}),
        Reply(429, {"error": "slow down"}, headers={"Retry-After": "0"}),
        Reply(body=completion("finally")),
    )
    assert client(fake_server, max_retries=3).chat([Message("user", "x")]).text == "finally"
    assert len(fake_server.requests) == 3


def test_error_after_retries_exhausted(fake_server: FakeServer) -> None:
    fake_server.script(Reply(503, {"error": "down"}))
    chat = client(fake_server, max_retries=2)
    with pytest.raises(GenerationError, match=r"HTTP 503 after 3 attempts"):
        chat.chat([Message("user", "x")])
    assert len(fake_server.requests) == 3
    assert chat.ledger.failures == 1


def test_client_errors_are_not_retried_and_name_the_key(fake_server: FakeServer) -> None:
    fake_server.script(Reply(401, {"error": "bad key"}))
    with pytest.raises(GenerationError, match="API key"):
        client(fake_server).chat([Message("user", "x")])
    assert len(fake_server.requests) == 1


def test_connection_refused_is_retried_then_reported() -> None:
    chat = OpenAICompatChat("m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff=0.0, timeout=2)
    with pytest.raises(GenerationError, match="cannot reach"):
        chat.chat([Message("user", "x")])


@pytest.mark.parametrize("body", [{"choices": []}, {"nothing": 1}, {"error": {"message": "model not found"}}])
def test_malformed_answers_raise(fake_server: FakeServer, body: object) -> None:
    fake_server.script(Reply(body=body))
    with pytest.raises(GenerationError):
        client(fake_server).chat([Message("user", "x")])
