"""Dead letters: the registry record of a document that failed, and what it keeps."""

from __future__ import annotations

import dataclasses
import logging
import time

from ragwright.ingest.report import IngestFailure, IngestReport
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import Store

log = logging.getLogger("ragwright.ingest.pipeline")  # the events keep their historical logger


def dead_letter(
    store: Store,
    attempt: DocumentRecord,
    stage: str,
    exc: BaseException,
    previous: DocumentRecord | None,
    report: IngestReport,
) -> None:
    """Record a failed document (a dead letter) and go on.

    A dead letter carries the tenant, ACL, metadata and source root of the ingestion that failed
    (*attempt*), so only the callers who may see that document see its failure, and a retry
    ingests it with the same access. A failed *update* of a document that still has chunks keeps
    the record of those chunks (their tenant and ACL): the failed attempt changes nothing about who
    sees what.
    """
    doc_id = attempt.document_id
    reason = str(exc) or type(exc).__name__
    log.warning("ingest_failed: %s at %s: %s", doc_id, stage, reason)
    report.failed.append(IngestFailure(doc_id, stage, reason))
    now = time.time()
    kept = previous.chunk_count if previous and previous.status is not DocumentStatus.DELETED else 0
    if previous is not None and kept:
        base = previous
    else:
        base = DocumentRecord(
            doc_id,
            attempt.source,
            "",
            DocumentStatus.FAILED,
            tenant=attempt.tenant,
            acl=attempt.acl,
            source_root=attempt.source_root,
            created_at=previous.created_at if previous is not None else now,
            metadata=dict(attempt.metadata),
        )
    tries = previous.attempts if previous and previous.status is DocumentStatus.FAILED else 0
    store.record(
        dataclasses.replace(
            base,
            status=DocumentStatus.FAILED,
            stage=stage,
            reason=reason,
            chunk_count=kept,
            updated_at=now,
            attempts=tries + 1,
            error_type=type(exc).__name__,
        )
    )
