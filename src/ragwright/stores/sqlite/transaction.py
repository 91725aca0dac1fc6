"""Transactions of the SQLite store, under the store's lock.

* :class:`Transaction` — ``BEGIN IMMEDIATE`` … ``COMMIT`` for every write. When another process holds
  the write lock past the busy timeout it raises :class:`~ragwright.errors.StoreBusyError` ("busy,
  retry"), never a message that suggests the file is damaged.
* :class:`ReadSnapshot` — ``BEGIN`` … ``COMMIT`` around a read that must see one committed state of
  the file (the derived state a search loads: rowids, the dense index, eligible sets, the BM25 catch-up).
  In WAL mode a read transaction takes no lock a writer waits for, and waits for no writer: it reads
  the last committed snapshot, pinned by its first statement. Nested uses share the outer one.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ragwright.errors import StoreBusyError

#: How long a write waits for another process's write transaction before it says the store is busy.
BUSY_TIMEOUT_S = 5.0

_BUSY = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY"})


def is_busy(exc: BaseException) -> bool:
    """Whether *exc* is SQLite saying another connection holds a lock (not a damaged file)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.split("(")[0] in _BUSY or name.startswith("SQLITE_BUSY") or "database is locked" in str(exc)


def busy_error(path: Path | str, exc: BaseException, waited: float = BUSY_TIMEOUT_S) -> StoreBusyError:
    """The error a write that could not get the lock raises: the store is healthy, retry later."""
    return StoreBusyError(
        f"the store {path} is busy: another process has been writing to it for more than {waited:g} s "
        f"({exc}); nothing was changed — retry when that process has finished",
        path=str(path),
    )


class Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` under the store's lock; rolls back on error."""

    def __init__(
        self, conn: sqlite3.Connection, lock: threading.RLock, path: Path | str = "", timeout: float = BUSY_TIMEOUT_S
    ) -> None:
        self._conn, self._lock, self._path, self._timeout = conn, lock, path, timeout

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            self._lock.release()
            if is_busy(exc):
                raise busy_error(self._path, exc, self._timeout) from exc
            raise
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            if exc_type:
                self._conn.execute("ROLLBACK")
            else:
                try:
                    self._conn.execute("COMMIT")
                except sqlite3.OperationalError as error:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    if is_busy(error):
                        raise busy_error(self._path, error, self._timeout) from error
                    raise
        finally:
            self._lock.release()


class ReadSnapshot:
    """``BEGIN`` … ``COMMIT`` (a read transaction) under the store's lock, unless the connection is in a
    transaction already (a nested snapshot, or a read inside a write): then that one is shared."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._conn, self._lock = conn, lock
        self._began = False

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._began = not self._conn.in_transaction
            if self._began:
                self._conn.execute("BEGIN")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            if self._began and self._conn.in_transaction:
                self._conn.execute("COMMIT")  # a read transaction: ends the snapshot, writes nothing
        finally:
            self._lock.release()
