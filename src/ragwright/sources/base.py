"""The Source protocol and the items sources yield."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragwright.errors import LimitExceeded
from ragwright.model.document import Document


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One document a source offers.

    ``load`` returns raw bytes (parsed by content) or an already structured :class:`Document`
    (records of a JSONL corpus). ``fingerprint`` is the content hash when the source knows it
    without loading (a corpus record's canonical JSON); otherwise ingestion hashes the raw bytes.
    ``size`` is the byte size when the source knows it without loading (a file's ``stat``): ingestion
    refuses an item over its size limit before reading a byte of it (:func:`load_within`).
    """

    document_id: str
    uri: str
    load: Callable[[], bytes | Document]
    name_hint: str = ""
    fingerprint: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    size: int | None = None


def too_large(size: int, limit: int) -> LimitExceeded:
    return LimitExceeded(
        f"file is {size:,} bytes, over the limit of {limit:,} (raise ParseOptions.max_file_bytes to accept it)"
    )


def load_within(item: SourceItem, limit: int) -> bytes | Document:
    """Load *item* unless it is larger than *limit* bytes: a known ``size`` is checked before loading
    (nothing is read), the loaded bytes after (a source that cannot tell the size in advance)."""
    if item.size is not None and item.size > limit:
        raise too_large(item.size, limit)
    loaded = item.load()
    if isinstance(loaded, bytes | bytearray) and len(loaded) > limit:
        raise too_large(len(loaded), limit)
    return loaded


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
