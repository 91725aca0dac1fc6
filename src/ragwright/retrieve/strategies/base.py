"""What the strategy decorators share: the stage seam they wrap and a chat helper.

Every strategy is a decorator around a retrieval stage — ``async run(request) -> RetrievalOutcome``
(:mod:`ragwright.retrieve.request`; an object with only the older ``retrieve(query, options,
identity)`` is adapted) — and is one itself, so they stack (see
:func:`ragwright.retrieve.strategies.compose.build_retriever`). The request's identity is passed down
unchanged: a strategy can narrow a search, never widen who may see what. A strategy records what it
decided as a typed field of the :class:`~ragwright.model.outcome.RetrievalOutcome`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragwright._sync import to_thread
from ragwright.models.llms.base import ChatModel, Message
from ragwright.retrieve.request import RetrievalRequest, RetrievalStage, RetrieverLike, StageBase, as_stage

__all__ = ["RetrievalRequest", "RetrievalStage", "RetrieverLike", "StageBase", "as_stage", "ask_model"]


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
