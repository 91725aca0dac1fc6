"""``ragwright serve``: key hashing, the loopback rule without keys, config errors, a served store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from click.testing import CliRunner
from fastapi.testclient import TestClient

from ragwright.cli import main
from ragwright.server import hash_key


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_hash_key_prints_the_sha256() -> None:
    key = "a-long-random-api-key-123"
    result = run("serve", "--hash-key", key)
    assert result.exit_code == 0
    assert result.stdout.strip() == hashlib.sha256(key.encode()).hexdigest() == hash_key(key)
    assert json.loads(run("--json", "serve", "--hash-key", key).stdout)["hash"] == hash_key(key)
    assert run("serve", "--hash-key", "short").exit_code == 2


def test_without_keys_only_loopback(tmp_path: Path) -> None:
    result = run("serve", "--store", str(tmp_path / "s.db"), "--host", "0.0.0.0")
    assert result.exit_code == 2
    assert "refusing to serve on 0.0.0.0 without API keys" in result.stderr
    assert not (tmp_path / "s.db").exists()  # refused before anything was opened


def test_bad_config_is_one_clear_line(tmp_path: Path) -> None:
    config = tmp_path / "keys.json"
    config.write_text(json.dumps({"keys": [{"hash": "nothex", "tenant": "t"}]}))
    result = run("serve", "--api-keys", str(config))
    assert result.exit_code == 2 and "keys[0].hash" in result.stderr
    result = run("serve", "--api-keys", str(tmp_path / "missing.json"))
    assert result.exit_code == 2 and "cannot read the server config" in result.stderr


def test_serve_runs_the_app_over_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "public-facing-key-0123456789"
    config = tmp_path / "keys.json"
    config.write_text(json.dumps({"keys": [{"hash": hash_key(key), "tenant": "acme"}]}))
    seen: dict[str, Any] = {}

    def fake_run(app: Any, host: str, port: int, **kwargs: Any) -> None:
        seen.update(host=host, port=port)
        with TestClient(app) as client:
            seen["health"] = client.get("/health").json()
            seen["anonymous"] = client.get("/status").status_code
            seen["status"] = client.get("/status", headers={"X-API-Key": key}).json()

    monkeypatch.setattr(uvicorn, "run", fake_run)
    store = tmp_path / "store.db"
    args = ("--embedder", "wordllama", "serve", "--store", str(store), "--host", "0.0.0.0", "--port", "8123")
    result = run(*args, "--api-keys", str(config), "--create")
    assert result.exit_code == 0, result.output
    assert seen["host"] == "0.0.0.0" and seen["port"] == 8123
    assert seen["health"]["auth"] == "api_key" and seen["anonymous"] == 401
    assert seen["status"]["tenant"] == "acme" and seen["status"]["documents"] == 0
    assert store.exists()


def test_a_missing_store_is_refused_unless_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: `serve` in a folder without a store silently created an empty one."""
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: None)
    monkeypatch.chdir(tmp_path)
    result = run("--embedder", "wordllama", "serve")
    assert result.exit_code == 2 and "no store at .ragwright/store.db" in result.stderr and "--create" in result.stderr
    assert not (tmp_path / ".ragwright").exists()
    result = run("--embedder", "wordllama", "serve", "--create")
    assert result.exit_code == 0 and "creating an empty store" in result.stderr
    assert (tmp_path / ".ragwright" / "store.db").is_file()


def test_allow_host_adds_names_the_server_answers_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}

    def fake_run(app: Any, host: str, port: int, **kwargs: Any) -> None:
        with TestClient(app) as client:
            for name in ("rag.lan", "rag.lan:8000", "localhost:8000", "evil.example"):
                seen[name] = client.get("/documents", headers={"Host": name}).status_code

    monkeypatch.setattr(uvicorn, "run", fake_run)
    store = str(tmp_path / "store.db")
    result = run("--embedder", "wordllama", "serve", "--store", store, "--allow-host", "rag.lan", "--create")
    assert result.exit_code == 0, result.output
    assert seen == {"rag.lan": 200, "rag.lan:8000": 200, "localhost:8000": 200, "evil.example": 400}
    bad = run("serve", "--store", store, "--allow-host", "evil.example/path")
    assert bad.exit_code == 2 and "allowed_hosts" in bad.stderr


def test_the_app_stops_its_parser_worker_when_it_shuts_down(tmp_path: Path, shared: Path) -> None:
    """Issue 21 item 10: ``serve`` stopped by SIGTERM shuts the app down, then uvicorn re-raises the
    signal (no atexit): the parser helper must go with the app's shutdown."""
    from ragwright import Rag
    from ragwright.parse.limits import worker_pids
    from ragwright.server import create_app
    from ragwright.stores.memory import MemoryStore
    from ragwright.testing.doubles import HashingEmbedder

    pdf = next((shared / "docs-corpus" / "pdf").glob("*.pdf"))
    app = create_app(Rag(MemoryStore(), HashingEmbedder()), {"staging_dir": str(tmp_path / "staging")})
    with TestClient(app) as client:
        files = [("files", (pdf.name, pdf.read_bytes(), "application/pdf"))]
        response = client.post("/ingest", headers={"X-Requested-With": "t"}, files=files)
        assert response.status_code == 200 and response.json()["added"] == 1
        assert worker_pids()  # the PDF was parsed in the helper process
    assert worker_pids() == []
