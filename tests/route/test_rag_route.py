"""route_ask on a real store: each route reached as the caller, unavailable and failing routes fall back
to hybrid with the reason, the classifier's LLM is optional, and a hidden document never reaches the caller."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from ragwright.graph import GraphOptions
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.models.llms.base import Message
from ragwright.options import RagOptions
from ragwright.rag import Rag
from ragwright.rag_route import aroute_ask, route_ask, unavailable_routes
from ragwright.route import RouterOptions
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

FILM = b"# Big Stone Gap\n\nBig Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani."
AUTHOR = b"# Author\n\nAdriana Trigiani is a best-selling author. She lives in Greenwich Village in New York City."
SECRET = b"# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva."
ACME, BOARD = Identity("acme"), Identity("acme", ("board",))
QUESTIONS = {
    "hybrid": "Where does Adriana Trigiani live?",
    "graph_local": "How is Adriana Trigiani related to Zorblax Holdings?",
    "graph_global": "What are the main themes across the documents?",
    "hierarchical": "Which documents mention Adriana Trigiani?",
    "agentic": "How many years after Big Stone Gap did Adriana Trigiani acquire Zorblax Holdings?",
}


def make(tmp_path: Path, *, graph: bool = True, llm: Any = None) -> Rag:
    rag = Rag(
        SqliteStore(tmp_path / "s.db"),
        HashingEmbedder(max_tokens=64),
        graph=GraphOptions(merge_similarity=None) if graph else None,
        llm=llm,
    )
    rag.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    return rag


class Recorder:
    """A stand-in for the hierarchical / agentic facade: answers with the caller's hybrid search."""

    def __init__(self, rag: Rag, route: str, calls: list[tuple[str, Identity | None]], fail: bool = False) -> None:
        self.rag, self.route, self.calls, self.fail = rag, route, calls, fail

    def ask(self, question: str, *, identity: Identity | None = None) -> RagResponse:
        self.calls.append((self.route, identity))
        if self.fail:
            raise RuntimeError(f"{self.route} broke")
        return self.rag.ask(question, identity=identity, answer_mode="extractive")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Fake ragwright.rag_hierarchy / ragwright.rag_agent modules whose entry points record each call."""
    state: dict[str, Any] = {"calls": [], "fail": set()}
    for module, entry, route in (
        ("ragwright.rag_hierarchy", "enable_hierarchy", "hierarchical"),
        ("ragwright.rag_agent", "enable_agent", "agentic"),
    ):
        fake = types.ModuleType(module)

        def enable(rag: Rag, *, _route: str = route) -> Recorder:
            return Recorder(rag, _route, state["calls"], _route in state["fail"])

        setattr(fake, entry, enable)
        fake.store_has_hierarchy = lambda store: True  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module, fake)
    return state


def llm_everywhere(messages: list[Message]) -> str:
    """A chat model that answers every answer prompt with the first source, and greets back."""
    text = messages[-1].content
    if "[Source 1]" in text or "Source 1" in text:
        return "From the sources [Source 1]."
    return "Hello! Ask me about the documents."


def test_chitchat_takes_no_retrieval(tmp_path: Path) -> None:
    rag = make(tmp_path, graph=False)
    response = route_ask(rag, "Hi, who are you?", identity=ACME)
    assert response.route == "none" and response.sources == () and response.mode == "canned"
    assert "documents" in response.answer and response.route_reason.startswith("rules: chitchat")  # type: ignore[union-attr]
    payload = response.to_dict()
    assert payload["route"] == "none" and payload["route_reason"]
    with_llm = make(tmp_path / "b", graph=False, llm=ScriptedChat(["Hello! Ask me about the documents."]))
    reply = route_ask(with_llm, "hello", identity=ACME)
    assert (reply.route, reply.mode, reply.answer, reply.sources) == (
        "none",
        "llm",
        "Hello! Ask me about the documents.",
        (),
    )
    assert reply.usage["llm_calls"] == 1


def test_a_plain_question_is_the_hybrid_answer(tmp_path: Path) -> None:
    rag = make(tmp_path, graph=False)
    routed = route_ask(rag, QUESTIONS["hybrid"], identity=ACME)
    plain = rag.ask(QUESTIONS["hybrid"], identity=ACME)
    assert routed.route == "hybrid" and routed.answer == plain.answer
    assert [s.chunk_id for s in routed.sources] == [s.chunk_id for s in plain.sources]
    assert "route" not in plain.to_dict()


def test_graph_routes_without_a_graph_fall_back_to_hybrid_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ragwright.rag_hierarchy", None)  # the second choice is gone too
    rag = make(tmp_path, graph=False)
    response = route_ask(rag, QUESTIONS["graph_global"], identity=ACME)
    assert response.route == "hybrid"
    assert "graph_global unavailable (no entity graph" in response.route_reason  # type: ignore[operator]
    assert "hierarchical unavailable (ragwright.rag_hierarchy is not installed)" in response.route_reason  # type: ignore[operator]
    assert response.route_reason.endswith("→ hybrid")  # type: ignore[union-attr]


def test_graph_routes_with_a_graph(tmp_path: Path) -> None:
    rag = make(tmp_path)
    local = route_ask(rag, QUESTIONS["graph_local"], identity=ACME)
    assert local.route == "graph_local" and local.retrieval_path == "hybrid+graph → anchored"
    themes = route_ask(rag, QUESTIONS["graph_global"], identity=ACME)
    assert themes.route == "graph_global" and "Main themes" in themes.answer


def test_agentic_needs_a_chat_model(tmp_path: Path, fakes: dict[str, Any]) -> None:
    rag = make(tmp_path, graph=False)
    assert "agentic" in unavailable_routes(rag)
    response = route_ask(rag, QUESTIONS["agentic"], identity=ACME)
    assert response.route == "hybrid" and "agentic unavailable (no chat model" in response.route_reason  # type: ignore[operator]
    assert fakes["calls"] == []


def test_a_missing_module_is_an_unavailable_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ragwright.rag_hierarchy", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "ragwright.rag_agent", types.ModuleType("ragwright.rag_agent"))  # no entry
    rag = make(tmp_path, graph=False, llm=ScriptedChat(llm_everywhere))
    gone = unavailable_routes(rag)
    assert gone["hierarchical"] == "ragwright.rag_hierarchy is not installed"
    assert gone["agentic"] == "ragwright.rag_agent has no enable_agent"
    response = route_ask(rag, QUESTIONS["hierarchical"], identity=ACME)
    assert response.route == "hybrid" and "hierarchical unavailable (ragwright.rag_hierarchy" in response.route_reason  # type: ignore[operator]


def test_a_route_that_raises_is_logged_and_answered_by_hybrid(
    tmp_path: Path, fakes: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    rag = make(tmp_path, graph=False)
    fakes["fail"].add("hierarchical")
    with caplog.at_level(logging.WARNING, logger="ragwright.rag_route"):
        response = route_ask(rag, QUESTIONS["hierarchical"], identity=ACME)
    assert response.route == "hybrid"
    assert "hierarchical failed (RuntimeError: hierarchical broke) → hybrid" in response.route_reason  # type: ignore[operator]
    assert response.sources and fakes["calls"] == [("hierarchical", ACME)]
    assert any(r.getMessage().startswith("route_failed: hierarchical raised RuntimeError") for r in caplog.records)


def test_a_per_call_filter_keeps_the_question_on_hybrid(tmp_path: Path, fakes: dict[str, Any]) -> None:
    rag = make(tmp_path)
    opts = RagOptions(metadata_filter={"title": "Author"})
    response = route_ask(rag, QUESTIONS["graph_local"], identity=ACME, answer_options=opts)
    assert response.route == "hybrid" and "only hybrid applies it" in response.route_reason  # type: ignore[operator]


@pytest.mark.parametrize("route", list(QUESTIONS))
def test_every_route_answers_as_the_caller_and_never_leaks(tmp_path: Path, fakes: dict[str, Any], route: str) -> None:
    rag = make(tmp_path, llm=ScriptedChat(llm_everywhere))
    response = route_ask(rag, QUESTIONS[route], identity=ACME)
    assert response.route == route, response.route_reason
    assert "secret.md" not in {s.document_id for s in response.sources}
    assert "Zorblax" not in response.answer and "Geneva" not in response.answer
    if route in ("hierarchical", "agentic"):
        assert fakes["calls"] == [(route, ACME)]
    board = route_ask(rag, QUESTIONS[route], identity=BOARD)  # the board sees what it may see
    assert board.route == route


def test_the_llm_classifier_routes_and_counts_its_call(tmp_path: Path) -> None:
    def script(messages: list[Message]) -> str:
        if "You route questions" in messages[0].content:
            return json.dumps({"route": "graph_local", "reason": "relations between entities"})
        return llm_everywhere(messages)

    chat = ScriptedChat(script)
    rag = make(tmp_path, llm=chat)
    response = route_ask(rag, QUESTIONS["hybrid"], identity=ACME, options=RouterOptions(mode="llm"))
    assert response.route == "graph_local" and response.route_reason == "llm: relations between entities → graph_local"
    assert response.usage["route_llm_calls"] == 1 and response.usage["llm_calls"] >= 1
    schema = chat.calls[0].kwargs["json_schema"]  # no summaries in this store: hierarchical not offered
    assert schema["properties"]["route"]["enum"] == ["none", "hybrid", "graph_local", "graph_global", "agentic"]


def test_malformed_classifier_json_falls_back_to_the_rules(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rag = make(tmp_path, graph=False, llm=ScriptedChat(["route: graph please", "no json at all"], default="x"))
    with caplog.at_level(logging.WARNING):
        response = route_ask(rag, "hello", identity=ACME, options=RouterOptions(mode="llm"))
    assert response.route == "none" and response.route_reason.startswith("LLM classifier failed (")  # type: ignore[union-attr]
    assert "rules: chitchat" in response.route_reason  # type: ignore[operator]
    assert any(r.getMessage().startswith("route_classifier_failed") for r in caplog.records)


def test_async_entry_point(tmp_path: Path) -> None:
    rag = make(tmp_path, graph=False)
    response = asyncio.run(aroute_ask(rag, "thanks!", identity=ACME, options=RouterOptions(mode="off")))
    assert response.route == "hybrid" and response.route_reason == "off: routing off → hybrid"


def test_the_real_hierarchy_route_as_the_caller(tmp_path: Path) -> None:
    from ragwright.hierarchy.options import HierarchyOptions

    bare = make(tmp_path / "a", graph=False)
    assert unavailable_routes(bare)["hierarchical"].startswith("no document summaries in this store")
    rag = Rag(SqliteStore(tmp_path / "h.db"), HashingEmbedder(max_tokens=64), hierarchy=HierarchyOptions())
    rag.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    response = route_ask(rag, "Which documents mention Zorblax Holdings in Geneva?", identity=ACME)
    assert response.route == "hierarchical", response.route_reason
    assert "secret.md" not in {s.document_id for s in response.sources} and "Zorblax" not in response.answer
    board = route_ask(rag, "Which documents mention Zorblax Holdings in Geneva?", identity=BOARD)
    assert board.route == "hierarchical" and "secret.md" in {s.document_id for s in board.sources}
