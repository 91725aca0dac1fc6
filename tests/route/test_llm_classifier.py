"""The LLM classifier with a scripted chat model: a valid reply routes, anything unusable falls back to
the rules (logged, the reason says so); the model is offered only the routes that can run; and the real
agent route (scripted) answers as the caller."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ragwright.errors import GenerationError
from ragwright.model.identity import Identity
from ragwright.models.llms.base import Message
from ragwright.rag import Rag
from ragwright.rag_route import route_ask
from ragwright.route import Router, RouterOptions
from ragwright.route import llm as classifier
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

LLM = RouterOptions(mode="llm")
Q = "Who directed Big Stone Gap?"


def reply(route: str, reason: str = "because") -> str:
    return json.dumps({"route": route, "reason": reason})


def test_a_valid_reply_routes_with_the_models_reason() -> None:
    chat = ScriptedChat([reply("agentic", "two lookups")])
    d = Router(LLM, chat).decide(Q)
    assert (d.route, d.source, d.reason, d.llm_calls) == ("agentic", "llm", "llm: two lookups → agentic", 1)
    call = chat.calls[0]
    assert call.kwargs["json_schema"]["properties"]["route"]["enum"] == list(LLM.routes)
    assert (
        call.kwargs["temperature"] == 0.0 and "<question>\nWho directed Big Stone Gap?\n</question>" in call.last_user
    )


@pytest.mark.parametrize(
    "bad",
    [
        "graph please",  # no JSON
        '{"route": "web", "reason": "x"}',  # not a route
        '["hybrid"]',  # not an object
        GenerationError("backend down"),
        RuntimeError("socket closed"),  # a backend's own error type
    ],
)
def test_an_unusable_reply_falls_back_to_the_rules(bad: object, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ragwright.route.router"):
        d = Router(LLM, ScriptedChat([bad])).decide("hello!")  # type: ignore[list-item]
    assert (d.route, d.source, d.llm_calls) == ("none", "rules", 1)
    assert d.reason.startswith("LLM classifier failed (") and "rules: chitchat" in d.reason
    assert any(r.getMessage().startswith("route_classifier_failed") for r in caplog.records)


def test_the_model_is_offered_only_usable_routes_and_skipped_when_one_is_left() -> None:
    chat = ScriptedChat([reply("hybrid")])
    Router(LLM, chat).decide(Q, {"agentic": "no chat model", "graph_local": "no graph", "graph_global": "no graph"})
    assert chat.calls[0].kwargs["json_schema"]["properties"]["route"]["enum"] == ["none", "hybrid", "hierarchical"]
    assert "graph_local" not in chat.calls[0].last_user
    lone = ScriptedChat([])
    d = Router(RouterOptions(mode="llm", routes=("hybrid",)), lone).decide(Q)
    assert d.route == "hybrid" and lone.calls == [] and d.llm_calls == 0


def test_llm_mode_without_a_model_uses_the_rules() -> None:
    d = Router(LLM, None).decide("hello")
    assert d.route == "none" and d.reason.startswith("no chat model for the LLM classifier; rules: chitchat")


def test_a_fenced_reply_is_accepted() -> None:
    route, why = classifier.classify(
        ScriptedChat(["```json\n" + reply("graph_global", "themes") + "\n```"]), Q, LLM.routes
    )
    assert (route, why) == ("graph_global", "themes")


FILM = b"# Big Stone Gap\n\nBig Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani."
SECRET = b"# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva."


def test_the_real_agent_route_searches_as_the_caller(tmp_path: Path) -> None:
    pytest.importorskip("ragwright.rag_agent")

    agent_turns: list[int] = []

    def script(messages: list[Message]) -> str:
        if "You route questions" in messages[0].content:
            return reply("agentic", "several lookups")
        agent_turns.append(1)
        if len(agent_turns) == 1:  # the model tries to reach the board's minutes
            return json.dumps({"action": "search", "input": "Zorblax Holdings Geneva"})
        return json.dumps({"action": "answer", "input": "I found no answer."})

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), llm=ScriptedChat(script))
    rag.ingest(BytesSource({"film.md": FILM}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    response = route_ask(
        rag, "How many years after the film did she buy Zorblax?", identity=Identity("acme"), options=LLM
    )
    assert response.route == "agentic", response.route_reason
    assert "secret.md" not in {s.document_id for s in response.sources}
    secret_chunks = {r.chunk_id for r in rag.search("Zorblax", identity=Identity("acme", ("board",)))}
    secret_chunks = {
        c for c in secret_chunks if c not in {r.chunk_id for r in rag.search("Zorblax", identity=Identity("acme"))}
    }
    assert secret_chunks and len(agent_turns) >= 2
    seen = {i for step in response.trajectory for i in step.get("result_ids", ())}
    assert seen and not seen & secret_chunks and "secretly acquired" not in json.dumps(response.to_dict())


def test_the_models_none_needs_the_rules_chitchat_reading(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ragwright.route.router"):
        d = Router(LLM, ScriptedChat([reply("none", "small talk")])).decide("What was invented by Savery?")
    assert (d.route, d.source, d.llm_calls) == ("hybrid", "rules", 1)
    assert d.reason.startswith("LLM chose none but the rules see no chit-chat; rules: ")
    assert any(r.getMessage().startswith("route_classifier_overruled") for r in caplog.records)
    hello = Router(LLM, ScriptedChat([reply("none", "a greeting")])).decide("hello there")
    assert (hello.route, hello.source) == ("none", "llm")
