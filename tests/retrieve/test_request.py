"""The retrieval seam: a frozen request down the strategy stack, a typed outcome back, chunk lookups
through a protocol — and no module-level state beside them."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import logging
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import ragwright
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.outcome import (
    AdaptiveDecision,
    CragDecision,
    DeepResearchDecision,
    RetrievalOutcome,
    RetrievalResults,
    TagDecision,
)
from ragwright.model.results import SearchResult
from ragwright.models.llms.base import Message
from ragwright.options import ParentOptions, RetrievalOptions
from ragwright.postprocess.expand import expand
from ragwright.rag import Rag
from ragwright.retrieve import Retriever
from ragwright.retrieve.request import RetrievalRequest
from ragwright.retrieve.strategies.compose import build_retriever
from ragwright.retrieve.transforms.plan import RetrievalTrace
from ragwright.sources import BytesSource
from ragwright.stores.base import ChunkLookup
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

PACKAGE = Path(ragwright.__file__).parent


def chunk(cid: str, parent: str | None = None) -> Chunk:
    return Chunk(id=cid, document_id="d", text=f"text of {cid}", position=0, parent_id=parent)


class Recorder:
    """A bottom stage that records every request it is given."""

    def __init__(self) -> None:
        self.requests: list[RetrievalRequest] = []

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        self.requests.append(request)
        return RetrievalOutcome((SearchResult(chunk(f"c-{request.query}"), 1.0),))


def test_the_request_is_frozen_and_checked() -> None:
    request = RetrievalRequest("q", RetrievalOptions(), Identity(), history=[Message("user", "hi")])  # type: ignore[arg-type]
    assert isinstance(request.history, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.query = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="options"):
        RetrievalRequest("q", {"top_k": 3}, Identity())  # type: ignore[arg-type]
    sub = request.with_query("sub")
    assert (sub.query, sub.history, sub.identity) == ("sub", request.history, request.identity)


def test_history_trace_and_identity_reach_every_inner_call_of_the_stack() -> None:
    """Deep research's sub-queries travel as the same request: same history, trace and identity."""
    bottom = Recorder()
    chat = ScriptedChat([json.dumps({"sufficient": False, "subQueries": ["sub"]}), json.dumps({"sufficient": True})])
    stack = build_retriever(bottom, deep=True, time=True, llm=chat)
    trace, who = RetrievalTrace("q"), Identity(tenant="acme", groups=("hr",))
    history = (Message("user", "earlier question"),)
    request = RetrievalRequest("q", RetrievalOptions(), who, history, trace)
    outcome = asyncio.run(stack.run(request))
    assert [r.query for r in bottom.requests] == ["q", "sub"]
    assert all(r.history == history and r.trace is trace and r.identity == who for r in bottom.requests)
    assert outcome.deep_research == DeepResearchDecision(2, "sufficient", ("sub",))


def test_ask_passes_the_conversation_history_on_the_request() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder(), retrieval_options=RetrievalOptions())
    rag.ingest(BytesSource({"a.txt": b"Refunds are paid within 14 days."}))
    bottom = Recorder()
    rag.strategies = bottom
    history = [{"role": "user", "content": "about refunds"}]
    rag.ask("and how fast?", conversation_history=history)
    (request,) = bottom.requests
    assert [m.content for m in request.history] == ["about refunds"]
    assert request.trace is not None and request.query == "and how fast?"


def test_the_outcome_is_typed_and_its_flat_view_round_trips() -> None:
    outcome = RetrievalOutcome(
        (SearchResult(chunk("a"), 0.5),),
        degraded=("crag_web",),
        cache="miss",
        adaptive=AdaptiveDecision("multi_hop", "heuristic"),
        crag=CragDecision(True, 0.25, "heuristic", "web_failed"),
        deep_research=DeepResearchDecision(2, "sufficient", ("x", "y")),
        tags=TagDecision(MappingProxyType({"department": "finance"}), relaxed=True),
        time_decay_rate=0.01,
    )
    flat = outcome.extensions()
    assert flat["crag_triggered"] == "true" and flat["adaptive_complexity"] == "multi_hop"  # the seed's names
    assert RetrievalOutcome.from_extensions(outcome.results, flat) == outcome
    listed = outcome.as_results()
    assert isinstance(listed, RetrievalResults) and listed.outcome is outcome and listed.degraded
    assert list(listed) == list(outcome.results)


class FilteringLookup:
    """A ChunkLookup that serves parents only to the 'hr' group and records who asked."""

    def __init__(self, parents: dict[str, Chunk]) -> None:
        self.parents, self.asked = parents, []  # type: ignore[var-annotated]

    def get_chunks(self, chunk_ids: Any, identity: Identity) -> list[Chunk]:
        return []

    def get_parents(self, parent_ids: Any, identity: Identity) -> list[Chunk]:
        self.asked.append(identity)
        return [self.parents[p] for p in parent_ids if p in self.parents and "hr" in identity.groups]

    def get_vectors(self, chunk_ids: Any) -> dict[str, Any]:
        return {}


def test_expansion_is_a_pure_function_over_a_lookup_that_filters_by_identity(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lookup = FilteringLookup({"p": Chunk(id="p", document_id="d", text="whole section", position=0)})
    assert isinstance(lookup, ChunkLookup)
    hits = [SearchResult(chunk("c1", parent="p"), 0.9), SearchResult(chunk("c2", parent="p"), 0.8)]
    hr, staff = Identity(groups=("hr",)), Identity(groups=("staff",))
    swapped = expand(lookup, hits, hr, parents="swap")
    assert [r.chunk.id for r in swapped] == ["p"] and swapped[0].chunk.metadata["matched_children"] == ["c1", "c2"]
    with caplog.at_level(logging.WARNING):
        assert expand(lookup, hits, staff, parents="swap") == hits  # not visible: the matched chunks stay
    assert "parent_lookup_failed" in caplog.text and lookup.asked == [hr, staff]
    assert expand(lookup, hits, hr, parents="off") == hits


def test_the_pipeline_reads_parents_through_its_lookup_under_the_callers_identity() -> None:
    store = MemoryStore()
    rag = Rag(
        store,
        HashingEmbedder(max_tokens=16),
        retrieval_options=RetrievalOptions(),
        parents=ParentOptions(chunk_size=200, overlap=10),
    )
    rag.ingest(BytesSource({"a.md": ("\n\n".join(f"Paragraph {i} about refunds." for i in range(6))).encode()}))
    seen: list[Identity] = []

    class Spy:
        def get_chunks(self, ids: Any, identity: Identity) -> list[Chunk]:
            return store.get_chunks(ids, identity)

        def get_parents(self, ids: Any, identity: Identity) -> list[Chunk]:
            seen.append(identity)
            return store.get_parents(ids, identity)

        def get_vectors(self, ids: Any) -> dict[str, Any]:
            return store.get_vectors(ids)

    retriever = Retriever(store, rag.embedder, lookup=Spy())
    who = Identity(user="u1")
    out = asyncio.run(retriever.retrieve("refunds", RetrievalOptions(top_k=2), who))
    assert out and seen == [who]
    with pytest.raises(ValueError, match="lookup"):
        Retriever(store, rag.embedder, lookup=object())  # type: ignore[arg-type]


def test_a_store_without_chunk_lookup_degrades_expansion_with_a_named_event(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    rag = Rag(store, HashingEmbedder(max_tokens=12), retrieval_options=RetrievalOptions())
    rag.ingest(BytesSource({"a.md": ("\n\n".join(f"Section {i} has item{i}." for i in range(6))).encode()}))

    class VectorOnly:  # search, nothing by id
        score_scale = store.score_scale

        def search_dense(self, *args: Any, **kwargs: Any) -> Any:
            return store.search_dense(*args, **kwargs)

    retriever = Retriever(VectorOnly(), rag.embedder)  # type: ignore[arg-type]
    assert retriever.lookup is None
    with caplog.at_level(logging.WARNING):
        out = asyncio.run(retriever.retrieve("item3", RetrievalOptions(top_k=1, neighbour_window=1), Identity()))
    assert len(out) == 1 and "expansion_unavailable" in caplog.text


def test_no_module_level_context_carries_retrieval_state() -> None:
    """The hidden channels are gone: no ContextVar in the retrieval, cache or answer paths."""
    offenders = []
    for path in [*PACKAGE.glob("retrieve/**/*.py"), *PACKAGE.glob("cache/*.py"), PACKAGE / "rag.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
            if name == "ContextVar":
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
