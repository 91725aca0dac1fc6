"""Retrying failed documents: read again from their local files, under their own ids and access.

A dead letter keeps the document id, tenant, ACL, metadata and folder (source root) of the ingestion
that failed; a retry ingests it with exactly those, one run per distinct access, so a retry never moves
a document to another tenant or widens who may see it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.sources.base import SourceItem


@dataclass(frozen=True)
class RetryGroup:
    """Failed documents sharing their access and metadata: one ingestion run."""

    source: RetrySource
    tenant: str
    acl: tuple[str, ...]
    metadata: dict[str, Any]


class RetrySource:
    """Failed documents whose local files still exist, under their registry ids."""

    def __init__(self, records: list[DocumentRecord], root: str | None) -> None:
        self.records, self._root = records, root

    @property
    def root(self) -> str | None:
        return self._root

    def __len__(self) -> int:
        return len(self.records)

    def items(self) -> Iterator[SourceItem]:
        for rec in self.records:
            path = local_file(rec.source)
            if path is None:
                continue
            yield SourceItem(
                document_id=rec.document_id,
                uri=rec.source,
                load=path.read_bytes,
                name_hint=rec.name_hint or path.name,
                metadata={"file_name": path.name},
            )


def local_file(uri: str) -> Path | None:
    """The existing local file a ``file://`` URI names, or ``None``."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    path = Path(unquote(parts.path))
    return path if path.is_file() else None


def retry_groups(records: Iterable[DocumentRecord]) -> list[RetryGroup]:
    """The failed *records* that can be read again, grouped by tenant, ACL, metadata and root."""
    groups: dict[str, list[DocumentRecord]] = {}
    for rec in records:
        if rec.status is DocumentStatus.FAILED and local_file(rec.source) is not None:
            key = json.dumps([rec.tenant, list(rec.acl), _user(rec), rec.source_root], sort_keys=True, default=str)
            groups.setdefault(key, []).append(rec)
    out = []
    for members in groups.values():
        first = members[0]
        out.append(RetryGroup(RetrySource(members, first.source_root), first.tenant, first.acl, _user(first)))
    return out


def _user(rec: DocumentRecord) -> dict[str, Any]:
    return dict(rec.metadata)
