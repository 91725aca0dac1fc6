"""Physical collections of the in-memory store: a catalog of :class:`MemoryStore` objects and the alias.

Each physical collection *is* a :class:`MemoryStore` (its chunks, registry, staging and binding); the
stores created from one another share a :class:`MemoryCatalog` that names them (``memory``,
``memory-2`` …) and holds the ``live`` alias. Memory stores never follow the alias: after a switch,
the store object over the new collection (:meth:`MemoryStore.open_live`) serves, and the previous one
stays readable until it is dropped. A build cannot outlive its process, so nothing is ever abandoned.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ragwright.errors import StoreError
from ragwright.model.records import DocumentStatus
from ragwright.stores.base import CollectionInfo

if TYPE_CHECKING:
    from ragwright.stores.memory.store import MemoryStore

#: The name of a memory store's first collection.
FIRST_COLLECTION = "memory"


class MemoryCatalog:
    """The collections of a family of memory stores and the ``live`` alias. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._stores: dict[str, MemoryStore] = {}
        self._created: dict[str, float] = {}
        self._live: str | None = None
        self._numbers = itertools.count(2)

    def register(self, store: MemoryStore) -> str:
        """Name *store* as a new collection (the first one becomes live); returns the name."""
        with self._lock:
            name = FIRST_COLLECTION if not self._stores else f"{FIRST_COLLECTION}-{next(self._numbers)}"
            self._stores[name], self._created[name] = store, time.time()
            if self._live is None:
                self._live = name
            return name

    @property
    def live(self) -> str:
        with self._lock:
            assert self._live is not None, "a catalog has its first store from the start"
            return self._live

    def get(self, name: str) -> MemoryStore:
        with self._lock:
            store = self._stores.get(name)
        if store is None:
            raise StoreError(f"no collection {name!r} in this memory store (see collections())")
        return store

    def switch(self, name: str, check: Callable[[], str | None] | None) -> str:
        """Point ``live`` at *name*; *check* runs holding the live store's lock (no write interleaves)."""
        with self._lock:
            target = self.get(name)
            if target.embedding_model is None:
                raise StoreError(f"collection {name!r} has no embedding model bound: it was never built")
            previous = self.live
            with self.get(previous).write_lock():
                reason = check() if check is not None else None
                if reason is not None:
                    raise StoreError(reason)
                self._live = name
            return previous

    def drop(self, name: str) -> None:
        with self._lock:
            if name == self._live:
                raise StoreError(f"collection {name!r} is live; switch the alias away from it before dropping it")
            self.get(name)
            del self._stores[name], self._created[name]

    def infos(self) -> list[CollectionInfo]:
        with self._lock:
            entries = sorted(((n, s, self._created[n]) for n, s in self._stores.items()), key=lambda e: e[2])
            live = self._live
        out = []
        for name, store, created in entries:
            bound = store.embedding_model
            indexed = store.list_records(DocumentStatus.INDEXED)
            out.append(
                CollectionInfo(
                    name,
                    name == live,
                    bound[0] if bound else None,
                    bound[1] if bound else None,
                    len(indexed),
                    store.count_chunks(),
                    created,
                )
            )
        return out
