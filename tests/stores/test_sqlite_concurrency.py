"""Issue 21 item 6: searches while another process writes the same SQLite store.

A writer process replaces and removes documents as fast as it can while this process searches the
file. Every search must succeed, and every hit must be what the file held at some point: a dense hit's
score is its own chunk's score (not another row's, as when positions computed against one version of
the rowids were used against another), a keyword hit holds a query term, and the security filter
holds (no private chunk reaches a public caller).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragwright.model.identity import Identity
from ragwright.stores.sqlite import SqliteStore
from ragwright.stores.sqlite.dense import SqliteDense
from ragwright.stores.sqlite.rows import SqliteRows

DIM = 16
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]

# vector_of and write_document are also run by the writer process (the source of WRITER embeds them).
HELPERS = """
import zlib
import numpy as np
from ragwright.testing.conformance import chunks_for, record

DIM = 16
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def vector_of(text):
    v = np.random.default_rng(zlib.crc32(text.encode())).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def write_document(store, d, revision):
    n = 1 + (d + revision) % 5
    texts = [f"{WORDS[(d + i) % 8]} {WORDS[(revision + i) % 8]} doc {d} rev {revision} part {i}" for i in range(n)]
    acl = ("*",) if d % 3 else ("hr",)  # a third of the documents are private: the eligible set is a subset
    chunks = chunks_for(f"doc{d}", texts, acl=acl)
    store.replace_document(record(f"doc{d}", n, acl=acl), chunks, np.stack([vector_of(t) for t in texts]))
"""

WRITER = (
    HELPERS
    + """
import random, sys, time
from pathlib import Path
from ragwright.stores.sqlite import SqliteStore

store = SqliteStore(sys.argv[1])
stop, rng, writes = Path(sys.argv[2]), random.Random(5), 0
deadline = time.monotonic() + 120
print("ready", flush=True)
while not stop.exists() and time.monotonic() < deadline:
    d = rng.randrange(60)
    if rng.random() < 0.25:
        store.remove_document(f"doc{d}")
    else:
        write_document(store, d, rng.randrange(1000))
    writes += 1
store.close()
print(writes, flush=True)
"""
)

namespace: dict[str, object] = {}
exec(HELPERS, namespace)  # the same helpers in this process
vector_of = namespace["vector_of"]
write_document = namespace["write_document"]


@pytest.mark.slow
def test_searches_stay_consistent_while_another_process_writes(tmp_path: Path) -> None:
    path, stop = tmp_path / "s.db", tmp_path / "stop"
    with SqliteStore(path) as store:
        store.bind_embedder("m", DIM)
        for d in range(60):
            write_document(store, d, 0)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    public = Identity()
    rng = np.random.default_rng(3)
    failures: list[str] = []
    searches = dense_hits = 0
    reader = SqliteStore(path)
    try:
        for i in range(200):
            q = rng.normal(size=DIM).astype(np.float32)
            q /= np.linalg.norm(q)
            word = WORDS[i % len(WORDS)]
            try:
                dense = reader.search_dense(q, 8, identity=public)
                keyword = reader.search_keyword(word, 8, identity=public)
                if i % 20 == 0:  # one committed state: a write in flight is never reported as damage
                    failures.extend(f"integrity: {p}" for p in reader.check_integrity())
            except Exception as exc:  # the defect: IndexError from positions of another version
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            searches += 1
            for hit in dense:
                dense_hits += 1
                expected = float(q @ vector_of(hit.chunk.text))  # type: ignore[operator]
                if abs(hit.score - expected) > 1e-4:
                    failures.append(f"dense hit {hit.chunk.text!r} scored {hit.score:.4f}, its vector {expected:.4f}")
                if hit.chunk.acl != ("*",):
                    failures.append(f"a private chunk reached a public caller: {hit.chunk.text!r}")
            for hit in keyword:
                if word not in hit.chunk.text.split() or hit.chunk.acl != ("*",):
                    failures.append(f"keyword hit {hit.chunk.text!r} for {word!r} (acl {hit.chunk.acl})")
    finally:
        reader.close()
        stop.touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    writes = int(out.split()[-1])
    assert writes > 200, "the writer really churned the file during the searches"
    assert failures == [], f"{len(failures)} failures in {searches} searches, first: {failures[:5]}"
    assert searches == 200 and dense_hits > 0


def test_a_search_reads_one_snapshot_even_when_a_write_lands_between_its_reads(tmp_path: Path) -> None:
    """Deterministic: another connection commits between the reads a search makes (the rowids, then the
    eligible rows); the search must still index only rows of one state of the file."""
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        store.bind_embedder("m", DIM)
        for d in range(10):
            write_document(store, d, 0)
    reader, other = SqliteStore(path), SqliteStore(path)
    reader.search_dense(vector_of("warm"), 3, identity=Identity())  # type: ignore[operator]
    real_load = SqliteRows.load
    writes = iter(range(10, 20))

    def load_then_write(self: SqliteRows) -> object:
        rowids = real_load(self)
        if self is reader._rows:
            write_document(other, next(writes, 99), 1)  # a commit lands right after the rowids were read
        return rowids

    SqliteRows.load = load_then_write  # type: ignore[method-assign]
    try:
        for i in range(5):
            q = vector_of(f"query {i}")
            hits = reader.search_dense(q, 50, identity=Identity())  # type: ignore[arg-type]
            assert hits, "the search found the stored chunks"
            for hit in hits:
                assert hit.score == pytest.approx(float(q @ vector_of(hit.chunk.text)), abs=1e-4)  # type: ignore[operator]
            assert all(h.chunk.acl == ("*",) for h in reader.search_keyword("alpha", 50, identity=Identity()))
    finally:
        SqliteRows.load = real_load  # type: ignore[method-assign]
        reader.close()
        other.close()


def test_after_another_process_writes_only_the_added_rows_are_read(tmp_path: Path) -> None:
    """The dense matrix is re-synced after every write by another process (nearly every search under
    concurrent writers): rows it already holds are copied, not read back from the file again."""
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        store.bind_embedder("m", DIM)
        for d in range(30):
            write_document(store, d, 0)
    reader, other = SqliteStore(path), SqliteStore(path)
    read_rows: list[int] = []
    real_reader = SqliteDense._vector_reader

    def counting_reader(self: SqliteDense, table: str, dim: int) -> object:
        read = real_reader(self, table, dim)

        def counted(keys: np.ndarray) -> object:  # type: ignore[type-arg]
            read_rows.append(int(keys.size))
            return read(keys)

        return counted

    SqliteDense._vector_reader = counting_reader  # type: ignore[assignment, method-assign]
    try:
        q = vector_of("query")
        first = reader.search_dense(q, 5, identity=Identity())  # type: ignore[arg-type]
        total = reader.count_chunks()
        assert sum(read_rows) == total  # the first sync reads every row
        read_rows.clear()
        write_document(other, 30, 0)  # a new document of 1 + 30 % 5 = 1 chunk
        write_document(other, 1, 7)  # a rewritten one: 1 + 8 % 5 = 4 new chunks, its old ones gone
        after = reader.search_dense(q, 5, identity=Identity())  # type: ignore[arg-type]
        assert sum(read_rows) == 5, read_rows
        fresh = SqliteStore(path)
        try:
            assert [(h.chunk.id, round(h.score, 5)) for h in after] == [
                (h.chunk.id, round(h.score, 5))
                for h in fresh.search_dense(q, 5, identity=Identity())  # type: ignore[arg-type]
            ]
        finally:
            fresh.close()
        assert first
    finally:
        SqliteDense._vector_reader = real_reader  # type: ignore[method-assign]
        reader.close()
        other.close()


def test_the_reusing_reader_copies_only_rows_with_the_same_key_and_tag() -> None:
    from ragwright.stores.sqlite.dense_rows import reusing_reader

    old_keys = np.array([1, 2, 3, 5], dtype=np.int64)
    old_tags = np.array([10, 20, 30, 50], dtype=np.uint32)
    old_matrix = np.arange(8, dtype=np.float32).reshape(4, 2)
    keys = np.array([2, 3, 4, 6], dtype=np.int64)  # 1 and 5 gone, 4 and 6 added, 3 reused by another chunk
    tags = np.array([20, 31, 40, 60], dtype=np.uint32)
    asked: list[list[int]] = []

    def read(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
        asked.append(wanted.tolist())
        present = wanted[wanted != 6]  # 6 was deleted meanwhile: it drops out
        return present, np.stack([np.full(2, 100.0 + k, dtype=np.float32) for k in present.tolist()])

    got_keys, rows = reusing_reader(old_keys, old_tags, old_matrix, keys, tags, read)(keys)
    assert asked == [[3, 4, 6]]  # 2 is copied; 3's tag changed, so its row is read again
    assert got_keys.tolist() == [2, 3, 4]
    assert rows.tolist() == [[2.0, 3.0], [103.0, 103.0], [104.0, 104.0]]
