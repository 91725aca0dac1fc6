"""The embedded default store: one SQLite file (WAL)."""

from ragwright.stores.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
