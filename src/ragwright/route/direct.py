"""The ``none`` route: a reply without retrieval, for greetings, thanks and questions about the assistant.

With a chat model: one short reply, told not to answer factual questions from memory (it points to the
documents instead). Without one: a polite fixed reply for the kind of chit-chat. Either way the answer
has no sources and makes no claim about the documents.
"""

from __future__ import annotations

import logging

from ragwright.model.results import RagResponse
from ragwright.models.llms.base import ChatModel, Message

log = logging.getLogger(__name__)

CANNED: dict[str, str] = {
    "greeting": "Hello! Ask me a question about the documents in this collection and I will answer with sources.",
    "thanks": "You're welcome! Ask me anything else about the documents.",
    "farewell": "Goodbye! Come back with any question about the documents.",
    "small_talk": "I'm here to answer questions about the documents in this collection: what would you like to know?",
    "about_assistant": (
        "I am a question-answering assistant for the documents in this collection: I search them and "
        "answer with [Source N] citations, or say so when they do not hold the answer."
    ),
}
FALLBACK = CANNED["small_talk"]

SYSTEM = (
    "You are the assistant of a document question-answering system. The user wrote a greeting, thanks, "
    "small talk or a question about you. Reply in one or two friendly sentences. Do not state facts about "
    "the world or the documents; invite the user to ask a question about the documents."
)


def direct_answer(question: str, kind: str | None, llm: ChatModel | None, *, max_tokens: int = 80) -> RagResponse:
    """The reply to chit-chat *question* of *kind* (see :func:`~ragwright.route.features.chitchat_kind`)."""
    canned = CANNED.get(kind or "", FALLBACK)
    if llm is None:
        return RagResponse(answer=canned, sources=(), mode="canned")
    try:
        reply = llm.chat([Message("system", SYSTEM), Message("user", question)], temperature=0.0, max_tokens=max_tokens)
    except Exception as exc:  # a reply to "hello" must not fail: the fixed one instead
        log.warning("route_direct_failed: %s: %s; fixed reply", type(exc).__name__, exc)
        return RagResponse(answer=canned, sources=(), mode="canned")
    usage = {
        "llm_calls": 1,
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": reply.usage.completion_tokens,
    }
    return RagResponse(answer=reply.text.strip() or canned, sources=(), mode="llm", model=reply.model, usage=usage)
