"""Change detection against the registry: what a run may skip, and what sync mode removes.

A child document (an e-mail's attachment) is never listed by a source itself: it belongs to its
parent. It is unchanged when its parent is, and it goes only when its parent goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.model.chunk import Chunk
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import Store


def children_intact(store: Store, previous: DocumentRecord) -> bool:
    """Whether every child document the registry lists for *previous* is still indexed.

    An unchanged parent whose children were lost (removed by an older sync, say) is processed again,
    which restores them.
    """
    for child_id in previous.children:
        child = store.get_record(child_id)
        if child is None or child.status is not DocumentStatus.INDEXED:
            return False
    return True


def owner_id(record: DocumentRecord) -> str:
    """The id a source lists for *record*: its parent's for a child document, else its own."""
    return record.parent or record.document_id


def reconcile(store: Store, root: str, listed: set[str]) -> int:
    """Remove the documents of *root* whose owner the source no longer lists; returns how many went."""
    removed = 0
    for rec in store.list_records():
        if rec.source_root == root and owner_id(rec) not in listed and rec.status is not DocumentStatus.DELETED:
            store.remove_document(rec.document_id)
            removed += 1
    return removed


def update_access(store: Store, previous: DocumentRecord, access: tuple[str, tuple[str, ...]]) -> None:
    """Give an unchanged document (and its children) a new tenant and ACL: chunks and records are
    updated in place, nothing is parsed or embedded again (as ``Rag.update_acl``)."""
    for document_id in (previous.document_id, *previous.children):
        store.update_access(document_id, access[0], access[1])


def metadata_keys(chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """The metadata keys *chunks* carry, sorted (recorded per document: what a filter can match)."""
    return tuple(sorted({key for chunk in chunks for key in chunk.metadata}))
