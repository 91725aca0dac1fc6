"""Tables a feature keeps beside a store's own (the entity graph, the summary hierarchy): how they open.

Two bases. :class:`SqlSideTables` is written once for SQLite and PostgreSQL: its statements use ``?``
placeholders and ``{real}`` / ``{blob}`` / ``{acl}`` column types, and a :class:`SideDialect` says the rest (the
placeholder, how an ACL is stored and how the caller's security predicate reads it, a byte-order
collation). :func:`open_sql_side` gives the database: a store's ``side_database()`` hook (the PostgreSQL
store: :mod:`ragwright.stores.postgres.side_tables`), else SQLite as below.

:class:`SideTables` is SQLite only (a store may offer a hook method such as ``hierarchy_database()``
returning an ``sqlite3.Connection``): :func:`open_side_database` opens a
:class:`~ragwright.stores.sqlite.SqliteStore`'s file with a second connection (WAL: the store's readers
and writers are not blocked; writes wait up to *busy_timeout*); the in-memory store gets an in-memory
database; any other store is refused with a :class:`~ragwright.errors.ConfigError` naming the feature.
Both: the schema created on open, each write one transaction (``BEGIN IMMEDIATE`` in SQLite).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from ragwright.errors import ConfigError
from ragwright.model.identity import Identity

__all__ = [
    "SQLITE_SIDE",
    "DocumentRows",
    "SideDatabase",
    "SideDialect",
    "SideTables",
    "SqlSideTables",
    "file_has_rows",
    "follow_documents",
    "open_side_database",
    "open_sql_side",
    "side_dialect",
]


def open_side_database(store: Any, *, hook: str, feature: str, busy_timeout: float = 30.0) -> sqlite3.Connection:
    """A connection for *feature*'s tables beside *store* (see the module docstring)."""
    offered = getattr(store, hook, None)
    if callable(offered):
        conn: sqlite3.Connection = offered()
        return conn
    from ragwright.stores.memory import MemoryStore
    from ragwright.stores.sqlite import SqliteStore

    if isinstance(store, SqliteStore):
        return sqlite3.connect(str(store.path), check_same_thread=False, isolation_level=None, timeout=busy_timeout)
    if isinstance(store, MemoryStore):
        return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    raise ConfigError(
        f"{feature} does not support {type(store).__name__} yet: use the SQLite store (the default) or the "
        "in-memory store"
    )


def file_has_rows(store: object, table: str) -> bool:
    """Whether *store* already holds rows in its side table *table* (read-only): its SQLite file, or the
    database behind its ``side_database()`` hook; ``False`` for other stores."""
    hook = getattr(store, "side_database", None)
    if callable(hook):
        return bool(hook().has_rows(table))
    path = getattr(store, "path", None)
    if path is None:
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT name FROM sqlite_master WHERE name = ?", (table,)).fetchone()
            return row is not None and conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


class DocumentRows(Protocol):
    """Side tables that keep rows per document, each with the document's tenant and ACL."""

    def documents(self) -> Mapping[str, Any]: ...

    def remove_document(self, document_id: str) -> None: ...

    def update_access(self, document_id: str, tenant: str, acl: Sequence[str]) -> None: ...


def follow_documents(store: Any, tables: DocumentRows, document_ids: Sequence[str]) -> None:
    """A removal or an access change of these documents (``Rag.remove`` / ``Rag.update_acl``): their rows
    go with a document that is no longer indexed, and take its new tenant and ACL otherwise."""
    from ragwright.model.records import DocumentStatus

    known = tables.documents()
    for doc in document_ids:
        record = store.get_record(doc)
        if record is None or record.status is not DocumentStatus.INDEXED:
            tables.remove_document(doc)
        elif doc in known:
            tables.update_access(doc, record.tenant, record.acl)


class SideTables:
    """One connection behind a lock; the *schema* created on open; each write one transaction."""

    def __init__(self, conn: sqlite3.Connection, schema: Sequence[str]) -> None:
        self._conn, self._lock = conn, threading.RLock()
        with self._write():
            for statement in schema:
                conn.execute(statement)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._before_commit()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _before_commit(self) -> None:
        """Runs inside every write, last (a subclass bumps a version here)."""

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return [tuple(r) for r in self._conn.execute(sql, params)]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- one implementation for SQLite and PostgreSQL -----------------------------------------------------


@dataclass(frozen=True)
class SideDialect:
    """What the shared side-table statements need to know about a database."""

    placeholder: str
    #: Column type of a float (PostgreSQL's ``real`` is 4 bytes: a timestamp needs ``double precision``).
    real: str
    #: Column type of bytes (a vector's float32 buffer).
    blob: str
    #: Column type of an ACL, how one is written and read back.
    acl: str
    encode_acl: Callable[[Sequence[str]], Any]
    decode_acl: Callable[[Any], tuple[str, ...]]
    #: The store's security predicate: ``(identity, tenant column, ACL column, params) -> SQL``.
    security: Callable[[Identity, str, str, list[Any]], str]
    #: Appended to a text expression to compare it in byte order (as SQLite does by default).
    byte_order: str = ""

    def sql(self, statement: str) -> str:
        """*statement* (written with ``?`` and ``{real}`` / ``{blob}`` / ``{acl}``) in this dialect."""
        out = statement.replace("{real}", self.real).replace("{blob}", self.blob).replace("{acl}", self.acl)
        return out if self.placeholder == "?" else out.replace("?", self.placeholder)


def _sqlite_security(identity: Identity, tenant_col: str, acl_col: str, params: list[Any]) -> str:
    from ragwright.stores.sqlite.sql_filters import compile_security

    return compile_security(identity, tenant_col, acl_col, params)


#: SQLite: an ACL is the JSON text of its sorted groups.
SQLITE_SIDE = SideDialect(
    placeholder="?",
    real="REAL",
    blob="BLOB",
    acl="TEXT",
    encode_acl=lambda acl: json.dumps(sorted(acl)),
    decode_acl=lambda stored: tuple(json.loads(stored)),
    security=_sqlite_security,
)


#: Runs one statement (``run(sql, params=())``) and returns its cursor, or many (``run_many(sql, rows)``).
Run = Callable[..., Any]


class SideDatabase(Protocol):
    """Where side tables live: a unit of work yields ``(run one, run many)``."""

    dialect: SideDialect

    def write(self, lock: str) -> AbstractContextManager[tuple[Run, Run]]:
        """One transaction, serialised with every other write under *lock*."""
        ...

    def read(self) -> AbstractContextManager[Run]: ...

    def has_rows(self, table: str) -> bool: ...

    def close(self) -> None: ...


class SqliteSideDatabase:
    """A :class:`SideDatabase` over one SQLite connection behind a lock (``BEGIN IMMEDIATE`` writes)."""

    dialect = SQLITE_SIDE

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self._lock = conn, threading.RLock()

    @contextmanager
    def write(self, lock: str) -> Iterator[tuple[Run, Run]]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn.execute, self.conn.executemany
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[Run]:
        with self._lock:
            yield self.conn.execute

    def has_rows(self, table: str) -> bool:
        with self._lock:
            row = self.conn.execute("SELECT name FROM sqlite_master WHERE name = ?", (table,)).fetchone()
            return row is not None and self.conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def open_sql_side(store: Any, *, hook: str, feature: str, busy_timeout: float = 30.0) -> SideDatabase:
    """The database for *feature*'s tables beside *store*: its ``side_database()`` (PostgreSQL), else
    SQLite as :func:`open_side_database` opens it (a *hook* returning a connection, the store's file, or
    in memory)."""
    offered = getattr(store, "side_database", None)
    if callable(offered):
        db: SideDatabase = offered()
        return db
    return SqliteSideDatabase(open_side_database(store, hook=hook, feature=feature, busy_timeout=busy_timeout))


def side_dialect(store: Any) -> SideDialect:
    """The dialect of *store*'s side tables (what a caller's security predicate over them is written in)."""
    offered = getattr(store, "side_database", None)
    return offered().dialect if callable(offered) else SQLITE_SIDE


class SqlSideTables:
    """Side tables over a :class:`SideDatabase`: the *schema* created on open, each write one transaction
    (serialised under *lock*), every statement written once with ``?`` (see :class:`SideDialect`)."""

    def __init__(self, db: SideDatabase, schema: Sequence[str], *, lock: str) -> None:
        self.db, self.dialect, self._lock_name = db, db.dialect, lock
        with self._write() as (run, _many):
            for statement in schema:
                run(statement)

    @contextmanager
    def _write(self) -> Iterator[tuple[Run, Run]]:
        """``(run, run_many)``: each takes a statement written with ``?`` and its parameters."""
        sql = self.dialect.sql
        with self.db.write(self._lock_name) as (run, many):

            def one(statement: str, params: Sequence[Any] = ()) -> Any:
                return run(sql(statement), params)

            def each(statement: str, rows: Sequence[Any] = ()) -> Any:
                return many(sql(statement), rows)

            yield one, each
            self._before_commit(one)

    def _before_commit(self, run: Run) -> None:
        """Runs inside every write, last (a subclass bumps a version here)."""

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.db.read() as run:
            return [tuple(r) for r in run(self.dialect.sql(sql), params).fetchall()]

    def close(self) -> None:
        self.db.close()
