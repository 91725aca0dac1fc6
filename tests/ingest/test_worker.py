"""The distributed worker over the JobQueue protocol (issue 23 seam 4), without a database: a queue
double in memory; the PostgreSQL queue itself is tested in tests/stores/postgres/test_workers.py."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import ragwright.stores.postgres.queue as pg_queue
from ragwright.chunk import make_chunker
from ragwright.errors import ConfigError
from ragwright.ingest import IngestPipeline
from ragwright.ingest.worker import Worker, enqueue
from ragwright.sources import BytesSource, SourceItem, open_sources
from ragwright.stores.base import Job, JobQueue
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder


class ListQueue:
    """A JobQueue in a list: every job claimable once, leases ignored."""

    def __init__(self) -> None:
        self.jobs: list[dict[str, Any]] = []

    def put(
        self,
        items: Iterable[SourceItem],
        *,
        tenant: str,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        added = 0
        for item in items:
            if any(j["item"].document_id == item.document_id and j["status"] == "queued" for j in self.jobs):
                continue
            data = item.load()
            loaded = SourceItem(item.document_id, item.uri, lambda d=data: d, name_hint=item.name_hint)
            self.jobs.append(
                {"item": loaded, "tenant": tenant, "acl": acl, "meta": dict(metadata or {}), "status": "queued"}
            )
            added += 1
        return added

    def claim(self, worker: str, limit: int, lease_seconds: float) -> list[Job]:
        out = []
        for i, j in enumerate(self.jobs):
            if j["status"] == "queued" and len(out) < limit:
                j["status"], j["worker"] = "running", worker
                acl = None if j["acl"] is None else tuple(j["acl"])
                out.append(Job(i, j["item"], j["tenant"], acl, j["meta"], 1))
        return out

    def renew(self, worker: str, job_ids: Sequence[int], lease_seconds: float) -> int:
        return len(job_ids)

    def finish(self, worker: str, results: Mapping[int, str | None], *, status: str = "done") -> None:
        for job_id, error in results.items():
            self.jobs[job_id]["status"], self.jobs[job_id]["error"] = status, error

    def release(self, worker: str, job_ids: Sequence[int], error: str) -> None:
        for job_id in job_ids:
            self.jobs[job_id]["status"] = "queued"

    def counts(self) -> dict[str, int]:
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        for j in self.jobs:
            out[j["status"]] += 1
        return out

    def pending(self) -> int:
        counts = self.counts()
        return counts["queued"] + counts["running"]


def test_a_worker_drains_any_job_queue_through_a_pipeline() -> None:
    queue = ListQueue()
    assert isinstance(queue, JobQueue)
    docs = {"a.md": b"# A\n\nalpha text", "b.md": b"# B\n\nbeta text", "empty.md": b"  "}
    assert enqueue(queue, BytesSource(docs), tenant="acme", acl=["hr"]) == 3
    assert enqueue(queue, [BytesSource(docs)]) == 0  # already waiting
    store = MemoryStore()
    pipeline = IngestPipeline(store, HashingEmbedder(), make_chunker(HashingEmbedder()))
    report = Worker(pipeline, queue, batch_size=2, poll_seconds=0.01).run()
    assert (report.jobs_done, report.batches, report.ingest.added, len(report.ingest.failed)) == (3, 2, 2, 1)
    assert queue.counts() == {"queued": 0, "running": 0, "done": 3, "failed": 0}
    assert [j["error"] is None for j in queue.jobs] == [True, True, False]
    record = store.get_record("a.md")
    assert record is not None and (record.tenant, record.acl) == ("acme", ("hr",))


def test_a_worker_needs_a_job_queue_and_enqueue_needs_something() -> None:
    pipeline = IngestPipeline(MemoryStore(), HashingEmbedder(), make_chunker(HashingEmbedder()))
    with pytest.raises(ConfigError, match="JobQueue"):
        Worker(pipeline, MemoryStore())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="nothing to ingest"):
        enqueue(ListQueue(), [])
    with pytest.raises(ConfigError, match="no such file"):
        open_sources("/nonexistent/folder")


def test_the_postgres_queue_imports_nothing_above_the_store_layer() -> None:
    tree = ast.parse(Path(pg_queue.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {m for m in imported if m.startswith(("ragwright.ingest", "ragwright.rag"))}, imported
