"""An OpenAI-compatible ``/v1/chat/completions`` (and ``/v1/models``), so existing chat front-ends and the
``openai`` client can ask ragwright.

The last user message is the question; the earlier turns are the conversation history (they condense
follow-up questions and go to the chat model as the earlier turns, before the question). The answer carries its
``[Source N]`` citations, followed by a "Sources:" list naming each cited document; the structured
citations and sources are also in the response's ``ragwright`` field (ignored by clients that do not
know it). ``stream: true`` sends OpenAI's server-sent ``chat.completion.chunk`` events and ``data: [DONE]``.

The caller's identity comes from the API key (``Authorization: Bearer KEY``, which the ``openai`` client
sends as its ``api_key``), never from the body: OpenAI's ``user`` field is accepted and ignored. An
optional ``ragwright`` object in the body carries :class:`~ragwright.options.RagOptions` fields
(``{"ragwright": {"top_k": 3}}``, e.g. through the client's ``extra_body``), validated like ``/ask``'s options.

FastAPI reads the endpoints' annotations when they are registered: no postponed annotations here.
"""

import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError
from ragwright.rag_memory import RememberingEvents, abudget_chat, aremember_chat
from ragwright.server.service import Service

if TYPE_CHECKING:
    from fastapi import FastAPI

MODEL_ID = "ragwright"
ROLES = ("system", "user", "assistant", "tool", "developer")


def is_openai_path(path: str) -> bool:
    return path.startswith("/v1/")


def error_body(status: int, message: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    """An error in OpenAI's shape (its clients read ``error.message``), keeping ragwright's extra fields."""
    kind = {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}
    default = "invalid_request_error" if status < 500 else "server_error"
    code = extra.get("field")
    return {"error": {"message": message, "type": kind.get(status, default), "param": code, "code": None, **extra}}


def _text(content: Any, where: str) -> str:
    """A message's text: a string, or OpenAI content parts (the text parts joined; images refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, Mapping) and part.get("type") in ("image_url", "input_audio", "file"):
                raise ConfigError(f"{where}: only text content is supported, not {part.get('type')!r}")
            else:
                raise ConfigError(f"{where}: a content part must be {{'type': 'text', 'text': '…'}}")
        return "\n".join(texts)
    raise ConfigError(f"{where}: content must be a string or a list of text parts")


def question_and_history(messages: Any) -> tuple[str, list[dict[str, str]]]:
    """The last user message (the question) and the turns before it (the history, system turns included)."""
    if not isinstance(messages, list) or not messages:
        raise ConfigError("'messages' must be a non-empty list of {role, content} messages")
    turns: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ConfigError(f"messages[{i}] must be an object with 'role' and 'content'")
        role = message.get("role")
        if role not in ROLES:
            raise ConfigError(f"messages[{i}].role={role!r} is invalid: one of {', '.join(ROLES)}")
        text = _text(message.get("content"), f"messages[{i}]")
        turns.append({"role": "system" if role == "developer" else str(role), "content": text})
    last = max((i for i, t in enumerate(turns) if t["role"] == "user"), default=None)
    if last is None or not turns[last]["content"].strip():
        raise ConfigError("the conversation needs a user message with the question (the last user message is asked)")
    history = [t for t in turns[:last] if t["role"] in ("system", "user", "assistant") and t["content"].strip()]
    return turns[last]["content"], history


def rag_options(body: Mapping[str, Any], history: list[dict[str, str]]) -> dict[str, Any]:
    """The ``/ask`` options of a chat completion request: its ``ragwright`` object, the history, and
    OpenAI's ``temperature`` / ``max_tokens`` / ``max_completion_tokens``."""
    extra = body.get("ragwright") or {}
    if not isinstance(extra, Mapping):
        raise ConfigError("'ragwright' must be an object of RagOptions fields, e.g. {\"top_k\": 3}")
    options: dict[str, Any] = dict(extra)
    if history:
        options["conversation_history"] = history
    if body.get("temperature") is not None:
        options["temperature"] = body["temperature"]
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None:
        options["max_answer_tokens"] = limit
    if body.get("n") not in (None, 1):
        raise ConfigError.invalid("n", body.get("n"), "1 (one answer per request)")
    return options


def sources_footer(
    citations: list[Mapping[str, Any]],
    documents: Mapping[str, Mapping[str, Any]],
    sources: list[Mapping[str, Any]] | None = None,
) -> str:
    """ "Sources:" and one line per cited source: ``[Source N] title (document id)``, with " — from a
    scanned page (OCR)" when the source's text was read by OCR (``scanned`` in *sources*)."""
    scanned = {n for n, s in enumerate(sources or [], start=1) if s.get("scanned") is True}
    lines, seen = [], set()
    for c in sorted(citations, key=lambda c: int(c["source"])):
        if c["source"] in seen:
            continue
        seen.add(c["source"])
        doc = c["document_id"]
        title = (documents.get(doc) or {}).get("title")
        note = " — from a scanned page (OCR)" if int(c["source"]) in scanned else ""
        lines.append((f"[Source {c['source']}] {title} ({doc})" if title else f"[Source {c['source']}] {doc}") + note)
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""


def _usage(usage: Mapping[str, Any]) -> dict[str, int]:
    prompt = int(usage.get("prompt_tokens", 0) or 0)
    completion = int(usage.get("completion_tokens", 0) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion(answer: Mapping[str, Any], model: str, completion_id: str, created: int) -> dict[str, Any]:
    """A ``chat.completion`` object from an ``/ask`` answer (with its ``documents``)."""
    footer = (
        ""
        if answer["declined"]
        else sources_footer(answer["citations"], answer.get("documents", {}), answer.get("sources"))
    )
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer["answer"] + footer},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(answer.get("usage", {})),
        "ragwright": _extension(answer),
    }


def _extension(answer: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "declined": answer["declined"],
        "decline_reason": answer.get("decline_reason"),
        "citations": answer["citations"],
        "sources": [
            {
                k: s.get(k)
                for k in ("source", "chunk_id", "document_id", "score", "text", "section_path", "page", "scanned")
            }
            for s in answer.get("sources", [])
        ],
        "documents": answer.get("documents", {}),
    }


def _sse(data: Mapping[str, Any]) -> bytes:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _chunk(completion_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


async def stream_chunks(
    events: Any, model: str, completion_id: str, created: int, include_usage: bool
) -> AsyncIterator[bytes]:
    """OpenAI's streaming format from the ``/ask`` events: a role delta, content deltas, the sources
    footer, a final chunk with ``finish_reason`` (and the ``ragwright`` extension), then ``[DONE]``."""
    yield _sse(_chunk(completion_id, created, model, {"role": "assistant", "content": ""}, None))
    documents: Mapping[str, Any] = {}
    citations: dict[str, Any] = {}
    try:
        async for event, data in events:
            if event == "token":
                yield _sse(_chunk(completion_id, created, model, {"content": data}, None))
            elif event == "sources":
                documents = data.get("documents", {})
                citations["sources"] = data.get("sources", [])
            elif event == "citations":
                citations.update(data)
            elif event == "done":
                answer = {**data, **citations, "documents": documents}
                footer = (
                    ""
                    if answer["declined"]
                    else sources_footer(answer.get("citations", []), documents, answer.get("sources"))
                )
                if footer:
                    yield _sse(_chunk(completion_id, created, model, {"content": footer}, None))
                yield _sse({**_chunk(completion_id, created, model, {}, "stop"), "ragwright": _extension(answer)})
                if include_usage:
                    usage = _chunk(completion_id, created, model, {}, None)
                    yield _sse({**usage, "choices": [], "usage": _usage(data.get("usage", {}))})
            elif event == "error":
                yield _sse({"error": {"message": data.get("error", "the answer failed"), "type": "server_error"}})
        yield b"data: [DONE]\n\n"
    finally:
        await events.release()


def add_routes(app: "FastAPI", service: Service, get_caller: Any) -> None:
    """Register ``POST /v1/chat/completions`` and ``GET /v1/models`` on the FastAPI *app*."""
    from typing import Annotated

    from fastapi import Depends, Request
    from fastapi.responses import StreamingResponse

    from ragwright.server.auth import Caller

    @app.get("/v1/models", tags=["openai"])
    async def models(caller: Annotated[Caller, Depends(get_caller)]) -> dict[str, Any]:
        """The one model this server answers as (OpenAI's model list)."""
        return {
            "object": "list",
            "data": [{"id": MODEL_ID, "object": "model", "created": int(service.started), "owned_by": "ragwright"}],
        }

    @app.post(
        "/v1/chat/completions",
        tags=["openai"],
        responses={200: {"content": {"text/event-stream": {}}, "description": "chat.completion, or SSE chunks"}},
    )
    async def chat_completions(request: Request, caller: Annotated[Caller, Depends(get_caller)]) -> Any:
        """OpenAI's chat completions: the last user message is asked, the earlier turns are its history;
        the answer cites its sources (``[Source N]`` and a Sources list). ``stream: true`` → SSE chunks."""
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError as exc:
            raise ConfigError(f"the request body is not valid JSON: {exc}") from None
        if not isinstance(body, Mapping):
            raise ConfigError("send a JSON object with 'model' and 'messages'")
        question, history = question_and_history(body.get("messages"))
        if len(question) > service.limits.max_query_chars:
            raise ConfigError.invalid(
                "messages", "…", f"a last user message of at most {service.limits.max_query_chars} characters"
            )
        options = rag_options(body, history)
        # conversation memory: the history fitted to [memory] budget_tokens (oldest turns summarised or
        # dropped); a named caller's persistent memory recalled and, once answered, the turn remembered
        named = not caller.anonymous and caller.identity.user is not None
        fitted = await abudget_chat(
            service.rag, caller.identity, question, history, named=named, system_prompt=options.get("system_prompt")
        )
        options.pop("conversation_history", None)
        if fitted.history:
            options["conversation_history"] = fitted.history
        model = str(body.get("model") or MODEL_ID)
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if not body.get("stream"):
            answer = await service.ask(caller, question, options)
            await aremember_chat(service.rag, caller.identity, question, answer, named=named)
            return completion(answer, model, completion_id, created)
        stream_options = body.get("stream_options") or {}
        include_usage = bool(isinstance(stream_options, Mapping) and stream_options.get("include_usage"))
        events: Any = await service.ask_events(caller, question, options)
        if named:  # the streamed turn is remembered once done
            events = RememberingEvents(events, service.rag, caller.identity, question, named=named)
        return StreamingResponse(
            stream_chunks(events, model, completion_id, created, include_usage),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
