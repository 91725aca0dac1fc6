"""The Source protocol and the items sources yield."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragwright.model.document import Document


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One document a source offers.

    ``load`` returns raw bytes (parsed by content) or an already structured :class:`Document`
    (records of a JSONL corpus). ``fingerprint`` is the content hash when the source knows it
    without loading (a corpus record's canonical JSON); otherwise ingestion hashes the raw bytes.
    """

    document_id: str
    uri: str
    load: Callable[[], bytes | Document]
    name_hint: str = ""
    fingerprint: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Source(Protocol):
    """A listing of documents. ``root`` identifies the listing for deletion reconciliation.

    A source may also have ``skipped``: ``(path, reason)`` pairs of what it listed but refused to
    offer (a folder's links to files outside it); ingestion reports them.
    """

    @property
    def root(self) -> str | None:
        """Documents once listed under this root and now absent are deleted (``None``: never)."""
        ...

    def items(self) -> Iterator[SourceItem]: ...

    def __len__(self) -> int: ...
