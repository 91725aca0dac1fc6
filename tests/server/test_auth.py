"""API keys → identities: 401/403, tenant isolation through every endpoint, no identity from bodies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragwright.errors import ConfigError
from ragwright.server import ServerConfig, hash_key
from tests.server.conftest import KEY_A, KEY_B, KEY_FIN, KEY_RO, REFUNDS, SECRET, auth, keyed_config, upload

DATA_ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/status", {}),
    ("GET", "/documents", {}),
    ("DELETE", "/documents/x", {}),
    ("POST", "/search", {"json": {"query": "refund"}}),
    ("POST", "/ask", {"json": {"question": "refund?"}}),
    ("POST", "/ingest", {"files": [("files", ("a.md", b"# A\n\nalpha", "text/markdown"))]}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), DATA_ENDPOINTS)
def test_every_data_endpoint_needs_a_key(client: TestClient, method: str, path: str, kwargs: dict[str, Any]) -> None:
    missing = client.request(method, path, **kwargs)
    assert missing.status_code == 401 and "API key is required" in missing.json()["error"]
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = client.request(method, path, headers=auth("not-a-configured-key-at-all"), **kwargs)
    assert wrong.status_code == 403 and "not valid" in wrong.json()["error"]
    bad_scheme = client.request(method, path, headers={"Authorization": "Basic abc"}, **kwargs)
    assert bad_scheme.status_code == 401


def test_x_api_key_header_works_too(client: TestClient) -> None:
    assert client.get("/status", headers={"X-API-Key": KEY_A}).json()["tenant"] == "acme"
    assert client.get("/status", headers={"X-API-Key": KEY_B}).json()["tenant"] == "globex"


def _docs(client: TestClient, key: str) -> set[str]:
    return {Path(d["document_id"]).name for d in client.get("/documents", headers=auth(key)).json()["documents"]}


def test_tenant_isolation_through_the_api(client: TestClient) -> None:
    # The globex note mentions refunds too: only the security filter keeps it from acme.
    for query in ("refunds merger Initech March", "refund within 30 days"):
        results = client.post("/search", headers=auth(KEY_A), json={"query": query, "options": {"top_k": 20}})
        assert {Path(r["document_id"]).name for r in results.json()["results"]} == {"refunds.md"}
    answer = client.post("/ask", headers=auth(KEY_A), json={"question": "When does the Initech merger close?"})
    assert all(Path(s["document_id"]).name == "refunds.md" for s in answer.json()["sources"])
    assert "Initech" not in answer.json()["answer"]
    streamed = client.post(
        "/ask", headers={**auth(KEY_A), "Accept": "text/event-stream"}, json={"question": "Initech merger March"}
    )
    assert "Initech" not in streamed.text.replace("Initech merger March", "")
    assert _docs(client, KEY_A) == {"refunds.md"} and _docs(client, KEY_B) == {"merger.md"}
    globex_doc = client.get("/documents", headers=auth(KEY_B)).json()["documents"][0]["document_id"]
    stolen = client.delete(f"/documents/{globex_doc}", headers=auth(KEY_A))
    assert stolen.status_code == 404  # as if it did not exist
    assert _docs(client, KEY_B) == {"merger.md"}
    assert client.get("/status", headers=auth(KEY_A)).json()["documents"] == 1


def test_same_file_name_in_two_tenants_stays_two_documents(client: TestClient) -> None:
    upload(client, KEY_A, "notes.md", b"# Notes\n\nacme notes about pricing\n")
    upload(client, KEY_B, "notes.md", b"# Notes\n\nglobex notes about pricing\n")
    a = client.post("/search", headers=auth(KEY_A), json={"query": "notes about pricing"}).json()["results"]
    assert [r["text"] for r in a if "notes" in r["text"]] == ["acme notes about pricing"]


def test_group_acl_of_uploads(client: TestClient) -> None:
    upload(client, KEY_FIN, "budget.md", b"# Budget\n\nThe 2027 budget is 4 million euros.\n")
    assert "budget.md" in _docs(client, KEY_FIN)
    assert "budget.md" not in _docs(client, KEY_A)  # same tenant, not in the finance group
    hits = client.post("/search", headers=auth(KEY_A), json={"query": "2027 budget million euros"}).json()
    assert all("budget" not in r["text"] for r in hits["results"])
    # a member may publish to the whole tenant; a non-member may not grant a group they are not in
    upload(client, KEY_FIN, "menu.md", b"# Menu\n\nSoup on Fridays.\n", acl="*")
    assert "menu.md" in _docs(client, KEY_A)
    one_file = [("files", ("x.md", b"# X\n\ny", "text/markdown"))]
    refused = client.post("/ingest", headers=auth(KEY_A), files=one_file, data={"acl": "finance"})
    assert refused.status_code == 403 and "finance" in refused.json()["error"]


def test_a_request_body_cannot_choose_the_identity(client: TestClient) -> None:
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("/search", {"query": "merger", "tenant": "globex"}),
        ("/search", {"query": "merger", "options": {"tenant": "globex"}}),
        ("/search", {"query": "merger", "options": {"groups": ["admin"]}}),
        ("/ask", {"question": "merger", "groups": ["finance"]}),
        ("/ask", {"question": "merger", "identity": {"tenant": "globex"}}),
        ("/ingest", {"source": "x", "tenant": "globex"}),
    ]
    for path, body in attempts:
        response = client.post(path, headers=auth(KEY_A), json=body)
        assert response.status_code == 403, (path, body, response.text)
        assert "come from your API key" in response.json()["error"]
    one_file = [("files", ("x.md", b"# X\n\ny", "text/markdown"))]
    form = client.post("/ingest", headers=auth(KEY_A), files=one_file, data={"tenant": "globex"})
    assert form.status_code == 403
    assert _docs(client, KEY_B) == {"merger.md"}


def test_read_only_keys_cannot_change_anything(client: TestClient) -> None:
    assert client.post("/search", headers=auth(KEY_RO), json={"query": "refund"}).status_code == 200
    doc = client.get("/documents", headers=auth(KEY_RO)).json()["documents"][0]["document_id"]
    assert client.delete(f"/documents/{doc}", headers=auth(KEY_RO)).status_code == 403
    refused = client.post("/ingest", headers=auth(KEY_RO), files=[("files", ("a.md", REFUNDS, "text/markdown"))])
    assert refused.status_code == 403 and "read-only" in refused.json()["error"]


def test_without_keys_everyone_is_anonymous_and_sees_public_content_only(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    from tests.server.conftest import make_rag

    rag = make_rag()
    from ragwright.sources import BytesSource

    rag.ingest(BytesSource({"public.md": REFUNDS}))
    rag.ingest(BytesSource({"private.md": SECRET}), acl=["board"])
    rag.ingest(BytesSource({"other-tenant.md": SECRET}), tenant="globex")
    c = make_client(rag=rag)
    assert c.get("/health").json()["auth"] == "none"
    assert [d["document_id"] for d in c.get("/documents").json()["documents"]] == ["public.md"]
    results = c.post("/search", json={"query": "merger Initech refunds", "options": {"top_k": 10}}).json()["results"]
    assert {r["document_id"] for r in results} == {"public.md"}
    assert c.get("/status").json()["tenant"] == "default"


def test_server_config_validation(tmp_path: Path) -> None:
    good = ServerConfig.from_dict({"keys": [{"hash": hash_key("k" * 20), "tenant": "t", "groups": ["g"]}]})
    assert good.auth_required and good.keys[0].identity.groups == ("g",)
    for bad, needle in [
        ({"keys": [{"hash": "abc", "tenant": "t"}]}, "64-hex"),
        ({"keys": [{"hash": hash_key("k" * 20), "tenant": ""}]}, "tenant"),
        ({"keys": [{"hash": hash_key("k" * 20), "groups": "admin"}]}, "groups"),
        ({"keys": [{"hash": hash_key("k" * 20), "tennant": "t"}]}, "tennant"),
        ({"limits": {"max_upload_bytes": 0}}, "max_upload_bytes"),
        ({"limits": {"max_uplod_bytes": 5}}, "did you mean"),
        ({"sources": {"a": 3}}, "sources"),
        ({"key": []}, "unknown server config key"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            ServerConfig.from_dict(bad)
    same = hash_key("k" * 20)
    with pytest.raises(ConfigError, match="twice"):
        ServerConfig.from_dict({"keys": [{"hash": same}, {"hash": same.upper()}]})
    path = tmp_path / "server.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        ServerConfig.load(path)
    path.write_text(json.dumps({"keys": [], "staging_dir": "uploads"}))
    assert ServerConfig.load(path).staging_dir == (tmp_path / "uploads").resolve()
    with pytest.raises(ConfigError, match="at least 16"):
        hash_key("short")


BROKEN_PDF = b"%PDF-1.7 this is not really a pdf"
KEY_DEFAULT = "default-tenant-key-0123456789"  # tenant default, no groups


def _with_default_key(tmp_path: Path) -> dict[str, Any]:
    config = keyed_config(tmp_path)
    config["keys"].append({"hash": hash_key(KEY_DEFAULT), "tenant": "default"})
    return config


def test_a_failed_upload_stays_in_its_tenant(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    """Issue 21 #1: a document that failed to parse was recorded as default|["*"]: its owner could not see
    it, and any default-tenant caller could list it and delete it, with the owner's uploaded file."""
    c = make_client(_with_default_key(tmp_path))
    report = upload(c, KEY_FIN, "broken.pdf", BROKEN_PDF)
    assert report["added"] == 0 and len(report["failed"]) == 1
    doc_id = report["document_ids"][0]
    for outsider in (KEY_DEFAULT, KEY_B, KEY_A):  # another tenant, and the owner's tenant outside its group
        assert c.get("/documents?status=failed", headers=auth(outsider)).json()["documents"] == []
        assert c.get("/status", headers=auth(outsider)).json()["failed_documents"] == []
        assert c.delete(f"/documents/{doc_id}", headers=auth(outsider)).status_code == 404
        assert Path(doc_id).read_bytes() == BROKEN_PDF  # the owner's upload is still there
    (mine,) = c.get("/documents?status=failed", headers=auth(KEY_FIN)).json()["documents"]
    assert (mine["document_id"], mine["tenant"], mine["acl"]) == (doc_id, "acme", ["finance"])
    assert [f["document"] for f in c.get("/status", headers=auth(KEY_FIN)).json()["failed_documents"]] == [doc_id]
    assert c.delete(f"/documents/{doc_id}", headers=auth(KEY_FIN)).status_code == 200
    assert not Path(doc_id).exists()


def test_a_configured_source_gives_each_tenant_its_own_copy(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """Issue 21 #2: when globex ingested {"source": "handbook"} after acme, acme's documents moved to globex,
    which could then delete them."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\n\nEmployees get 25 days of paid leave per year.\n")
    (folder / "broken.pdf").write_bytes(BROKEN_PDF)
    config = _with_default_key(tmp_path)
    config["sources"] = {"handbook": str(folder)}
    c = make_client(config)
    first = c.post("/ingest", headers=auth(KEY_A), json={"source": "handbook"}).json()
    assert (first["added"], len(first["failed"])) == (1, 1)
    acme_docs = {d["document_id"]: d for d in c.get("/documents", headers=auth(KEY_A)).json()["documents"]}
    for key in (KEY_B, KEY_DEFAULT):  # other tenants ingest the same source: their own copies
        again = c.post("/ingest", headers=auth(key), json={"source": "handbook"}).json()
        assert (again["added"], again["updated"], again["unchanged"], len(again["failed"])) == (1, 0, 0, 1)
    assert {d["document_id"]: d for d in c.get("/documents", headers=auth(KEY_A)).json()["documents"]} == acme_docs
    assert {d["tenant"] for d in acme_docs.values()} == {"acme"}
    globex_ids = {d["document_id"] for d in c.get("/documents", headers=auth(KEY_B)).json()["documents"]}
    assert len(globex_ids) == 2 and not globex_ids & set(acme_docs)
    for doc_id in acme_docs:  # globex cannot delete acme's copy …
        assert c.delete(f"/documents/{doc_id}", headers=auth(KEY_B)).status_code == 404
    for doc_id in globex_ids:  # … and deleting its own leaves acme's alone
        assert c.delete(f"/documents/{doc_id}", headers=auth(KEY_B)).status_code == 200
    hits = c.post("/search", headers=auth(KEY_A), json={"query": "paid leave per year"}).json()["results"]
    assert hits and hits[0]["document_id"] in acme_docs
    assert c.post("/ingest", headers=auth(KEY_A), json={"source": "handbook"}).json()["unchanged"] == 1
    assert (folder / "leave.md").exists() and (folder / "broken.pdf").exists()


def test_an_upload_never_replaces_a_document_the_uploader_cannot_see(client: TestClient) -> None:
    upload(client, KEY_FIN, "budget.md", b"# Budget\n\nThe 2027 budget is 4 million euros.\n")
    one_file = [("files", ("budget.md", b"# Budget\n\nnothing to see", "text/markdown"))]
    refused = client.post("/ingest", headers=auth(KEY_A), files=one_file)
    assert refused.status_code == 409 and "cannot see" in refused.json()["error"]
    (doc,) = [d for d in client.get("/documents", headers=auth(KEY_FIN)).json()["documents"] if d["title"] == "Budget"]
    assert b"4 million" in Path(doc["document_id"]).read_bytes()
    assert upload(client, KEY_FIN, "budget.md", b"# Budget\n\nThe 2027 budget is 5 million euros.\n")["updated"] == 1
