"""Tables a feature keeps beside a store's own (the entity graph, the summary hierarchy, conversation
memory): one implementation for SQLite and PostgreSQL.

:class:`SqlSideTables` is the base: its statements are written once, with ``?`` placeholders and
``{real}`` / ``{blob}`` / ``{acl}`` / ``{insertion_column}`` in the DDL, and a :class:`SideDialect` says
the rest (the placeholder, column types, how an ACL is stored and how the caller's security predicate
reads it, byte-order comparison, the column ordering rows as inserted). The schema is created on open
(or on the first write), each write is one transaction serialised per feature (``BEGIN IMMEDIATE`` in
SQLite, an advisory lock in PostgreSQL).

:func:`open_sql_side` gives the database (a :class:`SideDatabase`): the store's ``side_database()`` hook
(the PostgreSQL store: :mod:`ragwright.stores.postgres.side_tables`, in its schema); else SQLite through
:func:`open_side_database` — a feature hook returning an ``sqlite3.Connection`` (``graph_database()``,
…), a :class:`~ragwright.stores.sqlite.SqliteStore`'s file opened with a second connection (WAL: the
store's readers and writers are not blocked; writes wait up to *busy_timeout*), or an in-memory database
for the in-memory store; any other store is refused with a :class:`~ragwright.errors.ConfigError` naming
the feature."""

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
    #: A column (``{insertion_column}`` in a table's DDL) ordering rows as inserted, and its name.
    insertion_column: str = ""
    insertion_order: str = "rowid"

    def sql(self, statement: str) -> str:
        """*statement* (written with ``?`` and ``{real}`` / ``{blob}`` / ``{acl}``) in this dialect."""
        out = statement.replace("{real}", self.real).replace("{blob}", self.blob).replace("{acl}", self.acl)
        out = out.replace("{insertion_column}", self.insertion_column)
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

    def has_table(self, table: str) -> bool: ...

    def has_rows(self, table: str) -> bool: ...

    def location(self) -> str:
        """The collection whose rows the tables hold now: it changes when the store object follows its
        alias to another (another process's reindex). On PostgreSQL the statements then reach that
        collection's own side tables; in an SQLite file every collection shares them, and their rows
        are to be brought in step with the new collection's chunks."""
        ...

    def close(self) -> None: ...


class SqliteSideDatabase:
    """A :class:`SideDatabase` over one SQLite connection behind a lock (``BEGIN IMMEDIATE`` writes)."""

    dialect = SQLITE_SIDE

    def __init__(self, conn: sqlite3.Connection, where: Callable[[], str] | None = None) -> None:
        #: The store's current collection (:meth:`location`), when it has collections.
        self.conn, self._lock, self.where = conn, threading.RLock(), where

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

    def has_table(self, table: str) -> bool:
        with self._lock:
            return self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None

    def has_rows(self, table: str) -> bool:
        with self._lock:
            return (
                self.has_table(table) and self.conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
            )

    def location(self) -> str:
        """The store's current collection (``""`` when not said): every one shares the file's tables."""
        return self.where() if self.where is not None else ""

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def open_sql_side(store: Any, *, hook: str, feature: str, busy_timeout: float = 30.0) -> SideDatabase:
    """The database for *feature*'s tables beside *store*: its ``side_database()`` (PostgreSQL), else
    SQLite as :func:`open_side_database` opens it (a *hook* returning a connection, the store's file, or
    in memory)."""
    where = (lambda: str(store.current_collection)) if hasattr(type(store), "current_collection") else None
    offered = getattr(store, "side_database", None)
    if callable(offered):
        db: SideDatabase = offered()
        if getattr(db, "where", "") is None:  # the store did not say: its current collection
            db.where = where  # type: ignore[attr-defined]
        return db
    conn = open_side_database(store, hook=hook, feature=feature, busy_timeout=busy_timeout)
    return SqliteSideDatabase(conn, where)


def side_dialect(store: Any) -> SideDialect:
    """The dialect of *store*'s side tables (what a caller's security predicate over them is written in)."""
    offered = getattr(store, "side_database", None)
    return offered().dialect if callable(offered) else SQLITE_SIDE


class SqlSideTables:
    """Side tables over a :class:`SideDatabase`: the *schema* created on open (or, with *lazy* naming one
    of its tables, on the first write: reads find nothing until then), each write one transaction
    (serialised under *lock*), every statement written once with ``?`` (see :class:`SideDialect`).

    When the database's :meth:`~SideDatabase.location` moves (the store object followed its alias to a
    collection another process built, maybe without this feature), the schema is made sure of there on
    the first read (or, *lazy*, once it exists) — never read from tables that are not there — and
    :attr:`on_move` runs, for the feature to bring its rows in step with that collection."""

    def __init__(self, db: SideDatabase, schema: Sequence[str], *, lock: str, lazy: str | None = None) -> None:
        self.db, self.dialect, self._lock_name = db, db.dialect, lock
        self._schema, self._lazy = tuple(schema), lazy
        self._ready: set[str] = set()  # the locations whose schema is known to exist
        #: Called when the tables first hold another collection's rows (the feature catches up there).
        self.on_move: Callable[[], object] | None = None
        if lazy is None:
            self._create()

    def location(self) -> str:
        """Which tables the statements reach now (see :meth:`SideDatabase.location`)."""
        return self.db.location()

    def _create(self) -> None:
        where = self.db.location()
        with self.db.write(self._lock_name) as (run, _many):
            for statement in self._schema:
                run(self.dialect.sql(statement))
        self._ready.add(where)

    def _exists(self) -> bool:
        """Whether the schema exists where the statements go now (created there unless *lazy*); on moving
        to new tables, :attr:`on_move` runs once they are there."""
        where = self.db.location()
        if where in self._ready:
            return True
        if self._lazy is None:
            self._create()
        elif self.db.has_table(self._lazy):
            self._ready.add(where)
        else:
            return False
        if len(self._ready) > 1 and self.on_move is not None:
            self.on_move()
        return True

    @contextmanager
    def _write(self) -> Iterator[tuple[Run, Run]]:
        """``(run, run_many)``: each takes a statement written with ``?`` and its parameters."""
        if not self._exists():
            self._create()
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
        if not self._exists():
            return []
        with self.db.read() as run:
            return [tuple(r) for r in run(self.dialect.sql(sql), params).fetchall()]

    def close(self) -> None:
        self.db.close()
