"""Side tables (the entity graph, …) in the PostgreSQL store's schema, beside its own tables.

:class:`PostgresSideDatabase` is what :meth:`PostgresStore.side_database` returns: the store's pooled
connections (which search its schema), one transaction per write serialised per feature by a
transaction-scoped advisory lock (as ``BEGIN IMMEDIATE`` serialises SQLite's), so two processes
replacing the same document never interleave. The statements are the shared ones of
:class:`~ragwright.stores.side_tables.SqlSideTables`; :data:`POSTGRES_SIDE` says what differs: ``%s``
placeholders, ``double precision``, ``bytea``, an ACL as ``text[]`` read by the store's own security predicate
(``acl && groups``, an empty ACL matching nobody), byte-order text comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.sql_filters import compile_security
from ragwright.stores.side_tables import Run, SideDialect

if TYPE_CHECKING:
    import psycopg

__all__ = ["POSTGRES_SIDE", "PostgresSideDatabase"]

POSTGRES_SIDE = SideDialect(
    placeholder="%s",
    real="DOUBLE PRECISION",
    blob="BYTEA",
    acl="TEXT[]",
    encode_acl=lambda acl: sorted(acl),
    decode_acl=lambda stored: tuple(stored),
    security=compile_security,
    byte_order=' COLLATE "C"',
)


class PostgresSideDatabase:
    """A :class:`~ragwright.stores.side_tables.SideDatabase` over the store's connection pool."""

    dialect = POSTGRES_SIDE

    def __init__(self, connection: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]) -> None:
        self._connection = connection

    @contextmanager
    def write(self, lock: str) -> Iterator[tuple[Run, Run]]:
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ragwright.side.{lock}",))

            def many(sql: str, rows: Sequence[Any] = ()) -> Any:
                with conn.cursor() as cur:
                    cur.executemany(sql, rows)
                return None

            yield _execute(conn), many

    @contextmanager
    def read(self) -> Iterator[Run]:
        with self._connection() as conn:
            yield _execute(conn)

    def has_rows(self, table: str) -> bool:
        with self._connection() as conn:
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
            if not (row and row[0]):
                return False
            from psycopg import sql

            found = conn.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.Identifier(table))).fetchone()
            return found is not None

    def close(self) -> None:
        """Nothing of its own to close: the connections are the store's."""


def _execute(conn: psycopg.Connection[Any]) -> Run:
    def run(sql: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(sql, params or None)

    return run
