"""Rebuilding a collection from another one's registry, without reading any source again.

Each live document is re-chunked and re-embedded from what the store kept by content hash: the raw
bytes (``stage``) parsed again through the parsed-document cache (no OCR runs twice), or the cached
:class:`Document` of a corpus record. Only when neither is there is the source read again (a local
file, or a JSONL line). One pass processes a set of document ids; a later pass processes what changed
in the live collection meanwhile (see :mod:`ragwright.ingest.reindex`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ragwright.errors import ParseError
from ragwright.ingest.pipeline import RECORD_PARSER_VERSION, IngestPipeline
from ragwright.ingest.report import IngestReport
from ragwright.model.document import Document
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.sources.base import SourceItem
from ragwright.sources.scoped import scope_document, split_tenant_document_id
from ragwright.stores.base import Store

Snapshot = dict[str, DocumentRecord]


def snapshot(store: Store) -> Snapshot:
    """Every registry record of *store* by document id (the state a pass is built from)."""
    return {r.document_id: r for r in store.list_records()}


def changed_ids(before: Snapshot, after: Snapshot) -> set[str]:
    """Documents whose registry record differs between two snapshots (added, changed or gone)."""
    return {d for d in before.keys() | after.keys() if before.get(d) != after.get(d)}


class _RebuildSource:
    """A source yielding live records with loaders reading the live store's staging."""

    def __init__(self, live: Store, target: Store, records: list[DocumentRecord], root: str | None) -> None:
        self.live, self.target, self.records, self._root = live, target, records, root

    @property
    def root(self) -> str | None:
        return self._root

    def __len__(self) -> int:
        return len(self.records)

    def items(self) -> Iterator[SourceItem]:
        for rec in self.records:
            record_doc = rec.parser_version == RECORD_PARSER_VERSION
            yield SourceItem(
                document_id=rec.document_id,
                uri=rec.source,
                load=functools.partial(self._load_record if record_doc else self._load_bytes, rec),
                name_hint=rec.name_hint or _hint_from_uri(rec.source, rec.document_id),
                fingerprint=rec.content_hash if record_doc else None,
                metadata=dict(rec.source_meta or _source_meta(rec.source)),
            )

    def _load_bytes(self, rec: DocumentRecord) -> bytes:
        if self.target is not self.live:  # a separate staging area (memory): carry the parsed document over
            parsed = self.live.cached_parsed(rec.content_hash, rec.parser_version)
            if parsed is not None and self.target.cached_parsed(rec.content_hash, rec.parser_version) is None:
                self.target.cache_parsed(rec.content_hash, rec.parser_version, parsed)
        data = self.live.staged(rec.content_hash)
        if data is not None:
            return data
        path = _local_path(rec.source)
        if path is not None and path.is_file():
            return path.read_bytes()
        raise ParseError(f"no staged copy of {rec.document_id!r} and its source {rec.source} cannot be read")

    def _load_record(self, rec: DocumentRecord) -> Document:
        doc = self.live.cached_parsed(rec.content_hash, rec.parser_version)
        if doc is not None and doc.id == rec.document_id:
            return doc
        path, _, fragment = rec.source.partition("#L")
        local = _local_path(path)
        if local is not None and local.is_file() and fragment.isdigit():
            from ragwright.sources.jsonl import record_document

            with local.open(encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, start=1):
                    if lineno == int(fragment):
                        found = record_document(json.loads(line), source=rec.source)
                        if found.id == rec.document_id:
                            return found
                        scoped = split_tenant_document_id(rec.document_id)  # a tenant's copy of the record
                        if scoped is not None and scoped[1] == found.id:
                            return scope_document(found, scoped[0])
                        break
        raise ParseError(f"no cached copy of the record {rec.document_id!r} and its source line is gone")


def rebuild(
    live: Store, target: Store, pipeline: IngestPipeline, state: Snapshot, ids: set[str], report: IngestReport
) -> list[str]:
    """Bring the documents *ids* of *target* in line with their records in *state* (the live registry).

    Returns the ids of documents indexed (or with chunks) in *state* that could not be rebuilt.
    """
    wanted: set[str] = set()
    for doc_id in ids:
        rec = state.get(doc_id)
        parent = rec.parent if rec is not None else None
        if parent is not None and parent in state:
            wanted.add(parent)  # attachments are rebuilt from their parent
        elif rec is None or rec.status is DocumentStatus.DELETED:
            existing = target.get_record(doc_id)
            if existing is not None and existing.status is not DocumentStatus.DELETED:
                target.remove_document(doc_id)
                report.deleted += 1
            if rec is not None:
                target.record(rec)  # keep the tombstone
        elif rec.status is DocumentStatus.FAILED and rec.chunk_count == 0:
            target.record(_retagged(rec, pipeline))  # nothing to build; stays failed, retried on ingest
        else:
            wanted.add(doc_id)
    groups: dict[str, list[DocumentRecord]] = {}
    for doc_id in sorted(wanted):
        rec = state[doc_id]
        key = json.dumps([rec.tenant, list(rec.acl), rec.metadata, rec.source_root], sort_keys=True, default=str)
        groups.setdefault(key, []).append(rec)
    for records in groups.values():
        first = records[0]
        run = pipeline.run(
            _RebuildSource(live, target, records, first.source_root),
            tenant=first.tenant,
            acl=first.acl,
            metadata=first.metadata or None,
            sync=False,
        )
        report.add(run)
    failed = {f.document for f in report.failed}
    for doc_id in sorted(wanted):  # a failed update keeps its failure (and its chunks) in the new collection
        rec = state[doc_id]
        built = target.get_record(doc_id)
        if rec.status is DocumentStatus.FAILED and built is not None and built.status is DocumentStatus.INDEXED:
            target.record(dataclasses.replace(_retagged(rec, pipeline), chunk_count=built.chunk_count))
    return sorted(d for d in wanted if d in failed)


def _retagged(rec: DocumentRecord, pipeline: IngestPipeline) -> DocumentRecord:
    return dataclasses.replace(rec, embedding_model=pipeline.embedder.name, chunker_version=pipeline.chunker_version)


def _local_path(uri: str) -> Path | None:
    parts = urlsplit(uri)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


def _hint_from_uri(uri: str, document_id: str) -> str:
    path = urlsplit(uri).path
    name = unquote(path.rsplit("/", 1)[-1]) if path else ""
    return name or document_id


def _source_meta(uri: str) -> dict[str, Any]:
    """The item metadata the file sources give (records ingested before ``source_meta`` was kept)."""
    path = _local_path(uri)
    return {"file_name": path.name} if path is not None else {}
