"""The in-memory store: the reference semantics every other store must match."""

from ragwright.stores.memory.store import MemoryStore

__all__ = ["MemoryStore"]
