"""Fixtures for the HTTP server tests: a fast in-memory Rag (hashing embedder) behind the app."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragwright import Rag, RagOptions
from ragwright.server import create_app, hash_key
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

KEY_A = "acme-key-0123456789abcdef"  # tenant acme, no groups
KEY_B = "globex-key-0123456789abcdef"  # tenant globex
KEY_FIN = "acme-finance-key-0123456789"  # tenant acme, group finance
KEY_RO = "acme-readonly-key-0123456789"  # tenant acme, read-only

REFUNDS = b"# Refunds\n\n## Policy\n\nCustomers may request a refund within 30 days of delivery.\n"
SECRET = b"# Globex merger\n\nThe merger with Initech closes in March; refunds are frozen until then.\n"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def make_rag() -> Rag:
    return Rag(
        MemoryStore(),
        HashingEmbedder(),
        rag_options=RagOptions(use_hybrid_search=True, extractive_min_similarity=0.3),
    )


def keyed_config(tmp_path: Path, **limits: Any) -> dict[str, Any]:
    return {
        "keys": [
            {"hash": hash_key(KEY_A), "tenant": "acme", "name": "alice"},
            {"hash": hash_key(KEY_B), "tenant": "globex"},
            {"hash": hash_key(KEY_FIN), "tenant": "acme", "groups": ["finance"]},
            {"hash": hash_key(KEY_RO), "tenant": "acme", "read_only": True},
        ],
        "staging_dir": str(tmp_path / "staging"),
        "limits": limits,
    }


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(config=None, rag=None)`` → a TestClient (closed at the end of the test)."""
    clients: list[TestClient] = []

    def build(config: dict[str, Any] | None = None, rag: Rag | None = None) -> TestClient:
        cfg = config if config is not None else {"staging_dir": str(tmp_path / "staging")}
        client = TestClient(create_app(rag or make_rag(), cfg))
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient], tmp_path: Path) -> TestClient:
    """A keyed server with acme's refund policy and globex's merger note ingested."""
    c = make_client(keyed_config(tmp_path))
    upload(c, KEY_A, "refunds.md", REFUNDS)
    upload(c, KEY_B, "merger.md", SECRET)
    return c


def upload(client: TestClient, key: str | None, name: str, data: bytes, **form: Any) -> Any:
    headers = auth(key) if key else {"X-Requested-With": "tests"}  # key-less: the anti-CSRF header, as the page
    response = client.post("/ingest", headers=headers, files=[("files", (name, data, "text/markdown"))], data=form)
    assert response.status_code == 200, response.text
    return response.json()


def sse_events(text: str) -> list[tuple[str, Any]]:
    """Parse a server-sent event stream into (event, JSON data) pairs."""
    import json

    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        events.append((name, json.loads("\n".join(data))))
    return events
