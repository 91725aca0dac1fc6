"""What the parts of a :class:`~ragwright.stores.postgres.store.PostgresStore` share: one small object.

The store is composed, not inherited: the chunk table (:mod:`.chunks`), search (:mod:`.search`),
sparse vectors (:mod:`.sparse`), the collections (:mod:`.collections`), the registry and staging
(:mod:`ragwright.stores.sql_registry`, :mod:`ragwright.stores.sql_staging`) each hold this
:class:`PostgresState` and nothing of each other. It carries the DSN and options, the connection pool
(:meth:`PostgresState.conn` checks a connection out on the collection the store object reads, see
:mod:`.follow`), the id of that collection's rows (``store_id``), the keyword mirror and the derived state
a write or a move to another collection invalidates.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import StoreError
from ragwright.stores.postgres.connection import PostgresOptions, redact

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from ragwright.stores.postgres.follow import AliasFollower
    from ragwright.stores.postgres.keyword import KeywordMirror

__all__ = ["PostgresState", "get_meta", "set_meta"]


class PostgresState:
    """The state the store's parts share (see the module docstring); the store object builds it."""

    def __init__(self, dsn: str, options: PostgresOptions, keyword: KeywordMirror, store_id: str) -> None:
        self.dsn, self.options, self.keyword, self.store_id = dsn, options, keyword, store_id
        self.where = redact(dsn)  # the DSN without its password, for messages
        self.pool: ConnectionPool[Any] | None = None
        self.follower: AliasFollower | None = None  # set once the store knows its collection
        self.closed = False
        # Derived state: dense-plan decisions and keyword-arm allow-lists (search.py), this process's writes
        # (they invalidate both), and the bound model's dimension once known.
        self.dense_plan: dict[str, tuple[int, float, bool]] = {}
        self.allowed: dict[tuple[int, str], frozenset[str] | None] = {}
        self.writes = 0
        self.known_dimension: int | None = None

    @contextmanager
    def conn(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection on the store object's collection (following the alias when due); the
        server's errors become :class:`~ragwright.errors.StoreError`."""
        if self.closed:
            raise StoreError("this PostgreSQL store is closed")
        import psycopg

        assert self.pool is not None and self.follower is not None
        try:
            with self.pool.connection() as conn:
                self.follower.enter(conn)
                yield conn
        except psycopg.Error as exc:  # one error type for callers (ingestion records it per document)
            raise StoreError(f"PostgreSQL store {self.where}: {type(exc).__name__}: {exc}") from exc

    def writing(self, conn: psycopg.Connection[Any]) -> AbstractContextManager[None]:
        """A write transaction on the store object's collection (see :meth:`.follow.AliasFollower.writing`)."""
        assert self.follower is not None
        return self.follower.writing(conn)

    def forget(self) -> None:
        """Drop the derived state: the store object now reads other rows (another collection, a wipe)."""
        self.keyword.reset()
        self.dense_plan.clear()
        self.allowed.clear()
        self.known_dimension = None
        self.writes += 1

    def bound(self, conn: psycopg.Connection[Any]) -> tuple[str, int] | None:
        """The embedding model bound to the collection: ``(name, dimension)``, or ``None``."""
        name, dim = get_meta(conn, "embedding_model"), get_meta(conn, "embedding_dimension")
        return None if name is None or dim is None else (name, int(dim))

    def dimension(self) -> int | None:
        """The bound model's dimension, remembered once known (the column's type enforces it anyway)."""
        if self.known_dimension is None:
            with self.conn() as conn:
                bound = self.bound(conn)
            self.known_dimension = None if bound is None else bound[1]
        return self.known_dimension


def get_meta(conn: psycopg.Connection[Any], key: str) -> str | None:
    """A value of the collection's ``rag_metadata``."""
    row = conn.execute("SELECT value FROM rag_metadata WHERE key = %s", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: psycopg.Connection[Any], key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO rag_metadata(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (key, value),
    )
