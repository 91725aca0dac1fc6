"""Shared fixtures: a small corpus with business metadata and two tenants, a spying store, and a
scripted chat that answers each transform's prompt by what the prompt asks for (transforms run
concurrently, so replies are routed by content, not by order)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from ragwright import Identity, Rag
from ragwright.model.filters import Filter
from ragwright.models.llms.base import Message
from ragwright.options import RetrievalOptions
from ragwright.retrieve import Retriever
from ragwright.retrieve.transforms import TransformOptions
from ragwright.retrieve.transforms.plan import RetrievalTrace
from ragwright.sources import BytesSource
from ragwright.stores.base import Hit
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

DOCS: dict[str, tuple[bytes, dict[str, Any]]] = {
    "leave-policy-2024.md": (
        b"# Parental leave\n\nEmployees receive sixteen weeks of paid parental leave after one year of service.",
        {"doc_type": "policy", "year": 2024, "product": "hr-suite"},
    ),
    "leave-policy-2023.md": (
        b"# Parental leave\n\nEmployees received twelve weeks of paid parental leave in the previous policy.",
        {"doc_type": "policy", "year": 2023, "product": "hr-suite"},
    ),
    "leave-faq.md": (
        b"# Leave FAQ\n\nHow do I request parental leave? Ask your manager and file the leave form.",
        {"doc_type": "faq", "year": 2024, "product": "hr-suite"},
    ),
    "pto.md": (
        b"# Time off\n\nPaid time off accrues at two days per month for every employee.",
        {"doc_type": "policy", "year": 2022, "product": "hr-suite"},
    ),
    "x200-manual.md": (
        b"# X200 manual\n\nTo reset the X200 router hold the power button for ten seconds.",
        {"doc_type": "manual", "year": 2021, "product": "x200"},
    ),
    "contractors.md": (
        b"# Contractors\n\nContractors are not eligible for parental leave under the employee policy.",
        {"doc_type": "policy", "year": 2024, "product": "hr-suite"},
    ),
}
SECRET = b"# Board minutes\n\nParental leave budget for the secret acquisition, policy 2024 draft."


class SpyStore(MemoryStore):
    """A MemoryStore that records every arm call: (arm, query text or None, metadata filter)."""

    def __init__(self) -> None:
        super().__init__()
        self.arm_calls: list[tuple[str, str | None, Filter | None, Identity]] = []
        self.dense_vectors: list[Any] = []

    def search_dense(
        self, vector: Any, k: int, *, identity: Identity, metadata_filter: Filter | None = None, min_score: float = 0.0
    ) -> list[Hit]:
        self.arm_calls.append(("dense", None, metadata_filter, identity))
        self.dense_vectors.append(vector)
        return super().search_dense(vector, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score)

    def search_keyword(
        self, query: str, k: int, *, identity: Identity, metadata_filter: Filter | None = None, min_score: float = 0.0
    ) -> list[Hit]:
        self.arm_calls.append(("bm25", query, metadata_filter, identity))
        return super().search_keyword(query, k, identity=identity, metadata_filter=metadata_filter, min_score=min_score)

    def keyword_queries(self) -> list[str]:
        return [q for arm, q, _, _ in self.arm_calls if arm == "bm25" and q is not None]


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def store(embedder: HashingEmbedder) -> SpyStore:
    spy = SpyStore()
    rag = Rag(spy, embedder)
    for doc_id, (body, meta) in DOCS.items():
        rag.ingest(BytesSource({doc_id: body}), metadata=meta)
    rag.ingest(
        BytesSource({"board-minutes.md": SECRET}),
        tenant="other",
        acl=["board"],
        metadata={"doc_type": "policy", "year": 2024, "product": "hr-suite"},
    )
    spy.arm_calls.clear()
    return spy


def kind_of_prompt(messages: Sequence[Message]) -> str:
    text = "\n".join(m.content for m in messages)
    if "prepare search queries" in text:
        return "rewrite"
    if "metadata constraints" in text:
        return "self_query"
    if "different phrasings" in text:
        return "multi_query"
    if "passage that answers" in text:
        return "hyde"
    return "other"


Handler = Callable[[list[Message]], str]


def router(**handlers: str | Handler | BaseException) -> Callable[[list[Message]], str]:
    """A ScriptedChat script answering by prompt kind; unknown kinds raise (a test would notice)."""

    def reply(messages: list[Message]) -> str:
        kind = kind_of_prompt(messages)
        handler = handlers.get(kind)
        if handler is None:
            raise AssertionError(f"unexpected {kind} prompt")
        if isinstance(handler, BaseException):
            raise handler
        return handler(messages) if callable(handler) else handler

    return reply


def chat_for(**handlers: str | Handler | BaseException) -> ScriptedChat:
    return ScriptedChat(router(**handlers))


def calls_of(chat: ScriptedChat, kind: str) -> list[Any]:
    return [c for c in chat.calls if kind_of_prompt(c.messages) == kind]


def run(
    store: SpyStore,
    embedder: HashingEmbedder,
    chat: ScriptedChat | None,
    transforms: TransformOptions,
    query: str,
    options: RetrievalOptions | None = None,
    *,
    identity: Identity | None = None,
    history: Sequence[Message | Mapping[str, Any]] = (),
) -> tuple[list[Any], RetrievalTrace]:
    retriever = Retriever(store, embedder, llm=chat, transforms=transforms)
    trace = RetrievalTrace(query)
    results = asyncio.run(
        retriever.retrieve(
            query,
            options or RetrievalOptions(use_hybrid_search=True, top_k=5),
            identity or Identity(),
            history=history,
            trace=trace,
        )
    )
    return results, trace


def as_json(value: Any) -> str:
    return json.dumps(value)
