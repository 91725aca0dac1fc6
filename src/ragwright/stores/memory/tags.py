"""In-memory tag table for :class:`~ragwright.stores.memory.MemoryStore` (see :mod:`ragwright.stores.tags`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.tags import TagPair

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]


class MemoryTagTable:
    """Tag vectors and document → tags links; visibility read from the store's registry records."""

    def __init__(self, get_record: Callable[[str], DocumentRecord | None]) -> None:
        self._get_record = get_record
        self._lock = threading.Lock()
        self._vectors: dict[tuple[str, str, str], Vector] = {}
        self._documents: dict[str, tuple[TagPair, ...]] = {}

    def embedded(self, model: str) -> set[TagPair]:
        with self._lock:
            return {(k, v) for m, k, v in self._vectors if m == model}

    def add_vectors(self, model: str, entries: Sequence[tuple[str, str, Vector]]) -> None:
        with self._lock:
            for key, value, vector in entries:
                self._vectors[(model, key, value)] = vector

    def set_document_tags(self, document_id: str, tags: Sequence[TagPair]) -> None:
        with self._lock:
            self._documents[document_id] = tuple(dict.fromkeys(tags))

    def visible(self, model: str, identity: Identity) -> list[tuple[str, str, Vector]]:
        with self._lock:
            documents = list(self._documents.items())
        pairs: dict[TagPair, None] = {}
        for document_id, tags in documents:
            record = self._get_record(document_id)
            if record is None or record.status is not DocumentStatus.INDEXED:
                continue
            if identity.can_see(record.tenant, record.acl):
                pairs.update(dict.fromkeys(tags))
        with self._lock:
            return [(k, v, self._vectors[(model, k, v)]) for k, v in pairs if (model, k, v) in self._vectors]
