"""Hierarchical retrieval reached from the config file, the CLI and the HTTP server."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main
from ragwright.config.settings import Settings
from ragwright.errors import ConfigError

from .conftest import BREAD, ROCKETS, SECRET, WHALES


def test_config_file_hierarchy_table() -> None:
    settings = Settings.from_dict({"hierarchy": {"combine": "two_stage", "documents": 3}})
    assert settings.hierarchy is not None and settings.hierarchy.combine == "two_stage"
    assert settings.to_dict()["hierarchy"]["documents"] == 3
    assert Settings.from_dict({}).hierarchy is None and Settings.from_dict({}).to_dict()["hierarchy"] is False
    assert Settings.from_dict({"hierarchy": True}).hierarchy is not None
    with pytest.raises(ConfigError, match="did you mean 'documents'"):
        Settings.from_dict({"hierarchy": {"document": 3}})
    with pytest.raises(ConfigError, match=r"hierarchy\.combine"):
        Settings.from_dict({"hierarchy": {"combine": "sum"}})


def test_config_builds_the_rag_with_a_hierarchy() -> None:
    from ragwright.config.wiring import build_rag
    from ragwright.stores.memory import MemoryStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = build_rag(Settings.from_dict({"hierarchy": {"tree": False}}), MemoryStore(), HashingEmbedder())
    assert rag.hierarchy is not None and rag.hierarchy.options.tree is False


def test_cli_ingest_search_and_ask_hierarchical(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, data in (("whales.md", WHALES), ("rockets.md", ROCKETS), ("bread.md", BREAD)):
        (docs / name).write_bytes(data)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "secret.md").write_bytes(SECRET)
    run = CliRunner().invoke
    base = ["--store", str(tmp_path / "s.db"), "--embedder", "wordllama"]
    done = run(main, [*base, "ingest", str(docs), "--hierarchy", "--tenant", "acme"])
    assert done.exit_code == 0, done.output
    # a store with summaries keeps them in step without the flag
    assert run(main, [*base, "ingest", str(secret), "--tenant", "acme", "--acl", "board"]).exit_code == 0
    found = run(main, [*base, "--json", "search", "--hierarchical", "rocket engines thrust", "--tenant", "acme"])
    assert found.exit_code == 0, found.output
    out = json.loads(found.output)
    assert out["results"][0]["document_id"].endswith("rockets.md")
    assert out["documents"][0]["document_id"].endswith("rockets.md")
    hidden = run(main, [*base, "--json", "search", "--hierarchical", "Zorblax merger Geneva", "--tenant", "acme"])
    assert "Zorblax" not in hidden.output
    board = run(
        main, [*base, "--json", "search", "--hierarchical", "Zorblax merger", "--tenant", "acme", "--groups", "board"]
    )
    assert "Zorblax" in board.output
    asked = run(
        main, [*base, "--json", "ask", "--hierarchical", "How far do humpback whales migrate?", "--tenant", "acme"]
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.output)
    assert answer["citations"] and "documents" in answer["retrieval_path"]
    refused = run(main, [*base, "search", "--hierarchical", "x", "--filter", "a=b"])
    assert refused.exit_code == 2 and "metadata filter" in refused.output


def test_server_search_and_ask_hierarchical(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from ragwright.hierarchy import HierarchyOptions
    from ragwright.rag import Rag
    from ragwright.server import create_app, hash_key
    from ragwright.sources import BytesSource
    from ragwright.stores.sqlite import SqliteStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder(max_tokens=64), hierarchy=HierarchyOptions())
    rag.ingest(BytesSource({"whales.md": WHALES, "rockets.md": ROCKETS}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    key = "acme-key-0123456789abcdef"
    config = {"keys": [{"hash": hash_key(key), "tenant": "acme"}], "staging_dir": str(tmp_path / "staging")}
    with TestClient(create_app(rag, config)) as client:
        headers = {"Authorization": f"Bearer {key}"}
        body = {"query": "Zorblax merger whales sanctuary", "hierarchical": True, "options": {"top_k": 5}}
        response = client.post("/search", headers=headers, json=body)
        assert response.status_code == 200, response.text
        data = response.json()
        assert data["results"] and "hierarchy" in data and "Zorblax" not in response.text
        assert all(not r["document_id"].endswith("secret.md") for r in data["results"])
        asked = client.post(
            "/ask", headers=headers, json={"question": "How far do humpback whales migrate?", "hierarchical": True}
        )
        assert asked.status_code == 200, asked.text
        assert asked.json()["citations"] and "documents" in asked.json()["retrieval_path"]
