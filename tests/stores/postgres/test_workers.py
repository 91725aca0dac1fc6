"""Distributed ingestion: the queue's claim/lease semantics, and real worker processes.

Two ``ragwright worker`` processes draining one queue build the same index as one worker (chunk ids
and counts); a worker killed with SIGKILL mid-run loses nothing: its leases expire, a peer takes the
jobs, and the registry is consistent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.ingest.worker import Worker, enqueue
from ragwright.models.embedders import load_embedder
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.postgres import PostgresStore
from ragwright.stores.postgres.queue import IngestQueue
from ragwright.testing.doubles import HashingEmbedder
from tests.conftest import SHARED
from tests.stores.postgres.conftest import PgServer

DATA = SHARED / "data" / "scifact" / "corpus.jsonl"
DOCS = SHARED / "docs-corpus"
SCIFACT_DOCS = 300


def _corpus(folder: Path) -> list[str]:
    """A few hundred SciFact records plus docs-corpus folders (Markdown, Word, e-mail with attachments)."""
    if not DATA.exists() or not DOCS.exists():
        pytest.fail(f"the worker tests need {DATA} and {DOCS} (the shared test data)")
    subset = folder / "scifact-subset.jsonl"
    with DATA.open(encoding="utf-8") as fh:
        subset.write_text("".join(next(fh) for _ in range(SCIFACT_DOCS)), encoding="utf-8")
    return [str(subset), str(DOCS / "md"), str(DOCS / "docx"), str(DOCS / "email")]


def _snapshot(dsn: str) -> dict[str, Any]:
    """What must not depend on how many workers ran: chunk ids per document, registry statuses and counts."""
    with PostgresStore(dsn) as s:
        with s._conn() as conn:
            chunks = conn.execute("SELECT document_id, chunk_id FROM chunks ORDER BY 1, 2").fetchall()
            records = conn.execute(
                "SELECT document_id, status, chunk_count, content_hash FROM documents ORDER BY 1"
            ).fetchall()
        problems = s.check_integrity()
        counts = IngestQueue(s).counts()
    return {"chunks": chunks, "records": records, "problems": problems, "jobs": counts}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def reference(pg_server: PgServer, corpus: list[str]) -> Iterator[dict[str, Any]]:
    """The corpus ingested through the queue by one in-process worker."""
    name = pg_server.create_database()
    dsn = pg_server.dsn(name)
    try:
        with Rag.open(dsn, embedder=load_embedder("wordllama")) as rag:
            assert isinstance(rag.store, PostgresStore)
            queue = IngestQueue(rag.store)
            queued = enqueue(queue, corpus)
            report = Worker(rag.ingestion, queue, batch_size=16).run()
        snap = _snapshot(dsn)
        assert snap["jobs"]["done"] == queued == report.jobs_done and snap["problems"] == []
        assert len(snap["chunks"]) > SCIFACT_DOCS and report.ingest.added > SCIFACT_DOCS
        yield snap
    finally:
        pg_server.drop_database(name)


def _worker(dsn: str, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ragwright.cli", "--json", "--embedder", "wordllama", "worker", "--store", dsn]
    return subprocess.Popen([*cmd, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    result: dict[str, Any] = json.loads(out)
    return result


def _enqueue_cli(dsn: str, paths: list[str]) -> int:
    cmd = [sys.executable, "-m", "ragwright.cli", "--json", "worker", "--store", dsn, "enqueue", *paths]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(json.loads(done.stdout)["queued"])


@pytest.mark.slow
def test_two_workers_build_the_same_index_as_one(pg_dsn: str, corpus: list[str], reference: dict[str, Any]) -> None:
    queued = _enqueue_cli(pg_dsn, corpus)
    assert queued == reference["jobs"]["done"]
    procs = [_worker(pg_dsn, "--exit-when-empty", "--batch", "4", "--poll", "0.2", "--id", f"w{i}") for i in (1, 2)]
    reports = [_finish(p) for p in procs]
    assert sum(r["jobs_done"] for r in reports) == queued
    assert all(r["jobs_done"] > 0 for r in reports), reports  # both took part
    assert _snapshot(pg_dsn) == reference


@pytest.mark.slow
def test_a_killed_worker_loses_nothing(pg_dsn: str, corpus: list[str], reference: dict[str, Any]) -> None:
    queued = _enqueue_cli(pg_dsn, corpus)
    victim = _worker(pg_dsn, "--batch", "2", "--lease", "2", "--poll", "0.2", "--id", "victim")
    with PostgresStore(pg_dsn) as s:
        queue = IngestQueue(s)
        deadline = time.monotonic() + 120
        while queue.counts()["done"] < 20 and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.communicate(timeout=30)
        left = queue.pending()
        assert 0 < left < queued  # killed mid-run: some jobs done, some still queued or leased
    survivor = _worker(pg_dsn, "--exit-when-empty", "--lease", "2", "--poll", "0.2", "--id", "survivor")
    report = _finish(survivor)
    assert report["jobs_done"] >= left
    assert _snapshot(pg_dsn) == reference


# -- queue semantics, in process ------------------------------------------------------------------
def _rag(dsn: str) -> Rag:
    return Rag(PostgresStore(dsn), HashingEmbedder())


def _docs(n: int) -> BytesSource:
    return BytesSource({f"d{i}.md": f"# Doc {i}\n\nbody text number {i}".encode() for i in range(n)})


def test_claims_never_overlap_and_enqueue_is_not_doubled(pg_dsn: str) -> None:
    with _rag(pg_dsn) as rag:
        assert isinstance(rag.store, PostgresStore)
        queue = IngestQueue(rag.store)
        assert enqueue(queue, _docs(10)) == 10
        assert enqueue(queue, _docs(10)) == 0  # the same content is already waiting
        a = queue.claim("a", 6, 60)
        b = queue.claim("b", 6, 60)
        assert len(a) == 6 and len(b) == 4
        assert not {j.job_id for j in a} & {j.job_id for j in b}
        assert queue.claim("c", 6, 60) == []
        assert queue.counts() == {"queued": 0, "running": 10, "done": 0, "failed": 0}


def test_an_expired_lease_passes_the_job_to_another_worker(pg_dsn: str) -> None:
    with _rag(pg_dsn) as rag:
        assert isinstance(rag.store, PostgresStore)
        queue = IngestQueue(rag.store)
        enqueue(queue, _docs(3))
        stale = queue.claim("slow", 3, 1.0)
        time.sleep(1.3)  # the lease runs out (no heartbeat: the worker is "dead")
        report = Worker(rag.ingestion, queue, worker_id="fresh", poll_seconds=0.05).run()
        assert report.jobs_done == 3 and report.ingest.added == 3
        queue.finish("slow", {j.job_id: None for j in stale})  # the late worker's word no longer counts
        assert queue.counts()["done"] == 3
        with rag.store._conn() as conn:
            assert {r[0] for r in conn.execute("SELECT worker FROM ingest_jobs")} == {"fresh"}
        assert rag.store.check_integrity() == []


def test_a_job_that_keeps_killing_workers_is_given_up(pg_dsn: str) -> None:
    with _rag(pg_dsn) as rag:
        assert isinstance(rag.store, PostgresStore)
        queue = IngestQueue(rag.store)
        enqueue(queue, _docs(1))
        for _ in range(2):
            queue.claim("crasher", 1, 1.0)
            time.sleep(1.1)
        report = Worker(rag.ingestion, queue, max_attempts=2, poll_seconds=0.05).run()
        assert report.jobs_failed == 1 and report.jobs_done == 0
        assert queue.counts()["failed"] == 1


def test_failed_documents_are_recorded_and_the_job_completes(pg_dsn: str) -> None:
    with _rag(pg_dsn) as rag:
        assert isinstance(rag.store, PostgresStore)
        queue = IngestQueue(rag.store)
        enqueue(queue, BytesSource({"ok.md": b"# fine\n\ntext", "empty.md": b"   "}), tenant="acme", acl=["hr"])
        report = Worker(rag.ingestion, queue).run()
        assert report.jobs_done == 2 and len(report.ingest.failed) == 1
        with rag.store._conn() as conn:
            errors = dict(conn.execute("SELECT document_id, error FROM ingest_jobs").fetchall())
        assert errors["ok.md"] is None and errors["empty.md"]
        record = rag.store.get_record("ok.md")
        assert record is not None and (record.tenant, record.acl) == ("acme", ("hr",))


def test_worker_cli_enqueues_drains_and_reports(pg_dsn: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragwright.cli import main

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    bad = run("worker", "--store", "store.db", "status")
    assert bad.exit_code == 2 and "postgresql://" in bad.output
    (tmp_path / "a.md").write_text("# A\n\nalpha text", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nbeta text", encoding="utf-8")
    queued = run("--json", "worker", "--store", pg_dsn, "enqueue", str(tmp_path), "--acl", "hr")
    assert queued.exit_code == 0 and json.loads(queued.output) == {"queued": 2}
    status = run("--json", "worker", "--store", pg_dsn, "status")
    assert json.loads(status.output) == {"queued": 2, "running": 0, "done": 0, "failed": 0}
    drained = run("--json", "--embedder", "wordllama", "worker", "--store", pg_dsn, "--exit-when-empty")
    assert drained.exit_code == 0, drained.output
    assert json.loads(drained.output)["jobs_done"] == 2
    with Rag.open(pg_dsn, embedder=load_embedder("wordllama")) as rag:
        from ragwright.model.identity import Identity

        assert rag.search("alpha", top_k=1, identity=Identity(groups=("hr",)))[0].chunk.text.endswith("alpha text")
        assert rag.search("alpha", top_k=1) == []  # the ACL travelled through the queue
