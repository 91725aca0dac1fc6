"""``"collections"`` on the HTTP server's /search and /ask: the caller's identity in every source."""

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragwright import Rag, RagOptions
from ragwright.server import create_app, hash_key
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

KEY_A, KEY_B, KEY_FIN = "acme-key-0123456789abcdef", "globex-key-0123456789abcdef", "acme-finance-key-0123456789"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def served(tmp_path: Path) -> Any:
    store = MemoryStore()
    rag = Rag(store, HashingEmbedder(), rag_options=RagOptions(extractive_min_similarity=0.2, answerability="off"))
    rag.ingest(BytesSource({"refunds.md": b"# Refunds\n\nA refund is paid within 30 days."}), tenant="acme")
    name = store.create_collection("second")
    second = Rag(store.open_collection(name), HashingEmbedder())
    second.ingest(BytesSource({"merger.md": b"# Merger\n\nRefunds are frozen until the merger."}), tenant="globex")
    second.ingest(
        BytesSource({"budget.md": b"# Budget\n\nThe refund budget is four million."}), tenant="acme", acl=["finance"]
    )
    other = tmp_path / "other.db"
    with Rag(SqliteStore(other), HashingEmbedder()) as third:
        third.ingest(BytesSource({"desk.md": b"# Desk\n\nThe refund desk opens at nine."}), tenant="acme")
    config = {
        "keys": [
            {"hash": hash_key(KEY_A), "tenant": "acme"},
            {"hash": hash_key(KEY_B), "tenant": "globex"},
            {"hash": hash_key(KEY_FIN), "tenant": "acme", "groups": ["finance"]},
        ],
        "staging_dir": str(tmp_path / "staging"),
    }
    app = create_app(rag, config)
    app.state.service.federation_stores = {"other": str(other)}
    with TestClient(app) as client:
        yield client, name


def docs(client: TestClient, key: str, collections: Any, **body: Any) -> set[tuple[str, str]]:
    response = client.post("/search", json={"query": "refund", "collections": collections, **body}, headers=auth(key))
    assert response.status_code == 200, response.text
    return {(r["source"], r["document_id"]) for r in response.json()["results"]}


def test_each_caller_sees_only_their_own_in_every_source(served: Any) -> None:
    client, name = served
    assert docs(client, KEY_A, f"live,{name}") == {("live", "refunds.md")}
    assert docs(client, KEY_FIN, ["live=1", f"{name}=0.5"]) == {("live", "refunds.md"), (name, "budget.md")}
    assert docs(client, KEY_B, f"live,{name}") == {(name, "merger.md")}
    assert docs(client, KEY_A, f"live,{name},other") == {("live", "refunds.md"), ("other", "desk.md")}
    payload = client.post("/search", json={"query": "refund", "collections": "live,other"}, headers=auth(KEY_A)).json()
    assert payload["federation"]["score_scale"] == "opaque_ranking"
    assert payload["documents"]["other"]["desk.md"]["title"] == "Desk"


def test_a_request_cannot_name_a_uri_an_unknown_source_or_an_identity(served: Any) -> None:
    client, _ = served
    for collections in ("postgresql://evil@host/db", "/etc/passwd.db", "nope", ""):
        response = client.post("/search", json={"query": "x", "collections": collections}, headers=auth(KEY_A))
        assert response.status_code == 400, (collections, response.text)
    response = client.post(
        "/search", json={"query": "x", "collections": "live", "tenant": "globex"}, headers=auth(KEY_A)
    )
    assert response.status_code == 403


def test_ask_over_collections(served: Any) -> None:
    client, name = served
    response = client.post(
        "/ask", json={"question": "how fast is a refund paid?", "collections": f"live,{name}"}, headers=auth(KEY_B)
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["federation"]["sources"] == ["live", name]
    assert {s["document_id"] for s in answer["sources"]} <= {"merger.md"}
