"""The stores with the HNSW graph switched on from the first vector: the conformance suite still holds,
filters never leak through the graph, and the SQLite store keeps the graph in a snapshot beside it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.index.ann import AnnParams
from ragwright.model.filters import as_filter
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.conformance import StoreConformance, chunks_for

ALWAYS = AnnParams(threshold=1, exact_limit=0)


class TestMemoryStoreWithGraph(StoreConformance):
    @pytest.fixture
    def store(self) -> Iterator[MemoryStore]:
        yield MemoryStore(ann=ALWAYS)


class TestSqliteStoreWithGraph(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteStore]:
        s = SqliteStore(tmp_path / "store.db", ann=ALWAYS)
        yield s
        s.close()


DIM = 16


def _fill(store: MemoryStore | SqliteStore, docs: int = 40, per_doc: int = 5) -> None:
    rng = np.random.default_rng(1)
    store.bind_embedder("m", DIM)
    for d in range(docs):
        doc = f"doc{d}"
        chunks = chunks_for(
            doc, [f"{doc} {i}" for i in range(per_doc)], metadata={"team": f"t{d % 4}"}, acl=(f"g{d % 3}",)
        )
        vectors = rng.normal(size=(per_doc, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        record = DocumentRecord(doc, f"m:{doc}", f"h{doc}", DocumentStatus.INDEXED, chunk_count=per_doc)
        store.replace_document(record, chunks, vectors)


@pytest.fixture(params=["memory", "sqlite"])
def filled(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore | SqliteStore]:
    store: MemoryStore | SqliteStore = (
        MemoryStore(ann=AnnParams(threshold=50, exact_limit=10))
        if request.param == "memory"
        else SqliteStore(tmp_path / "s.db", ann=AnnParams(threshold=50, exact_limit=10))
    )
    _fill(store)
    yield store
    store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    groups=st.sets(st.sampled_from(["g0", "g1", "g2", "g9"]), max_size=3),
    team=st.sampled_from([None, "t0", "t1", "t3"]),
    seed=st.integers(0, 1000),
    k=st.integers(1, 40),
)
def test_graph_search_never_returns_a_filtered_chunk(
    filled: MemoryStore | SqliteStore, groups: set[str], team: str | None, seed: int, k: int
) -> None:
    q = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    identity = Identity(groups=tuple(sorted(groups)))
    hits = filled.search_dense(q, k, identity=identity, metadata_filter=as_filter({"team": team}) if team else None)
    for h in hits:
        assert set(h.chunk.acl) & groups
        assert team is None or h.chunk.metadata["team"] == team
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_sqlite_graph_snapshot_is_reused_and_follows_writes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ragwright.index.ann")
    path = tmp_path / "s.db"
    params = AnnParams(threshold=50)
    q = np.ones(DIM, dtype=np.float32) / 4
    everyone = Identity(groups=("g0", "g1", "g2"))
    with SqliteStore(path, ann=params) as store:
        _fill(store)
        before = store.search_dense(q, 10, identity=everyone)
    assert (tmp_path / "s.db.main.ann").is_file() and caplog.text.count("ann_built") == 1
    with SqliteStore(path, ann=params) as store:
        again = store.search_dense(q, 10, identity=everyone)
        assert [h.chunk.id for h in again] == [h.chunk.id for h in before]
        assert caplog.text.count("ann_built") == 1  # loaded from the snapshot
        gone = before[0].chunk.document_id
        store.remove_document(gone)
        after = store.search_dense(q, 10, identity=everyone)
        assert len(after) == 10 and all(h.chunk.document_id != gone for h in after)
    assert caplog.text.count("ann_built") == 1  # the removal was applied to the graph, not rebuilt
