"""``BEGIN IMMEDIATE`` … ``COMMIT`` under the store's lock."""

from __future__ import annotations

import sqlite3
import threading


class Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` under the store's lock; rolls back on error."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._conn, self._lock = conn, lock

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            self._conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self._lock.release()
