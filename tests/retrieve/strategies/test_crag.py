from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from ragwright.errors import ConfigError, GenerationError, RetrievalError
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse, SearchResult
from ragwright.options import CragOptions, RetrievalOptions
from ragwright.retrieve.request import RetrievalRequest
from ragwright.retrieve.strategies.crag import CorrectiveRetriever, Grader, overlap_match
from ragwright.retrieve.strategies.crag_loop import DECLINE, CorrectiveAnswerLoop
from ragwright.retrieve.strategies.web import HttpJsonWebSearch, WebResult
from ragwright.testing.doubles import ScriptedChat

from .conftest import FakeRetriever, result

ID = Identity(tenant="t1", groups=("staff",))
QUERY = "eu ai act provisions"
GOOD = [
    result("g1", 0.9, text="The EU AI Act provisions on risk"),
    result("g2", 0.8, text="AI act provisions in the EU"),
]
BAD = [
    result("b1", 0.9, text="Kettle warranty terms"),
    result("b2", 0.8, text="Shipping to Norway"),
    result("b3", 0.7, text="The EU customs union"),
]


class FakeWeb:
    name = "fake-web"

    def __init__(self, hits: list[WebResult] | Exception) -> None:
        self.hits, self.queries = hits, []  # type: list[str]

    def search(self, query: str, max_results: int) -> list[WebResult]:
        self.queries.append(query)
        if isinstance(self.hits, Exception):
            raise self.hits
        return self.hits[:max_results]


WEB = [WebResult(f"https://example.org/{i}", f"t{i}", f"EU AI act provisions page {i}", None) for i in range(4)]


def crag(
    pages: list[SearchResult], web: Any = None, llm: Any = None, options: CragOptions | None = None, **call: Any
) -> Any:
    retriever = CorrectiveRetriever(FakeRetriever({QUERY: pages}), web=web, llm=llm, options=options)
    return asyncio.run(retriever.retrieve(QUERY, RetrievalOptions(use_crag=True, **call), ID))


def test_heuristic_overlap_rule() -> None:
    assert overlap_match("a b c d e f g h i j", "a b c")  # exactly 30 %
    assert not overlap_match("a b c d e f g h i j", "a b")
    assert not overlap_match("", "anything")
    grades = Grader().heuristic(QUERY, BAD + GOOD)
    assert grades == ["irrelevant", "irrelevant", "irrelevant", "relevant", "relevant"]  # "EU" is 1 of 4 tokens


def test_relevant_results_pass_unchanged() -> None:
    out = crag(GOOD, FakeWeb(WEB))
    assert [r.chunk_id for r in out] == ["g1", "g2"]
    assert out.extensions["crag_triggered"] == "false" and out.extensions["crag_score"] == 1.0


def test_replace_mode_returns_web_results_only_capped() -> None:
    web = FakeWeb(WEB)
    out = crag(BAD, web, top_k=3)
    assert [r.chunk.metadata["url"] for r in out] == [w.url for w in WEB[:3]]
    assert all(r.chunk.metadata["origin"] == "web" and r.chunk.metadata["untrusted"] for r in out)
    assert all(r.chunk.tenant == "t1" for r in out)
    assert out.extensions["crag_triggered"] == "true" and out.extensions["crag_action"] == "replace"
    assert web.queries == [QUERY]


def test_append_mode_keeps_results_and_adds_web() -> None:
    out = crag(BAD, FakeWeb(WEB), crag_fallback_mode="append")
    assert [r.chunk_id for r in out][:3] == ["b1", "b2", "b3"] and len(out) == 3 + 4


def test_web_failure_returns_original_results() -> None:
    for web in (FakeWeb(RetrievalError("network down")), FakeWeb([]), None):
        out = crag(BAD, web)
        assert [r.chunk_id for r in out] == ["b1", "b2", "b3"]
        assert out.extensions["crag_triggered"] == "true"
    assert crag(BAD, FakeWeb(RuntimeError("x"))).extensions["degraded"] == ["crag_web"]


def test_threshold_and_switch() -> None:
    mixed = GOOD[:1] + BAD[:1]  # score 0.5
    assert crag(mixed, FakeWeb(WEB)).extensions["crag_triggered"] == "false"
    assert crag(mixed, FakeWeb(WEB), crag_score_threshold=0.6).extensions["crag_triggered"] == "true"
    retriever = CorrectiveRetriever(FakeRetriever({QUERY: BAD}), web=FakeWeb(WEB))
    out = asyncio.run(retriever.retrieve(QUERY, RetrievalOptions(), ID))
    assert [r.chunk_id for r in out] == ["b1", "b2", "b3"] and out.outcome.crag is None  # switched off: no decision


def test_llm_grading_per_chunk() -> None:
    chat = ScriptedChat(['{"grade": "relevant"}', '{"grade": "ambiguous"}', '{"grade": "irrelevant"}'])
    out = crag(BAD, FakeWeb(WEB), llm=chat)
    assert len(chat.calls) == 3 and out.extensions["crag_grader"] == "llm"
    assert out.extensions["crag_score"] == pytest.approx(1 / 3) and out.extensions["crag_triggered"] == "true"
    assert "Kettle warranty terms" in chat.calls[0].last_user


def test_llm_grading_failure_falls_back_to_heuristic() -> None:
    chat = ScriptedChat(['{"grade": "relevant"}', GenerationError("down"), '{"grade": "relevant"}'])
    out = crag(GOOD + BAD[:1], FakeWeb(WEB), llm=chat)
    assert out.extensions["crag_grader"] == "heuristic_fallback" and out.extensions["crag_triggered"] == "false"
    assert out.extensions["degraded"] == ["crag_grading"]
    heuristic = crag(
        BAD, FakeWeb(WEB), llm=ScriptedChat(['{"grade": "relevant"}'] * 3), options=CragOptions(grader="heuristic")
    )
    assert heuristic.extensions["crag_grader"] == "heuristic"
    with pytest.raises(ConfigError, match="chat model"):
        CorrectiveRetriever(FakeRetriever(), options=CragOptions(grader="llm"))


# -- the corrective answer loop ------------------------------------------------------------------


async def answer(question: str, evidence: list[SearchResult]) -> RagResponse:
    return RagResponse(answer=f"answer from {len(evidence)}", sources=tuple(evidence))


def loop(pages: dict[str, list[SearchResult]], llm: Any = None, web: Any = None, **opts: Any) -> Any:
    inner = FakeRetriever(pages)
    runner = CorrectiveAnswerLoop(inner, llm=llm, web=web, options=CragOptions(grader="heuristic", **opts))
    return asyncio.run(runner.run(RetrievalRequest(QUERY, RetrievalOptions(), ID), answer)), inner


def test_loop_answers_from_relevant_evidence() -> None:
    outcome, _ = loop({QUERY: GOOD + BAD[:1]})
    assert outcome.response.answer == "answer from 2" and outcome.attempts == 1


def test_loop_rewrites_and_retries() -> None:
    chat = ScriptedChat(['{"query": "artificial intelligence act EU"}'])
    outcome, inner = loop({QUERY: BAD, "artificial intelligence act EU": GOOD}, llm=chat)
    assert outcome.attempts == 2 and outcome.queries == (QUERY, "artificial intelligence act EU")
    assert not outcome.response.declined and all(c[2] is ID for c in inner.calls)


def test_loop_is_capped_then_declines() -> None:
    chat = ScriptedChat(lambda _: json.dumps({"query": f"try {len(chat.calls)}"}))
    outcome, inner = loop({QUERY: BAD}, llm=chat, max_attempts=3)
    assert outcome.response.declined and outcome.response.answer == DECLINE and outcome.response.sources == ()
    assert len(inner.calls) == 3 and len(chat.calls) == 2


def test_loop_stops_on_repeat_or_failed_rewrite_and_uses_web_last() -> None:
    outcome, inner = loop({QUERY: BAD}, llm=ScriptedChat(['{"query": "EU AI Act provisions "}']))
    assert len(inner.calls) == 1 and outcome.response.declined
    outcome, inner = loop({QUERY: BAD}, llm=ScriptedChat([GenerationError("down")]))
    assert len(inner.calls) == 1 and outcome.response.declined
    outcome, _ = loop({QUERY: BAD}, web=FakeWeb(WEB))
    assert outcome.used_web and outcome.response.answer == "answer from 4"
    outcome, _ = loop({QUERY: BAD}, web=FakeWeb(RetrievalError("down")))
    assert outcome.response.declined


# -- the HTTP JSON client, against a local server -----------------------------------------------


@pytest.fixture
def search_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"body": body, "auth": self.headers.get("Authorization")})
            if body["query"] == "fail":
                self.send_response(500)
                self.end_headers()
                return
            payload = {
                "results": [
                    {"url": "https://e.org/a", "title": "A", "content": "alpha", "score": 0.7},
                    {"url": "https://e.org/b", "snippet": "beta"},
                    {"url": 3},
                ]
            }
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/search", seen
    server.shutdown()
    server.server_close()


def test_http_json_web_search(search_server: tuple[str, list[dict[str, Any]]]) -> None:
    url, seen = search_server
    client = HttpJsonWebSearch(url, api_key="k", timeout_s=5)
    hits = client.search("eu ai act", 5)
    assert hits == [
        WebResult("https://e.org/a", "A", "alpha", 0.7),
        WebResult("https://e.org/b", "https://e.org/b", "beta"),
    ]
    assert seen[0] == {"body": {"query": "eu ai act", "max_results": 5}, "auth": "Bearer k"}
    with pytest.raises(RetrievalError, match="failed"):
        client.search("fail", 5)
    with pytest.raises(ConfigError, match="url"):
        HttpJsonWebSearch("ftp://x")
