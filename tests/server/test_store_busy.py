"""Issue 21 item 7 over HTTP: while another process holds the SQLite store's write lock, searches answer
from the last committed state and an ingest is refused with 503 and Retry-After ("busy, retry")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from ragwright import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder
from tests.server.conftest import REFUNDS, upload
from tests.stores.test_sqlite_locking import write_lock_held


def test_a_busy_store_answers_searches_and_refuses_writes_with_503(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    path = tmp_path / "s.db"
    rag = Rag(SqliteStore(path, busy_timeout=0.2), HashingEmbedder())
    c = make_client(rag=rag)
    upload(c, None, "refunds.md", REFUNDS)
    with write_lock_held(path):
        found = c.post("/search", headers={"X-Requested-With": "tests"}, json={"query": "refund within 30 days"})
        assert found.status_code == 200, found.text
        assert found.json()["results"], "the committed document is found"
        busy = c.post(
            "/ingest",
            headers={"X-Requested-With": "tests"},
            files=[("files", ("later.md", b"# Later\n\nWritten while busy.\n", "text/markdown"))],
        )
        assert busy.status_code == 503, busy.text
        assert "busy" in busy.json()["error"] and "move it aside" not in busy.json()["error"]
        assert busy.headers["retry-after"]
    assert upload(c, None, "later.md", b"# Later\n\nWritten once the lock is free.\n")["added"] == 1
