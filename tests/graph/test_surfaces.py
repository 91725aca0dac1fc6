"""GraphRAG reached from the config file ([graph]) and the HTTP server ("graph": "local" | "global"), the
server on SQLite and PostgreSQL."""

from pathlib import Path

import pytest

from ragwright.config.settings import Settings
from ragwright.errors import ConfigError

from .test_graph import AUTHOR, FILM, SECRET


def test_config_file_graph_table() -> None:
    settings = Settings.from_dict({"graph": {"hops": 1, "merge_similarity": None}})
    assert settings.graph is not None and settings.graph.hops == 1 and settings.graph.merge_similarity is None
    assert settings.to_dict()["graph"]["hops"] == 1
    assert Settings.from_dict({}).graph is None and Settings.from_dict({}).to_dict()["graph"] is False
    assert Settings.from_dict({"graph": True}).graph is not None
    with pytest.raises(ConfigError, match="did you mean 'hops'"):
        Settings.from_dict({"graph": {"hop": 1}})
    with pytest.raises(ConfigError, match=r"graph\.extractor"):
        Settings.from_dict({"graph": {"extractor": "magic"}})
    with pytest.raises(ConfigError, match=r"graph\.opening_boost"):
        Settings.from_dict({"graph": {"opening_boost": -1}})
    assert Settings.from_dict({"graph": {"entry_chunks": 0}}).graph.entry_chunks == 0  # type: ignore[union-attr]


def test_config_builds_the_rag_with_a_graph() -> None:
    from ragwright.config.wiring import build_rag
    from ragwright.stores.memory import MemoryStore
    from ragwright.testing.doubles import HashingEmbedder

    rag = build_rag(Settings.from_dict({"graph": {"hops": 1}}), MemoryStore(), HashingEmbedder())
    assert rag.graph is not None and rag.graph.options.hops == 1
    assert build_rag(Settings.from_dict({}), MemoryStore(), HashingEmbedder()).graph is None


def test_server_search_and_ask_through_the_graph(tmp_path: Path, location: str) -> None:
    from fastapi.testclient import TestClient

    from ragwright.graph import GraphOptions
    from ragwright.rag import Rag
    from ragwright.server import create_app, hash_key
    from ragwright.sources import BytesSource
    from ragwright.testing.doubles import HashingEmbedder
    from tests.graph.backends import open_at

    rag = Rag(open_at(location), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None))
    rag.ingest(BytesSource({"film.md": FILM, "author.md": AUTHOR}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": SECRET}), tenant="acme", acl=["board"])
    key = "acme-key-0123456789abcdef"
    config = {"keys": [{"hash": hash_key(key), "tenant": "acme"}], "staging_dir": str(tmp_path / "staging")}
    with TestClient(create_app(rag, config)) as client:
        headers = {"Authorization": f"Bearer {key}"}
        question = "Where does the director of Big Stone Gap live?"
        found = client.post("/search", headers=headers, json={"query": question, "graph": "local"})
        assert found.status_code == 200, found.text
        data = found.json()
        assert {"film.md", "author.md"} <= {r["document_id"] for r in data["results"]}
        assert "Adriana Trigiani" in {e["name"] for e in data["entities"]}
        assert "Zorblax" not in found.text and "secret.md" not in found.text  # the board's document
        for mode in ("local", "global"):
            asked = client.post("/ask", headers=headers, json={"question": question, "graph": mode})
            assert asked.status_code == 200, asked.text
            assert "Zorblax" not in asked.text and "secret.md" not in asked.text
        assert asked.json()["sources"]  # global: the community summaries' cited chunks
        bad = client.post("/ask", headers=headers, json={"question": question, "graph": "everything"})
        assert bad.status_code == 422
