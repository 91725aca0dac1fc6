"""Distributed ingestion: a queue table in the store's database, and the workers that drain it.

``enqueue`` reads each source document once and stores it in ``ingest_jobs`` (raw bytes, or the parsed
record of a JSONL corpus), so workers on other machines need no shared file system. A worker claims a
batch with ``SELECT … FOR UPDATE SKIP LOCKED`` (two workers never claim the same job) and holds it by
a *lease* (``lease_until``) that a heartbeat thread extends while the batch runs. Documents go through
the ordinary ingestion pipeline, whose writes are one transaction each (new chunks upserted, then the
superseded ones deleted). A worker that dies stops renewing: its lease expires and another worker
claims the job again; re-running a document that was already written is a no-op (the registry's
hashes match), so nothing is lost and nothing is doubled. A job claimed more than ``max_attempts``
times (a document that kills its worker) is marked failed instead of looping.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError, RagwrightError
from ragwright.ingest.report import IngestReport
from ragwright.model.document import Document
from ragwright.model.identity import DEFAULT_TENANT
from ragwright.model.ids import sha256_bytes
from ragwright.model.metadata import normalize_metadata
from ragwright.options import check_float, check_int
from ragwright.sources.base import Source, SourceItem
from ragwright.stores.postgres.schema import pg_json

if TYPE_CHECKING:
    from ragwright.rag import Rag
    from ragwright.stores.postgres.store import PostgresStore

log = logging.getLogger(__name__)

_JOB_COLUMNS = (
    "job_id, document_id, uri, name_hint, fingerprint, payload, record, item_metadata, tenant, acl, metadata, attempts"
)


@dataclass(frozen=True, slots=True)
class Job:
    """One claimed document."""

    job_id: int
    item: SourceItem
    tenant: str
    acl: tuple[str, ...] | None
    metadata: dict[str, Any]
    attempts: int


class IngestQueue:
    """The ``ingest_jobs`` table of a :class:`PostgresStore`."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    def enqueue(
        self,
        sources: Source | str | Path | Iterable[Source | str | Path],
        *,
        tenant: str = DEFAULT_TENANT,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Queue every document of *sources*; returns how many jobs were added.

        A document already waiting in the queue with the same content is not queued twice.
        """
        from ragwright.rag import _resolve_sources

        meta = pg_json(normalize_metadata(metadata))
        acl_list = None if acl is None else list(acl)
        added = 0
        for source in _resolve_sources(sources):
            batch: list[tuple[Any, ...]] = []
            for item in source.items():
                batch.append(_job_row(item, tenant, acl_list, meta))
                if len(batch) >= 200:
                    added += self._insert(batch)
                    batch = []
            added += self._insert(batch)
        log.info("jobs_enqueued: %d", added)
        return added

    def _insert(self, rows: list[tuple[Any, ...]]) -> int:
        if not rows:
            return 0
        added = 0
        with self.store._conn() as conn, conn.transaction(), conn.cursor() as cur:
            for row in rows:
                cur.execute(
                    "INSERT INTO ingest_jobs(document_id, uri, name_hint, fingerprint, payload, record, "
                    "item_metadata, tenant, acl, metadata) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s "
                    "WHERE NOT EXISTS (SELECT 1 FROM ingest_jobs WHERE document_id = %s AND fingerprint = %s "
                    "AND status IN ('queued', 'running'))",
                    (*row, row[0], row[3]),
                )
                added += cur.rowcount
        return added

    def claim(self, worker: str, limit: int, lease_seconds: float) -> list[Job]:
        """Claim up to *limit* jobs: queued ones, or running ones whose lease expired."""
        with self.store._conn() as conn:
            rows = conn.execute(
                "UPDATE ingest_jobs j SET status = 'running', worker = %s, attempts = j.attempts + 1, "
                "lease_until = now() + make_interval(secs => %s), started_at = COALESCE(j.started_at, now()), "
                "updated_at = now() FROM (SELECT job_id FROM ingest_jobs WHERE status = 'queued' "
                "      OR (status = 'running' AND lease_until < now()) "
                "      ORDER BY job_id LIMIT %s FOR UPDATE SKIP LOCKED) c "
                f"WHERE j.job_id = c.job_id RETURNING {', '.join('j.' + c for c in _JOB_COLUMNS.split(', '))}",
                (worker, float(lease_seconds), limit),
            ).fetchall()
        return [_job(r) for r in sorted(rows, key=lambda r: r[0])]

    def renew(self, worker: str, job_ids: Sequence[int], lease_seconds: float) -> int:
        """Extend the lease of jobs this worker still holds; returns how many it holds."""
        with self.store._conn() as conn:
            cur = conn.execute(
                "UPDATE ingest_jobs SET lease_until = now() + make_interval(secs => %s) "
                "WHERE job_id = ANY(%s) AND worker = %s AND status = 'running'",
                (float(lease_seconds), list(job_ids), worker),
            )
            return int(cur.rowcount)

    def finish(self, worker: str, results: Mapping[int, str | None], *, status: str = "done") -> None:
        """Mark jobs done (or failed), with the reason when the document failed; the payload is dropped."""
        with self.store._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "UPDATE ingest_jobs SET status = %s, error = %s, payload = NULL, record = NULL, lease_until = NULL, "
                "updated_at = now() WHERE job_id = %s AND worker = %s AND status = 'running'",
                [(status, error, job_id, worker) for job_id, error in results.items()],
            )

    def release(self, worker: str, job_ids: Sequence[int], error: str) -> None:
        """Give jobs back to the queue after an error that was not the document's fault."""
        with self.store._conn() as conn:
            conn.execute(
                "UPDATE ingest_jobs SET status = 'queued', error = %s, lease_until = NULL, updated_at = now() "
                "WHERE job_id = ANY(%s) AND worker = %s AND status = 'running'",
                (error, list(job_ids), worker),
            )

    def counts(self) -> dict[str, int]:
        """Jobs by status (``queued``, ``running``, ``done``, ``failed``)."""
        with self.store._conn() as conn:
            rows = conn.execute("SELECT status, COUNT(*) FROM ingest_jobs GROUP BY status").fetchall()
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        out.update({str(s): int(n) for s, n in rows})
        return out

    def pending(self) -> int:
        """Jobs not finished yet (queued, or running under some worker's lease)."""
        counts = self.counts()
        return counts["queued"] + counts["running"]


def _job_row(item: SourceItem, tenant: str, acl: list[str] | None, meta: str) -> tuple[Any, ...]:
    loaded = item.load()
    if isinstance(loaded, Document):
        payload, record = None, pg_json(loaded.to_dict())
        fingerprint = item.fingerprint or ""
    else:
        data = bytes(loaded)
        payload, record = zlib.compress(data, 6), None
        fingerprint = item.fingerprint or sha256_bytes(data)
    return (
        item.document_id,
        item.uri,
        item.name_hint,
        fingerprint,
        payload,
        record,
        pg_json(item.metadata),
        tenant,
        acl,
        meta,
    )


def _job(row: Any) -> Job:
    job_id, doc_id, uri, hint, fingerprint, payload, record, item_meta, tenant, acl, meta, attempts = row
    if record is not None:
        document = Document.from_dict(record)

        def load() -> bytes | Document:
            return document

    else:
        data = zlib.decompress(payload) if payload is not None else b""

        def load() -> bytes | Document:
            return data

    item = SourceItem(doc_id, uri, load, name_hint=hint, fingerprint=fingerprint or None, metadata=dict(item_meta))
    return Job(job_id, item, tenant, None if acl is None else tuple(acl), dict(meta), attempts)


@dataclass
class _Items:
    """A claimed batch as a :class:`Source` (no root: the queue never reconciles deletions)."""

    items_: list[SourceItem]

    @property
    def root(self) -> str | None:
        return None

    def items(self) -> Iterator[SourceItem]:
        return iter(self.items_)

    def __len__(self) -> int:
        return len(self.items_)


@dataclass
class WorkerReport:
    """What one worker did."""

    worker: str
    jobs_done: int = 0
    jobs_failed: int = 0
    batches: int = 0
    ingest: IngestReport = field(default_factory=IngestReport)

    def to_dict(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "jobs_done": self.jobs_done,
            "jobs_failed": self.jobs_failed,
            "batches": self.batches,
            "ingest": self.ingest.to_dict(),
        }


class Worker:
    """Drains the queue into the store through a :class:`~ragwright.rag.Rag` (its embedder and chunker)."""

    def __init__(
        self,
        rag: Rag,
        *,
        worker_id: str | None = None,
        batch_size: int = 8,
        lease_seconds: float = 120.0,
        poll_seconds: float = 1.0,
        max_attempts: int = 5,
    ) -> None:
        from ragwright.stores.postgres.store import PostgresStore

        if not isinstance(rag.store, PostgresStore):
            raise ConfigError("a queue worker needs a Rag over a PostgresStore (Rag.open('postgresql://…'))")
        check_int("batch_size", batch_size, minimum=1)
        check_float("lease_seconds", lease_seconds, lo=1.0)
        check_float("poll_seconds", poll_seconds, lo=0.01)
        check_int("max_attempts", max_attempts, minimum=1)
        self.rag, self.queue = rag, IngestQueue(rag.store)
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.batch_size, self.lease_seconds = batch_size, lease_seconds
        self.poll_seconds, self.max_attempts = poll_seconds, max_attempts

    def run(self, *, until_empty: bool = True, stop: threading.Event | None = None) -> WorkerReport:
        """Process batches until the queue is drained (``until_empty``) or *stop* is set."""
        stop = stop or threading.Event()
        report = WorkerReport(self.worker_id)
        while not stop.is_set():
            jobs = self.queue.claim(self.worker_id, self.batch_size, self.lease_seconds)
            if not jobs:
                if until_empty and self.queue.pending() == 0:
                    break
                stop.wait(self.poll_seconds)  # others' leases may still expire: keep polling
                continue
            report.batches += 1
            exhausted = {
                j.job_id: f"gave up after {j.attempts - 1} attempts" for j in jobs if j.attempts > self.max_attempts
            }
            if exhausted:
                self.queue.finish(self.worker_id, exhausted, status="failed")
                report.jobs_failed += len(exhausted)
            live = [j for j in jobs if j.job_id not in exhausted]
            if live:
                report.ingest.add(self._process(live, report))
        return report

    def _process(self, jobs: list[Job], report: WorkerReport) -> IngestReport:
        done = threading.Event()
        ids = [j.job_id for j in jobs]
        heartbeat = threading.Thread(target=self._heartbeat, args=(ids, done), name="ragwright-lease", daemon=True)
        heartbeat.start()
        total = IngestReport()
        try:
            groups: dict[str, list[Job]] = {}
            for job in jobs:
                key = json.dumps([job.tenant, job.acl, job.metadata], sort_keys=True, default=str)
                groups.setdefault(key, []).append(job)
            for group in groups.values():
                first = group[0]
                part = self.rag.ingestion.run(
                    _Items([j.item for j in group]),
                    tenant=first.tenant,
                    acl=None if first.acl is None else list(first.acl),
                    metadata=first.metadata,
                )
                total.add(part)
        except (RagwrightError, OSError) as exc:
            log.warning("worker_batch_failed: %s: %s (jobs go back to the queue)", self.worker_id, exc)
            self.queue.release(self.worker_id, ids, str(exc))
            return total
        finally:
            done.set()
            heartbeat.join()
        failures = {f.document: f.reason for f in total.failed}
        self.queue.finish(self.worker_id, {j.job_id: failures.get(j.item.document_id) for j in jobs})
        report.jobs_done += len(jobs)
        return total

    def _heartbeat(self, job_ids: list[int], done: threading.Event) -> None:
        while not done.wait(self.lease_seconds / 3):
            try:
                self.queue.renew(self.worker_id, job_ids, self.lease_seconds)
            except Exception as exc:  # the batch goes on; at worst the lease expires and a peer redoes it
                log.warning("lease_renew_failed: %s: %s", self.worker_id, exc)


def wait_for_queue(queue: IngestQueue, timeout: float, poll: float = 0.2) -> bool:
    """Block until the queue has nothing pending (``True``) or *timeout* seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if queue.pending() == 0:
            return True
        time.sleep(poll)
    return queue.pending() == 0
