"""The chat seam: messages in, text (or validated JSON) out, optionally streamed.

Every LLM backend (local llama.cpp, OpenAI-compatible HTTP, the scripted test double) implements
:class:`ChatModel`. Callers never depend on a backend: query transforms, answer generation,
rerankers and strategies take a ``ChatModel``.

``chat`` is synchronous (run it in a thread from async code); backends that are not thread-safe
serialise calls themselves. Failures raise :class:`~ragwright.errors.GenerationError`; callers of
optional stages catch it and degrade as the seeds say.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from ragwright.errors import GenerationError

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. ``tool_calls`` (assistant) and ``tool_call_id`` (tool) carry tool-result turns."""

    role: Role
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"message role {self.role!r} is invalid: one of {', '.join(ROLES)}")
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be a string, got {type(self.content).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI wire shape."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            out["name"] = self.name
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.tool_calls:
            out["tool_calls"] = [dict(c) for c in self.tool_calls]
        return out

    @classmethod
    def coerce(cls, value: Message | Mapping[str, Any]) -> Message:
        """A :class:`Message` from itself or an OpenAI-style dict (``role``, ``content`` …)."""
        if isinstance(value, Message):
            return value
        if isinstance(value, Mapping) and "role" in value:
            return cls(
                role=value["role"],
                content=value.get("content") or "",
                name=value.get("name"),
                tool_call_id=value.get("tool_call_id"),
                tool_calls=tuple(value.get("tool_calls") or ()),
            )
        raise TypeError(f"not a chat message: {value!r:.120}; give a Message or a dict with 'role' and 'content'")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call (0 when the backend does not report them)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """What one chat call returned, with its cost."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    seconds: float = 0.0
    finish_reason: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion backend.

    ``json_schema`` asks for a JSON reply (backends that support grammar/structured output enforce it;
    the others are prompted) — callers still validate with :func:`parse_json`.
    """

    @property
    def name(self) -> str: ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> ChatResponse: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Iterator[str]: ...


@runtime_checkable
class YesNoScorer(Protocol):
    """A backend that can read next-token probabilities without decoding (pointwise LLM reranking).

    ``yes_probabilities`` runs one forward pass per prompt (the full, already formatted prompt text)
    and returns P(yes) / (P(yes) + P(no)) for the next token. ``format_chat`` renders messages with
    the model's chat template (generation prompt appended); ``count_tokens``/``truncate`` work in the
    model's own tokens.
    """

    @property
    def name(self) -> str: ...

    def format_chat(self, messages: Sequence[Message]) -> str: ...

    def count_tokens(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...

    def yes_probabilities(self, prompts: Sequence[str]) -> list[float]: ...


class ChatLedger:
    """Running totals of a backend's calls: count, failures, token usage and seconds (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.usage = Usage()
        self.seconds = 0.0

    def record(self, usage: Usage, seconds: float) -> None:
        with self._lock:
            self.calls += 1
            self.usage = self.usage + usage
            self.seconds += seconds

    def record_failure(self, seconds: float) -> None:
        with self._lock:
            self.calls += 1
            self.failures += 1
            self.seconds += seconds

    def snapshot(self) -> dict[str, float | int]:
        """A plain dict for reports and run ledgers."""
        with self._lock:
            return {
                "llm_calls": self.calls,
                "llm_failures": self.failures,
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "llm_seconds": round(self.seconds, 3),
            }


T = TypeVar("T")

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_json(text: str, validate: Callable[[Any], T] | None = None) -> T | Any:
    """The JSON value in a model reply (bare, fenced, or the first ``{…}``/``[…]`` span), validated.

    *validate* receives the decoded value and returns the accepted (possibly normalised) value or
    raises ``ValueError``/``TypeError``/``KeyError``. Anything unusable raises :class:`GenerationError`.
    """
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if validate is None:
            return value
        try:
            return validate(value)
        except (ValueError, TypeError, KeyError) as exc:
            raise GenerationError(f"the model's JSON reply was rejected: {exc}") from exc
    raise GenerationError(f"the model did not reply with JSON: {text.strip()[:200]!r}")


def json_instruction(schema: Mapping[str, Any]) -> str:
    """The system-message line that asks for JSON matching *schema* (for backends that cannot enforce it)."""
    return "Reply with a single JSON value only, no prose, matching this JSON schema: " + json.dumps(
        schema, separators=(",", ":")
    )


def with_json_instruction(messages: Sequence[Message], schema: Mapping[str, Any]) -> list[Message]:
    """*messages* with the JSON instruction appended to the first system message (or a new one first)."""
    note = json_instruction(schema)
    out = list(messages)
    for i, m in enumerate(out):
        if m.role == "system":
            out[i] = Message("system", f"{m.content}\n\n{note}" if m.content else note)
            return out
    return [Message("system", note), *out]


def as_messages(messages: Sequence[Message | Mapping[str, Any]]) -> list[Message]:
    return [Message.coerce(m) for m in messages]


def chat_messages(messages: Sequence[Message], json_schema: Mapping[str, Any] | None = None) -> list[Message]:
    """The messages of a chat call, coerced; with the JSON instruction when *json_schema* is given.

    Backends pass *json_schema* only when the prompt must ask for JSON (the server cannot enforce the
    schema alone). An empty list raises :class:`GenerationError`.
    """
    msgs = as_messages(messages)
    if not msgs:
        raise GenerationError("a chat call needs at least one message")
    return msgs if json_schema is None else with_json_instruction(msgs, json_schema)
