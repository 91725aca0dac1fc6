"""The HTTP server's /ask reaches routing: ``"route": "auto"`` answers with the route and its reason,
as the API key's caller (a hidden document never comes back)."""

from __future__ import annotations

import pytest

from ragwright.model.identity import Identity
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

pytest.importorskip("fastapi")

AUTHOR = b"# Author\n\nAdriana Trigiani is an author. She lives in Greenwich Village in New York City."
SECRET = b"# Board minutes\n\nAdriana Trigiani secretly acquired Zorblax Holdings in Geneva."


def test_ask_with_route_auto() -> None:
    from fastapi.testclient import TestClient

    from ragwright.server import create_app

    rag = Rag(MemoryStore(), HashingEmbedder(), identity=Identity())
    rag.ingest(BytesSource({"author.md": AUTHOR}))
    rag.ingest(BytesSource({"secret.md": SECRET}), acl=["board"])
    with TestClient(create_app(rag, {"staging_dir": None})) as client:
        hello = client.post("/ask", json={"question": "hello!", "route": "auto"}).json()
        assert hello["route"] == "none" and hello["sources"] == [] and hello["route_reason"].startswith("rules:")
        q = "How is Adriana Trigiani related to Zorblax Holdings?"
        body = client.post("/ask", json={"question": q, "route": "auto"}).json()
        assert body["route"] == "hybrid" and "graph_local unavailable (no entity graph" in body["route_reason"]
        assert all(s["document_id"] != "secret.md" for s in body["sources"]) and "Zorblax" not in body["answer"]
        plain = client.post("/ask", json={"question": "hello!", "route": "off"}).json()
        assert "route" not in plain and plain["sources"]
        bad = client.post("/ask", json={"question": "hello!", "route": "smart"})
        assert bad.status_code in (400, 422)


def test_a_route_table_routes_every_ask_that_names_no_path() -> None:
    from fastapi.testclient import TestClient

    from ragwright.server import create_app

    rag = Rag(MemoryStore(), HashingEmbedder(), identity=Identity())
    rag.ingest(BytesSource({"author.md": AUTHOR}))
    app = create_app(rag, {"staging_dir": None})
    app.state.service.default_route = "auto"  # what `ragwright serve` sets from a [route] table
    with TestClient(app) as client:
        hello = client.post("/ask", json={"question": "hello!"}).json()
        assert hello["route"] == "none" and hello["sources"] == []
        off = client.post("/ask", json={"question": "hello!", "route": "off"}).json()
        assert "route" not in off and off["sources"]  # the request's own choice wins
        hierarchical = client.post("/ask", json={"question": "hello!", "hierarchical": True}).json()
        assert "route" not in hierarchical  # a request that names its path is not routed
