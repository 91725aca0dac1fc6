"""Distributed ingestion: ``enqueue`` documents into a :class:`~ragwright.stores.base.JobQueue`, and
the workers that drain it (on as many machines as you like; ``ragwright worker``).

``enqueue`` reads each source document once into the queue (raw bytes, or the parsed record of a JSONL
corpus), so workers on other machines need no shared file system. A :class:`Worker` claims a batch
(two workers never claim the same job) and holds it by a *lease* that a heartbeat thread renews while
the batch runs. Documents go through the ordinary ingestion pipeline, whose writes are one transaction
each (new chunks upserted, then the superseded ones deleted). A worker that dies stops renewing: its
lease expires and another worker claims the job again; re-running a document that was already written
is a no-op (the registry's hashes match), so nothing is lost and nothing is doubled. A job claimed more
than ``max_attempts`` times (a document that kills its worker) is marked failed instead of looping.
The PostgreSQL store's queue is :class:`ragwright.stores.postgres.queue.IngestQueue`.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright._validate import check_float, check_int
from ragwright.errors import ConfigError, RagwrightError
from ragwright.ingest.pipeline import IngestPipeline
from ragwright.ingest.report import IngestReport
from ragwright.model.identity import DEFAULT_TENANT
from ragwright.sources import Source, SourceItem, open_sources
from ragwright.stores.base import Job, JobQueue

log = logging.getLogger(__name__)


def enqueue(
    queue: JobQueue,
    sources: Source | str | Path | Iterable[Source | str | Path],
    *,
    tenant: str = DEFAULT_TENANT,
    acl: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> int:
    """Queue every document of *sources* (what ``Rag.ingest`` accepts) for the workers; returns how many
    jobs were added. A document already waiting in the queue with the same content is not queued twice."""
    added = 0
    for source in open_sources(sources):
        added += queue.put(source.items(), tenant=tenant, acl=acl, metadata=metadata)
    log.info("jobs_enqueued: %d", added)
    return added


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
    """Drains *queue* through *pipeline* (its store, embedder and chunker)."""

    def __init__(
        self,
        pipeline: IngestPipeline,
        queue: JobQueue,
        *,
        worker_id: str | None = None,
        batch_size: int = 8,
        lease_seconds: float = 120.0,
        poll_seconds: float = 1.0,
        max_attempts: int = 5,
    ) -> None:
        if not isinstance(queue, JobQueue):
            raise ConfigError.invalid(
                "queue", queue, "a JobQueue, e.g. IngestQueue(store) of a PostgresStore (Rag.open('postgresql://…'))"
            )
        check_int("batch_size", batch_size, minimum=1)
        check_float("lease_seconds", lease_seconds, lo=1.0)
        check_float("poll_seconds", poll_seconds, lo=0.01)
        check_int("max_attempts", max_attempts, minimum=1)
        self.pipeline, self.queue = pipeline, queue
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
                part = self.pipeline.run(
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


def wait_for_queue(queue: JobQueue, timeout: float, poll: float = 0.2) -> bool:
    """Block until the queue has nothing pending (``True``) or *timeout* seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if queue.pending() == 0:
            return True
        time.sleep(poll)
    return queue.pending() == 0
