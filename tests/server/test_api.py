"""Every endpoint through FastAPI's test client: shapes, streaming, errors as {"error": …}."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragwright.server.app import API_ROUTES
from tests.server.conftest import KEY_A, KEY_B, REFUNDS, auth, keyed_config, make_rag, sse_events, upload

QUESTION = "Can customers request a refund within 30 days of delivery?"


def test_health_needs_no_key(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["auth"] == "api_key"


def test_ingest_upload_returns_the_report_and_stages_the_file(make_client: Callable[..., TestClient]) -> None:
    c = make_client()
    report = upload(c, None, "refunds.md", REFUNDS)
    assert report["added"] == 1 and report["failed"] == [] and report["chunks"] >= 1
    staged = Path(report["document_ids"][0])
    assert staged.read_bytes() == REFUNDS and staged.name == "refunds.md"
    again = upload(c, None, "refunds.md", REFUNDS)  # same name, same bytes: unchanged, not duplicated
    assert again["unchanged"] == 1 and again["added"] == 0
    assert len(c.get("/documents").json()["documents"]) == 1


def test_ingest_reports_an_unparseable_file_as_failed(make_client: Callable[..., TestClient]) -> None:
    c = make_client()
    report = upload(c, None, "broken.pdf", b"%PDF-1.7 this is not really a pdf")
    assert report["added"] == 0 and len(report["failed"]) == 1


def test_ingest_a_configured_source(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\n\nEmployees get 25 days of paid leave per year.\n")
    config = keyed_config(tmp_path)
    config["sources"] = {"handbook": str(folder)}
    c = make_client(config)
    response = c.post("/ingest", headers=auth(KEY_A), json={"source": "handbook"})
    assert response.status_code == 200, response.text
    assert response.json()["added"] == 1
    docs = c.get("/documents", headers=auth(KEY_A)).json()["documents"]
    assert [d["tenant"] for d in docs] == ["acme"]
    missing = c.post("/ingest", headers=auth(KEY_A), json={"source": "nope"})
    assert missing.status_code == 404 and "handbook" in missing.json()["error"]


def test_search_has_the_cli_result_shape(client: TestClient) -> None:
    response = client.post("/search", headers=auth(KEY_A), json={"query": "refund within 30 days"})
    assert response.status_code == 200
    body = response.json()
    top = body["results"][0]
    assert set(top) == {"chunk_id", "document_id", "score", "text", "section_path", "page", "arms", "scanned"}
    assert top["scanned"] is False
    assert top["section_path"] == ["Refunds", "Policy"] and "30 days" in top["text"]
    assert set(top["arms"]) == {"dense", "bm25"} and top["arms"]["bm25"]["rank"] == 1
    assert body["documents"][top["document_id"]]["title"] == "Refunds"


def test_search_options_are_applied(client: TestClient) -> None:
    body = client.post(
        "/search",
        headers=auth(KEY_A),
        json={"query": "refund", "options": {"top_k": 1, "use_dense_search": False, "use_keyword_search": True}},
    ).json()
    assert len(body["results"]) == 1 and set(body["results"][0]["arms"]) == {"bm25"}
    none = client.post(
        "/search", headers=auth(KEY_A), json={"query": "refund", "options": {"metadata_filter": {"file_name": "x.md"}}}
    ).json()
    assert none["results"] == []


def test_ask_json(client: TestClient) -> None:
    body = client.post("/ask", headers=auth(KEY_A), json={"question": QUESTION}).json()
    assert not body["declined"] and "[Source 1]" in body["answer"]
    assert body["citations"][0]["source"] == 1 and body["sources"][0]["source"] == 1


def test_ask_streams_server_sent_events(client: TestClient) -> None:
    headers = {**auth(KEY_A), "Accept": "text/event-stream"}
    with client.stream("POST", "/ask", headers=headers, json={"question": QUESTION}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.read().decode())
    names = [name for name, _ in events]
    assert names[-3:] == ["sources", "citations", "done"] and set(names[:-3]) == {"token"}
    streamed = "".join(data for name, data in events if name == "token")
    done = events[-1][1]
    assert streamed == done["answer"] and "[Source 1]" in streamed
    sources = dict(events)["sources"]
    assert sources["sources"][0]["text"].startswith("Customers may request a refund")
    assert dict(events)["citations"]["citations"][0]["source"] == 1


class _FakeStream:
    """A stand-in for ``Rag.aask_stream``'s result: deltas, then ``.response`` (or a failure)."""

    def __init__(self, deltas: list[str], response: Any, fail: bool = False) -> None:
        self.deltas, self._response, self.fail = list(deltas), response, fail

    def __aiter__(self) -> _FakeStream:
        return self

    async def __anext__(self) -> str:
        if not self.deltas:
            if self.fail:
                raise RuntimeError("model went away")
            raise StopAsyncIteration
        return self.deltas.pop(0)

    @property
    def response(self) -> Any:
        return self._response


def test_ask_stream_forwards_each_delta_and_reports_failures(make_client: Callable[..., TestClient]) -> None:
    rag = make_rag()
    real = rag.ask(QUESTION)
    calls: list[Any] = []

    def fake(question: str, options: Any = None, *, identity: Any = None, **kw: Any) -> _FakeStream:
        calls.append(identity)
        return _FakeStream(["Customers may ", "request a refund. ", "[Source 1]"], real)

    rag.aask_stream = fake  # type: ignore[method-assign]
    c = make_client(rag=rag)
    response = c.post("/ask", headers={"Accept": "text/event-stream"}, json={"question": QUESTION})
    tokens = [d for n, d in sse_events(response.text) if n == "token"]
    assert tokens == ["Customers may ", "request a refund. ", "[Source 1]"]
    assert calls[0].tenant == "default"

    rag.aask_stream = lambda *a, **k: _FakeStream(["partial "], real, fail=True)  # type: ignore[method-assign]
    events = sse_events(c.post("/ask", headers={"Accept": "text/event-stream"}, json={"question": "q"}).text)
    assert events[0] == ("token", "partial ") and events[-1][0] == "error"
    assert "model went away" in events[-1][1]["error"]


def test_ask_stream_without_streaming_facade_sends_one_delta(make_client: Callable[..., TestClient]) -> None:
    rag = make_rag()
    rag.aask_stream = None  # type: ignore[assignment,method-assign]
    c = make_client(rag=rag)
    upload(c, None, "refunds.md", REFUNDS)
    events = sse_events(c.post("/ask", headers={"Accept": "text/event-stream"}, json={"question": QUESTION}).text)
    assert [n for n, _ in events] == ["token", "sources", "citations", "done"]
    assert "[Source 1]" in events[0][1]


def test_documents_and_delete(client: TestClient) -> None:
    docs = client.get("/documents", headers=auth(KEY_A)).json()["documents"]
    assert len(docs) == 1 and docs[0]["title"] == "Refunds" and docs[0]["status"] == "indexed"
    doc_id = docs[0]["document_id"]
    assert doc_id.startswith("/")  # an absolute staging path: the route must accept slashes
    response = client.delete(f"/documents/{doc_id}", headers=auth(KEY_A))
    assert response.status_code == 200 and response.json()["chunks_removed"] >= 1
    assert not Path(doc_id).exists()  # the staged upload goes with it
    assert client.post("/search", headers=auth(KEY_A), json={"query": "refund"}).json()["results"] == []
    assert client.get("/documents?status=indexed", headers=auth(KEY_A)).json()["documents"] == []
    again = client.delete(f"/documents/{doc_id}", headers=auth(KEY_A))
    assert again.status_code == 404 and "no document" in again.json()["error"]


def test_status_counts_what_the_caller_can_see(client: TestClient) -> None:
    status = client.get("/status", headers=auth(KEY_A)).json()
    assert status["documents"] == 1 and status["indexed"] == 1 and status["tenant"] == "acme"
    assert status["chunks"] >= 1 and status["embedding_model"] == "test/hashing"
    assert status["ledger"]["ingests"] == 1 and status["ledger"]["documents_added"] == 1  # acme's, not globex's
    client.post("/search", headers=auth(KEY_A), json={"query": "refund"})
    assert client.get("/status", headers=auth(KEY_A)).json()["ledger"]["searches"] == 1
    other = client.get("/status", headers=auth(KEY_B)).json()["ledger"]  # globex sees none of acme's work
    assert other.get("searches", 0) == 0 and other["ingests"] == 1 and other["busy_rejections"] == 0


def test_an_oversized_metadata_filter_is_a_400(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    from ragwright import Rag, RagOptions
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(), rag_options=RagOptions(use_hybrid_search=True))
    c = make_client(keyed_config(tmp_path, max_filter_terms=512), rag=rag)
    upload(c, KEY_A, "refunds.md", REFUNDS)
    cases = {
        "a long list": {"k": list(range(40_000))},
        "many keys": {f"k{i}": i for i in range(5_000)},
        "just over": {"k": list(range(500)), **{f"k{i}": i for i in range(13)}},
    }
    for name, flt in cases.items():
        for route, body in (("/search", {"query": "refund"}), ("/ask", {"question": "refund?"})):
            response = c.post(route, headers=auth(KEY_A), json={**body, "options": {"metadata_filter": flt}})
            assert response.status_code == 400, (name, route, response.text)
            assert "metadata_filter" in response.json()["error"] and response.json()["field"] == "metadata_filter"
    largest = {"k": list(range(500)), **{f"k{i}": i for i in range(12)}}  # the limit itself works on SQLite
    ok = c.post("/search", headers=auth(KEY_A), json={"query": "refund", "options": {"metadata_filter": largest}})
    assert ok.status_code == 200, ok.text


def test_openapi_lists_every_route(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    listed = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}
    assert listed == set(API_ROUTES)
    ingest_body = spec["paths"]["/ingest"]["post"]["requestBody"]["content"]
    assert set(ingest_body) == {"multipart/form-data", "application/json"}
    schemes = spec["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} >= {"http", "apiKey"}
    from fastapi.routing import APIRoute

    routes = [r for r in client.app.routes if isinstance(r, APIRoute)]  # type: ignore[attr-defined]
    documented = {(m, r.path.replace(":path", "")) for r in routes if r.include_in_schema for m in r.methods}
    assert documented == set(API_ROUTES)
    assert [r.path for r in routes if not r.include_in_schema] == ["/"]  # only the page is left out


def test_page_and_assets_are_served_locally(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for asset in ("/static/app.js", "/static/style.css"):
        assert asset in page.text and client.get(asset).status_code == 200
    assert "http://" not in page.text and "https://" not in page.text  # no CDN
    js = client.get("/static/app.js").text
    assert "https://" not in js and "text/event-stream" in js


BAD_REQUESTS: list[tuple[str, str, dict[str, Any], int, str]] = [
    ("POST", "/search", {"json": {"query": "x", "options": {"top_kk": 3}}}, 400, "did you mean 'top_k'"),
    ("POST", "/search", {"json": {"query": "x", "options": {"top_k": "five"}}}, 400, "top_k"),
    ("POST", "/search", {"json": {"query": "x", "options": {"top_k": 100000}}}, 400, "<= 100"),
    ("POST", "/search", {"json": {"query": "x", "options": {"min_score": -1}}}, 400, "min_score"),
    ("POST", "/search", {"json": {"query": "x", "options": {"filter": {"a": 1}}}}, 400, "metadata_filter"),
    ("POST", "/search", {"json": {"query": "x", "options": {"ensemble": {"rrf_kk": 1}}}}, 400, "rrf_k"),
    ("POST", "/search", {"json": {"query": "x", "options": {"metadata_filter": 3}}}, 400, "metadata_filter"),
    ("POST", "/search", {"json": {"query": "x", "options": [1, 2]}}, 422, "options"),
    ("POST", "/search", {"json": {"query": ""}}, 422, "query"),
    ("POST", "/search", {"json": {"q": "refund"}}, 422, "query"),
    ("POST", "/search", {"content": b"{not json", "headers": {"content-type": "application/json"}}, 422, "JSON"),
    ("POST", "/ask", {"json": {"question": "x", "options": {"answer_mode": "poetry"}}}, 400, "answer_mode"),
    ("POST", "/ask", {"json": {"question": "x", "options": {"top_k": 0}}}, 400, "top_k"),
    ("GET", "/documents?status=lost", {}, 400, "status"),
    ("DELETE", "/documents/not-a-document", {}, 404, "no document"),
    ("POST", "/ingest", {"content": b"hello", "headers": {"content-type": "text/plain"}}, 400, "multipart"),
    ("POST", "/ingest", {"data": {"acl": "*"}, "files": [("other", ("a.md", b"x", "text/plain"))]}, 400, "'files'"),
    ("POST", "/ingest", {"files": [("files", ("..", b"x", "text/plain"))]}, 400, "file name"),
    ("POST", "/ingest", {"json": {"source": ""}}, 400, "source"),
    ("POST", "/ingest", {"content": b"[1]", "headers": {"content-type": "application/json"}}, 400, "source"),
    ("GET", "/nowhere", {}, 404, "Not Found"),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "needle"), BAD_REQUESTS)
def test_user_mistakes_get_a_4xx_with_a_message(
    client: TestClient, method: str, path: str, kwargs: dict[str, Any], status: int, needle: str
) -> None:
    headers = {**auth(KEY_A), **kwargs.pop("headers", {})}
    response = client.request(method, path, headers=headers, **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert needle.lower() in body["error"].lower(), body


def test_errors_are_json_even_for_a_broken_store(tmp_path: Path) -> None:
    from ragwright.server import create_app

    rag = make_rag()
    c = TestClient(create_app(rag, {"staging_dir": str(tmp_path)}), raise_server_exceptions=False)

    def broken(*a: Any, **k: Any) -> Any:
        raise OSError("disk on fire")

    rag.store.list_records = broken  # type: ignore[method-assign]
    response = c.get("/documents")
    assert response.status_code == 500 and "internal error" in response.json()["error"]
    assert json.loads(response.text)  # JSON, not a traceback page
