"""Concurrent ingestions never prune each other's staged copies (issue 21 item 9)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


class Held(HashingEmbedder):
    """Holds its first batch until released: its run has staged bytes but written no record yet."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting, self.release = threading.Event(), threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.waiting.set()
        assert self.release.wait(30)
        return super().embed_documents(texts)


def _folder(path: Path, prefix: str, n: int) -> Path:
    path.mkdir()
    for i in range(n):
        (path / f"{prefix}{i}.md").write_text(f"# {prefix} {i}\n\nThe marker {prefix}{i}tok is here.\n")
    return path


def test_a_concurrent_run_keeps_the_staged_copies_of_one_in_flight(tmp_path: Path) -> None:
    a_docs, b_docs = _folder(tmp_path / "a", "alpha", 5), _folder(tmp_path / "b", "beta", 2)
    path = tmp_path / "s.db"
    held = Held()
    first = Rag(SqliteStore(path), held)  # two store objects on one file: two processes
    second = Rag(SqliteStore(path), HashingEmbedder())
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(report=first.ingest(a_docs)))
    worker.start()
    try:
        assert held.waiting.wait(30)  # the first run has staged its bytes …
        assert second.ingest(b_docs).added == 2  # … when the second one ends and prunes
    finally:
        held.release.set()
        worker.join(30)
    assert result["report"].added == 5
    records = [r for r in second.store.list_records() if r.chunk_count]
    assert len(records) == 7
    assert all(second.store.staged(r.content_hash) is not None for r in records)

    moved = tmp_path / "moved"
    shutil.move(a_docs, moved)  # the sources are gone: a reindex must come from the staged copies
    shutil.rmtree(b_docs)
    report = second.reindex(embedder=HashingEmbedder(dimension=64, name="test/hashing-b"))
    assert report.switched and not report.build.failed and report.build.added == 7
    assert any("alpha3tok" in r.chunk.text for r in second.search("alpha3tok"))
    first.close()
    second.close()


def test_leases_go_when_the_run_ends_and_unreferenced_copies_are_pruned(tmp_path: Path) -> None:
    import sqlite3

    docs = _folder(tmp_path / "a", "alpha", 2)
    store = SqliteStore(tmp_path / "s.db")
    rag = Rag(store, HashingEmbedder())
    rag.ingest(docs)
    (docs / "alpha0.md").unlink()
    rag.ingest(docs, sync=True)
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("SELECT COUNT(*) FROM staging_leases").fetchone() == (0,)
    assert conn.execute("SELECT COUNT(*) FROM staged").fetchone() == (1,)  # the deleted file's copy went
    conn.close()
    rag.close()
