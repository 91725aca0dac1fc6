"""PostgreSQL store specifics: migrations, reopening, filters in SQL, HNSW inside the filter, derived BM25."""

from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import ConfigError, StoreError
from ragwright.model.chunk import Chunk
from ragwright.model.filters import And, Compare, Eq
from ragwright.model.identity import Identity
from ragwright.stores.postgres import PostgresOptions, PostgresStore
from ragwright.stores.postgres.schema import SCHEMA_VERSION
from ragwright.testing.conformance import DIM, chunks_for, record, unit


def test_reopen_restores_everything_and_records_the_schema_version(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as s:
        s.bind_embedder("m", DIM)
        chunks = chunks_for("d", ["one", "two"], metadata={"k": 1})
        s.replace_document(record("d", 2), chunks, np.stack([unit(1), unit(0, 1)]))
    with PostgresStore(pg_dsn) as s:
        assert s.embedding_model == ("m", DIM)
        assert [h.chunk for h in s.search_dense(unit(1), 1, identity=Identity())] == [chunks[0]]
        assert s.get_record("d") == record("d", 2)
        got = s.get_vectors([c.id for c in chunks] + ["missing"])
        assert set(got) == {c.id for c in chunks} and got[chunks[1].id].dtype == np.float32
        np.testing.assert_allclose(got[chunks[1].id], unit(0, 1))
        with s._conn() as conn:
            assert conn.execute("SELECT MAX(version) FROM rag_schema_version").fetchone() == (SCHEMA_VERSION,)


def test_foreign_schema_and_newer_schema_are_refused(pg_dsn: str) -> None:
    import psycopg

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app")
        conn.execute("CREATE TABLE app.users (id INT)")
    with pytest.raises(StoreError, match="not a ragwright store"):
        PostgresStore(pg_dsn, options=PostgresOptions(schema="app"))
    PostgresStore(pg_dsn).close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO ragwright.rag_schema_version(version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="schema version"):
        PostgresStore(pg_dsn)


def test_unreachable_server_names_the_store_without_the_password() -> None:
    dsn = "postgresql://user:s3cret@127.0.0.1:1/nothing"
    with pytest.raises(StoreError, match="cannot connect") as info:
        PostgresStore(dsn, options=PostgresOptions(connect_timeout=2))
    assert "s3cret" not in str(info.value)


def test_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="schema"):
        PostgresOptions(schema='x"; DROP TABLE chunks; --')
    with pytest.raises(ConfigError, match="ef_search"):
        PostgresOptions(ef_search=5000)


def test_collection_guard_wipes_stale_rows(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn, collection="v1") as s:
        s.bind_embedder("m", DIM)
        s.replace_document(record("d"), chunks_for("d", ["x"]), np.stack([unit(1)]))
    with PostgresStore(pg_dsn, collection="v1") as s:
        assert s.count_chunks() == 1
    with PostgresStore(pg_dsn, collection="v2") as s:
        assert s.count_chunks() == 0 and s.list_records() == [] and s.collection == "v2"
        s.bind_embedder("another", 8)  # the old model binding (and the column's dimension) went with the rows
        s.replace_document(record("e"), chunks_for("e", ["y"]), np.ones((1, 8), dtype=np.float32) / 8**0.5)
        assert s.check_integrity() == []


def test_hostile_values_travel_as_parameters_and_nul_is_stored(pg_dsn: str) -> None:
    evil = "x'); DROP TABLE chunks; --"
    with PostgresStore(pg_dsn) as s:
        s.bind_embedder("m", DIM)
        chunks = [
            Chunk.create("d", "nul\x00byte evil", 0, metadata={"k": evil}),
            Chunk.create("d", "plain evil", 1, metadata={"k": "other"}),
        ]
        s.replace_document(record("d", 2), chunks, np.stack([unit(1), unit(1)]))
        hits = s.search_dense(unit(1), 5, identity=Identity(), metadata_filter=Eq("k", evil))
        assert [h.chunk.text for h in hits] == ["nul\ufffdbyte evil"]
        assert {h.chunk.position for h in s.search_keyword("evil", 5, identity=Identity(tenant=evil))} == set()
        assert s.count_chunks() == 2


def _random_store(s: PostgresStore, n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    s.bind_embedder("random", dim)
    per_doc = 100
    for d in range(n // per_doc):
        chunks = [
            Chunk.create(f"doc{d}", f"chunk {d}-{i}", i, metadata={"bucket": (d * per_doc + i) % 20})
            for i in range(per_doc)
        ]
        s.replace_document(record(f"doc{d}", per_doc), chunks, vecs[d * per_doc : (d + 1) * per_doc])
    return vecs


def _recall(s: PostgresStore, vecs: np.ndarray, keep: int) -> tuple[float, int]:
    """Recall@10 against exact search under the filter bucket == keep, and the fewest hits returned."""
    rng = np.random.default_rng(1)
    found, fewest = 0, 10
    for q in rng.standard_normal((10, vecs.shape[1])).astype(np.float32):
        q /= np.linalg.norm(q)
        hits = s.search_dense(q, 10, identity=Identity(), metadata_filter=Eq("bucket", keep))
        assert all(h.chunk.metadata["bucket"] == keep for h in hits)
        eligible = np.array([i for i in range(len(vecs)) if i % 20 == keep])
        truth = set(eligible[np.argsort(-(vecs[eligible] @ q))[:10]].tolist())
        found += len(truth & {int(h.chunk.document_id[3:]) * 100 + h.chunk.position for h in hits})
        fewest = min(fewest, len(hits))
    return found / 100, fewest


def test_hnsw_applies_the_filter_inside_the_index_scan(pg_dsn: str) -> None:
    """A small candidate list (ef_search=10) and a 5 % filter: the iterative index scan still returns
    k matching chunks with high recall; with iterative scans off the same index post-filters and
    comes back short — the proof that this test can fail."""
    with PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=0, ef_search=10)) as s:
        vecs = _random_store(s, 3000)
        with s._conn() as conn:
            conn.execute("ANALYZE chunks")
        assert "chunks_hnsw" in s.explain_dense(vecs[0], 10, identity=Identity(), metadata_filter=Eq("bucket", 3))
        recall, fewest = _recall(s, vecs, keep=3)
        assert fewest == 10 and recall >= 0.8, (fewest, recall)
    with PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=0, ef_search=10, iterative_scan="off")) as s:
        _, fewest = _recall(s, vecs, keep=3)
        assert fewest < 10


def test_selective_filters_are_searched_exactly(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn, options=PostgresOptions(exact_threshold=200)) as s:
        vecs = _random_store(s, 2000, seed=2)
        q = vecs[7]
        flt = And((Eq("bucket", 7), Compare("bucket", "lte", 7)))  # 100 chunks: under the threshold
        hits = s.search_dense(q, 5, identity=Identity(), metadata_filter=flt)
        eligible = np.array([i for i in range(2000) if i % 20 == 7])
        truth = eligible[np.argsort(-(vecs[eligible] @ q))[:5]].tolist()
        assert [int(h.chunk.document_id[3:]) * 100 + h.chunk.position for h in hits] == truth


def test_keyword_index_follows_other_processes_and_snapshots(pg_dsn: str, tmp_path: Path) -> None:
    snap = tmp_path / "bm25.npz"
    opts = PostgresOptions(keyword_snapshot=snap)
    with PostgresStore(pg_dsn, options=opts) as reader, PostgresStore(pg_dsn) as writer:
        writer.bind_embedder("m", DIM)
        writer.replace_document(record("d"), chunks_for("d", ["running dogs"]), np.stack([unit(1)]))
        assert [h.chunk.text for h in reader.search_keyword("dogs", 5, identity=Identity())] == ["running dogs"]
        writer.replace_document(record("e"), chunks_for("e", ["cats running"]), np.stack([unit(1)]))
        writer.replace_document(record("d"), chunks_for("d", ["sleeping dogs"]), np.stack([unit(1)]))
        assert {h.chunk.text for h in reader.search_keyword("running", 5, identity=Identity())} == {"cats running"}
        writer.remove_document("e")
        assert reader.search_keyword("running", 5, identity=Identity()) == []
        assert reader.check_integrity() == []
    assert snap.exists()
    with PostgresStore(pg_dsn, options=opts) as reopened:
        reopened._keyword._rebuild = None  # type: ignore[assignment, method-assign]  # must load the snapshot
        assert [h.chunk.text for h in reopened.search_keyword("sleeping", 5, identity=Identity())] == ["sleeping dogs"]
        with PostgresStore(pg_dsn) as writer:  # a write after the snapshot is caught up from the change log
            writer.replace_document(record("f"), chunks_for("f", ["sleeping cats"]), np.stack([unit(1)]))
        assert len(reopened.search_keyword("sleeping", 5, identity=Identity())) == 2


def test_unknown_analyzer_is_refused_before_connecting() -> None:
    with pytest.raises(ConfigError, match="analyzer"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/x", keyword_analyzer="klingon")


def test_index_version_moves_on_every_write(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as s:
        s.bind_embedder("m", DIM)
        v0 = s.index_version()
        s.replace_document(record("d"), chunks_for("d", ["x"]), np.stack([unit(1)]))
        v1 = s.index_version()
        s.update_access("d", "default", ("hr",))
        v2 = s.index_version()
        s.remove_document("d")
        assert v0 < v1 < v2 < s.index_version()
