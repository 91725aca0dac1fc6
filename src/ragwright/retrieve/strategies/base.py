"""What the strategy decorators share: the retriever shape they wrap and a chat helper.

Every strategy is a decorator around a retriever-like object — anything with
``async retrieve(query, options, identity) -> list[SearchResult]`` — and is one itself, so they
stack (see :func:`ragwright.retrieve.strategies.compose.build_retriever`). The caller's identity is
passed down unchanged: a strategy can narrow a search, never widen who may see what.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ragwright._sync import to_thread
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.models.llms.base import ChatModel, Message
from ragwright.options import RetrievalOptions


@runtime_checkable
class RetrieverLike(Protocol):
    """The retrieval seam every strategy wraps and offers."""

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]: ...


async def ask_model(
    llm: ChatModel,
    system: str,
    user: str,
    *,
    max_tokens: int = 256,
    json_schema: Mapping[str, Any] | None = None,
) -> str:
    """One deterministic (temperature 0) chat call off the event loop; returns the reply text."""
    messages: Sequence[Message] = [Message("system", system), Message("user", user)]
    response = await to_thread(llm.chat, messages, temperature=0.0, max_tokens=max_tokens, json_schema=json_schema)
    return response.text
