"""Change detection against the registry: what a run may skip, and what sync mode removes.

A child document (an e-mail's attachment) is never listed by a source itself: it belongs to its
parent. It is unchanged when its parent is, and it goes only when its parent goes.
"""

from __future__ import annotations

from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.base import Store


def children_intact(store: Store, previous: DocumentRecord) -> bool:
    """Whether every child document the registry lists for *previous* is still indexed.

    An unchanged parent whose children were lost (removed by an older sync, say) is processed again,
    which restores them.
    """
    for child_id in previous.metadata.get("_children", []):
        child = store.get_record(str(child_id))
        if child is None or child.status is not DocumentStatus.INDEXED:
            return False
    return True


def owner_id(record: DocumentRecord) -> str:
    """The id a source lists for *record*: its parent's for a child document, else its own."""
    parent = record.metadata.get("_parent")
    return parent if isinstance(parent, str) and parent else record.document_id


def reconcile(store: Store, root: str, listed: set[str]) -> int:
    """Remove the documents of *root* whose owner the source no longer lists; returns how many went."""
    removed = 0
    for rec in store.list_records():
        if rec.source_root == root and owner_id(rec) not in listed and rec.status is not DocumentStatus.DELETED:
            store.remove_document(rec.document_id)
            removed += 1
    return removed
