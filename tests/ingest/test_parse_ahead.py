"""Parsing ahead (issue 26 item 6): with a pool of parser workers, the next files are parsed while the
producer chunks this one; results and dead letters are those of a sequential run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.ingest import parse_ahead
from ragwright.parse import limits
from ragwright.rag import Rag
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


@pytest.fixture
def two_workers() -> Iterator[None]:
    before = limits.pool_size()
    limits.configure(workers=3)
    yield
    limits.configure(workers=before)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(6):
        (root / f"d{i}.md").write_text(f"# Note {i}\n\nThe shipment numbered {1000 + i} left the north dock.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not really a pdf")
    return root


class Watch:
    """parse_bytes, slowed down, counting how many run at once."""

    def __init__(self, real: Any) -> None:
        self.real, self.now, self.most, self.calls = real, 0, 0, 0
        self.lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(0.3)
            return self.real(*args, **kwargs)
        finally:
            with self.lock:
                self.now -= 1


def chunks_of(rag: Rag) -> dict[str, list[str]]:
    return {
        Path(r.document_id).name: [c.text for c in rag.store.document_chunks(r.document_id)]
        for r in rag.store.list_records()
    }


def test_parsing_ahead_overlaps_parses_and_changes_nothing_else(
    two_workers: None, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sequential = Rag(SqliteStore(tmp_path / "a.db"), HashingEmbedder())
    monkeypatch.setattr(parse_ahead, "pool_size", lambda: 1)
    first = sequential.ingest(folder)
    monkeypatch.undo()

    ahead_watch = Watch(parse_ahead.parse_bytes)
    monkeypatch.setattr(parse_ahead, "parse_bytes", ahead_watch)
    rag = Rag(SqliteStore(tmp_path / "b.db"), HashingEmbedder())
    report = rag.ingest(folder)
    assert ahead_watch.calls >= 4 and ahead_watch.most >= 2  # two parses in flight at once
    assert report.added == first.added == 6
    assert [(f.document, f.stage) for f in report.failed] == [(f.document, f.stage) for f in first.failed]
    assert [f.stage for f in report.failed] == ["parse"] and "corrupt PDF" in report.failed[0].reason
    assert chunks_of(rag) == chunks_of(sequential)

    ahead_watch.calls = 0
    again = rag.ingest(folder)  # nothing changed: nothing is parsed ahead (the broken file is retried)
    assert again.unchanged == 6 and ahead_watch.calls <= 1


def test_one_worker_parses_nothing_ahead(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragwright.options import ParseOptions
    from ragwright.sources import FolderSource

    monkeypatch.setattr(parse_ahead, "pool_size", lambda: 1)
    ahead = parse_ahead.ParseAhead(SqliteStore(tmp_path / "s.db"), ParseOptions())
    items = list(FolderSource(folder).items())
    assert not ahead.active and list(ahead.wrap(items)) == items and ahead.started == 0


def _pid_after(seconds: float) -> int:
    import os

    time.sleep(seconds)
    return os.getpid()


def test_the_isolated_parser_runs_calls_in_separate_workers_at_once(two_workers: None) -> None:
    results: list[int] = []

    def call() -> None:
        results.append(limits.run_isolated(_pid_after, 1.0, timeout_s=60, max_memory_mb=1024))

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 3 and set(results) <= set(limits.worker_pids())  # three workers at once


def test_the_pool_size_is_validated_and_defaults_by_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="workers"):
        limits.configure(workers=0)
    for cores, workers in ((2, 1), (4, 1), (8, 2), (16, 4), (64, 4)):
        monkeypatch.setattr(limits.os, "cpu_count", lambda c=cores: c)
        assert limits.default_workers() == workers
