"""An OpenAI-compatible ``/chat/completions`` client: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio.

Opt-in: nothing is contacted unless a client is built (``load_chat("openai:MODEL")`` or directly).
The base URL and key come from the arguments, else ``RAGWRIGHT_LLM_BASE_URL`` / ``OPENAI_BASE_URL``
and ``RAGWRIGHT_LLM_API_KEY`` / ``OPENAI_API_KEY``; without a base URL the client talks to OpenAI,
which needs a key. Standard library only (``urllib``), retries with backoff on 429/5xx/connection
errors, SSE streaming, and ``response_format`` for JSON replies: ``"json_object"`` (the default,
widest support; the schema is also given to the model in a system message), ``"json_schema"``
(enforced by OpenAI, vLLM and recent Ollama / llama.cpp servers) or ``"none"`` (prompted only). A
server that rejects ``response_format`` with HTTP 400 is asked once more without it, and the client
remembers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from ragwright.errors import ConfigError, GenerationError
from ragwright.models._http import HttpClient, HttpStatusError, first_env, normalise_base_url
from ragwright.models.llms.base import ChatLedger, ChatResponse, Message, Usage, chat_messages

__all__ = ["OPENAI_BASE_URL", "OpenAICompatChat"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
JsonFormat = Literal["json_object", "json_schema", "none"]
_JSON_FORMATS = ("json_object", "json_schema", "none")


class OpenAICompatChat:
    """A :class:`~ragwright.models.llms.base.ChatModel` over an OpenAI-compatible HTTP API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        json_format: JsonFormat = "json_object",
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError.invalid("model", model, "a non-empty model name such as 'gpt-4o-mini' or 'qwen2.5:1.5b'")
        if json_format not in _JSON_FORMATS:
            raise ConfigError.invalid("json_format", json_format, f"one of {', '.join(_JSON_FORMATS)}")
        if not 0.0 <= temperature <= 2.0:
            raise ConfigError.invalid("temperature", temperature, "a number in [0, 2]")
        if max_tokens < 1:
            raise ConfigError.invalid("max_tokens", max_tokens, "a positive integer")
        url = base_url or first_env("RAGWRIGHT_LLM_BASE_URL", "OPENAI_BASE_URL") or OPENAI_BASE_URL
        url = normalise_base_url(url)
        key = api_key or first_env("RAGWRIGHT_LLM_API_KEY", "OPENAI_API_KEY")
        if url == OPENAI_BASE_URL and not key:
            raise ConfigError(
                "the OpenAI API needs a key: set RAGWRIGHT_LLM_API_KEY or OPENAI_API_KEY, or give base_url "
                "(RAGWRIGHT_LLM_BASE_URL) for a local server such as Ollama (http://localhost:11434/v1)"
            )
        self.model = model.strip()
        self.temperature, self.max_tokens = temperature, max_tokens
        self.json_format: JsonFormat = json_format
        self.extra_body = dict(extra_body or {})
        self.http = HttpClient(
            url,
            key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            headers=dict(headers or {}),
            error=GenerationError,
            what="the chat model server",
        )
        self.ledger = ChatLedger()

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def base_url(self) -> str:
        return self.http.base_url

    def __repr__(self) -> str:
        return f"OpenAICompatChat(model={self.model!r}, base_url={self.base_url!r})"

    def _payload(
        self,
        messages: Sequence[Message],
        temperature: float | None,
        max_tokens: int | None,
        stop: Sequence[str] | None,
        json_schema: Mapping[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        msgs = chat_messages(messages, json_schema if self.json_format != "json_schema" else None)
        payload: dict[str, Any] = {
            **self.extra_body,
            "model": self.model,
            "messages": [m.to_dict() for m in msgs],
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
        }
        if stop:
            payload["stop"] = list(stop)
        if stream:
            payload["stream"] = True
        if json_schema is not None and self.json_format == "json_object":
            payload["response_format"] = {"type": "json_object"}
        elif json_schema is not None and self.json_format == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": dict(json_schema)},
            }
        return payload

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> ChatResponse:
        payload = self._payload(messages, temperature, max_tokens, stop, json_schema, stream=False)
        started = time.perf_counter()
        try:
            try:
                data = self.http.post_json("/chat/completions", payload)
            except GenerationError as exc:
                cause = exc.__cause__
                if not ("response_format" in payload and isinstance(cause, HttpStatusError) and cause.status == 400):
                    raise
                # The server does not support response_format: prompt for JSON instead, from now on.
                self.json_format = "none"
                payload = self._payload(messages, temperature, max_tokens, stop, json_schema, stream=False)
                data = self.http.post_json("/chat/completions", payload)
            response = _parse_completion(data, self.model, time.perf_counter() - started)
        except GenerationError:
            self.ledger.record_failure(time.perf_counter() - started)
            raise
        self.ledger.record(response.usage, response.seconds)
        return response

    def chat_with_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        *,
        tool_choice: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> tuple[ChatResponse, tuple[dict[str, Any], ...]]:
        """Native tool calling: *tools* (OpenAI ``tools`` definitions) are offered with the messages
        (``tool_choice`` ``"auto"``/``"none"``/``"required"`` when given); returns the reply and its
        ``tool_calls`` as wire dicts (empty when the model answered in text)."""
        payload = self._payload(messages, temperature, max_tokens, None, None, stream=False)
        if tools:
            payload["tools"] = [dict(t) for t in tools]
            if tool_choice is not None:
                payload["tool_choice"] = tool_choice
        started = time.perf_counter()
        try:
            data = self.http.post_json("/chat/completions", payload)
            response = _parse_completion(data, self.model, time.perf_counter() - started)
            calls = _tool_calls(data)
        except GenerationError:
            self.ledger.record_failure(time.perf_counter() - started)
            raise
        self.ledger.record(response.usage, response.seconds)
        return response, calls

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Iterator[str]:
        payload = self._payload(messages, temperature, max_tokens, stop, None, stream=True)
        return self._stream(payload)

    def _stream(self, payload: dict[str, Any]) -> Iterator[str]:
        started = time.perf_counter()
        usage = Usage()
        try:
            for event in self.http.post_events("/chat/completions", payload):
                if not isinstance(event, dict):
                    continue
                if "error" in event:
                    raise GenerationError(f"the chat model server reported an error mid-stream: {event['error']}")
                if isinstance(event.get("usage"), dict):
                    usage = _usage(event["usage"])
                for choice in event.get("choices") or ():
                    delta = (choice or {}).get("delta") or {}
                    piece = delta.get("content")
                    if isinstance(piece, str) and piece:
                        yield piece
        except GenerationError:
            self.ledger.record_failure(time.perf_counter() - started)
            raise
        self.ledger.record(usage, time.perf_counter() - started)


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    try:
        return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return Usage()


def _tool_calls(data: Any) -> tuple[dict[str, Any], ...]:
    """The ``tool_calls`` of a completion's message, checked: each a function with a name and JSON-text arguments."""
    calls = ((data.get("choices") or [{}])[0].get("message") or {}).get("tool_calls") or []
    out: list[dict[str, Any]] = []
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise GenerationError(f"malformed tool call in the chat completion: {json.dumps(call)[:200]}")
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        out.append(
            {
                "id": str(call.get("id") or f"call_{len(out)}"),
                "type": "function",
                "function": {"name": function["name"], "arguments": text},
            }
        )
    return tuple(out)


def _parse_completion(data: Any, model: str, seconds: float) -> ChatResponse:
    """A :class:`ChatResponse` from a ``/chat/completions`` answer; malformed answers raise GenerationError."""
    if isinstance(data, dict) and "error" in data:
        raise GenerationError(f"the chat model server reported an error: {data['error']}")
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise GenerationError(f"unexpected chat completion answer: {json.dumps(data)[:300]}") from exc
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise GenerationError(f"the chat completion content is not text: {text!r:.200}")
    return ChatResponse(
        text=text,
        usage=_usage(data.get("usage")),
        model=str(data.get("model") or model),
        seconds=seconds,
        finish_reason=choice.get("finish_reason"),
    )
