"""The distributed-ingestion queue of a PostgreSQL store: the ``ingest_jobs`` table as a
:class:`~ragwright.stores.base.JobQueue` (the workers that drain it are :mod:`ragwright.ingest.worker`).

``put`` reads each document once and stores it (raw bytes, or the parsed record of a JSONL corpus), so
workers on other machines need no shared file system. ``claim`` takes a batch with ``SELECT … FOR
UPDATE SKIP LOCKED`` (two workers never claim the same job) under a *lease* (``lease_until``) that the
worker renews while the batch runs; a worker that dies stops renewing, its lease expires and another
worker claims the job again.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.model.document import Document
from ragwright.model.ids import sha256_bytes
from ragwright.model.metadata import normalize_metadata
from ragwright.sources.base import SourceItem
from ragwright.stores.base import Job
from ragwright.stores.postgres.schema import pg_json

if TYPE_CHECKING:
    from ragwright.stores.postgres.store import PostgresStore

log = logging.getLogger(__name__)

_JOB_COLUMNS = (
    "job_id, document_id, uri, name_hint, fingerprint, payload, record, item_metadata, tenant, acl, metadata, attempts"
)


class IngestQueue:
    """The ``ingest_jobs`` table of a :class:`PostgresStore`, as a :class:`~ragwright.stores.base.JobQueue`."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    def put(
        self,
        items: Iterable[SourceItem],
        *,
        tenant: str,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Queue *items* (each read once, stored compressed); returns how many jobs were added.

        A document already waiting in the queue with the same content is not queued twice.
        """
        meta = pg_json(normalize_metadata(metadata))
        acl_list = None if acl is None else list(acl)
        added = 0
        batch: list[tuple[Any, ...]] = []
        for item in items:
            batch.append(_job_row(item, tenant, acl_list, meta))
            if len(batch) >= 200:
                added += self._insert(batch)
                batch = []
        return added + self._insert(batch)

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
