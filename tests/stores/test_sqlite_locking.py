"""Issue 21 item 7: another process holding the store's write lock.

Readers never wait for a writer (WAL): opening the store, binding the embedder it is already bound to,
and every read answer from the last committed state. A write that cannot get the lock within the busy
timeout raises StoreBusyError ("busy, retry"), never the "not readable … move it aside" meant for a
damaged file — which a file that really is not a store still gets.

The holder is a separate process (``BEGIN IMMEDIATE`` and an uncommitted write, held until told to
stop): each read below would have failed with "database is locked" had it needed the write lock, so
passing proves it did not wait for it — no timing assertion needed.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import StoreBusyError, StoreError
from ragwright.model.identity import Identity
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.conformance import DIM, chunks_for, record, unit

HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE documents SET title = 'uncommitted' WHERE 1")
conn.execute("INSERT OR REPLACE INTO rag_metadata(key, value) VALUES ('held', 'yes')")
print("holding", flush=True)
sys.stdin.read()  # until the test closes our stdin
conn.execute("ROLLBACK")
"""


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Another process holds *path*'s write lock (with an uncommitted write) while the block runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0


def filled(path: Path) -> Path:
    with SqliteStore(path) as store:
        store.bind_embedder("m", DIM)
        store.replace_document(
            record("a", 2), chunks_for("a", ["alpha one", "alpha two"]), np.stack([unit(1), unit(0, 1)])
        )
    return path


def test_reads_do_not_wait_for_a_writer_and_see_the_last_commit(tmp_path: Path) -> None:
    path = filled(tmp_path / "s.db")
    with write_lock_held(path):
        store = SqliteStore(path, busy_timeout=0.2)  # opening writes nothing when the schema is in place
        try:
            store.bind_embedder("m", DIM)  # already bound to it: nothing to write
            assert [r.document_id for r in store.list_records()] == ["a"]
            assert store.get_record("a") is not None and store.get_record("a").title != "uncommitted"  # type: ignore[union-attr]
            assert store.count_chunks() == 2
            assert [h.chunk.text for h in store.search_dense(unit(1), 1, identity=Identity())] == ["alpha one"]
            assert len(store.search_keyword("alpha", 5, identity=Identity())) == 2
            assert store.check_integrity() == []
            assert store._h.meta("held") is None  # the holder's write is not visible
        finally:
            store.close()


def test_a_write_says_busy_and_retry_and_succeeds_once_the_lock_is_free(tmp_path: Path) -> None:
    path = filled(tmp_path / "s.db")
    store = SqliteStore(path, busy_timeout=0.2)
    try:
        with write_lock_held(path):
            with pytest.raises(StoreBusyError) as caught:
                store.remove_document("a")
            message = str(caught.value)
            assert "busy" in message and "retry" in message and str(path) in message
            assert "move it aside" not in message and "not readable" not in message
            assert caught.value.path == str(path)
            assert store.count_chunks() == 2  # nothing was changed
        assert store.remove_document("a") == 2  # the same call, once the other process is done
    finally:
        store.close()


def test_opening_a_new_store_while_another_process_creates_it_says_busy(tmp_path: Path) -> None:
    """A file whose schema must still be written (here: a collection name to record) waits for the lock
    like any write, and says busy — not unreadable."""
    path = filled(tmp_path / "s.db")
    with write_lock_held(path), pytest.raises(StoreBusyError) as caught:
        SqliteStore(path, collection="renamed", busy_timeout=0.2)
    assert "move it aside" not in str(caught.value)


@pytest.mark.parametrize("content", [b"this is not a database at all " * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_a_file_that_is_not_a_store_is_still_called_unreadable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(content)
    with pytest.raises(StoreError) as caught:
        SqliteStore(path)
    assert not isinstance(caught.value, StoreBusyError)
    assert "not a readable ragwright store" in str(caught.value) and "move it aside" in str(caught.value)
    assert path.read_bytes() == content  # left untouched


def test_busy_timeout_is_validated(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="busy_timeout"):
        SqliteStore(tmp_path / "s.db", busy_timeout=-1)
