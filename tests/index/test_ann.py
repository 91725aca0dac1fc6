"""The dense index: HNSW recall against exact search, filters that never leak, incremental updates
equal to a rebuild, snapshots, and the stores switching to the graph past their threshold."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragwright.errors import ConfigError
from ragwright.index.ann import AnnParams, DenseIndex

DIM = 24


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    keys = np.arange(10, 10 + 3000, dtype=np.int64) * 3  # sorted, not contiguous
    return keys, unit(rng.normal(size=(3000, DIM))), unit(rng.normal(size=(60, DIM)))


def exact_top(matrix: np.ndarray, q: np.ndarray, k: int, eligible: np.ndarray | None = None) -> list[int]:
    scores = matrix @ q
    rows = np.arange(len(matrix)) if eligible is None else eligible
    return [int(p) for p in rows[np.argsort(-scores[rows], kind="stable")[:k]]]


def graph_index(keys: np.ndarray, matrix: np.ndarray, **params: object) -> DenseIndex:
    index = DenseIndex(AnnParams(threshold=100, **params))  # type: ignore[arg-type]
    index.sync(keys, matrix)
    assert index.uses_ann
    return index


def test_recall_at_10_against_exact(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    keys, matrix, queries = data
    index = graph_index(keys, matrix)
    recalls = []
    for q in queries:
        positions, scores = index.search(q, 10)
        truth = exact_top(matrix, q, 10)
        recalls.append(len(set(positions.tolist()) & set(truth)) / 10)
        np.testing.assert_allclose(scores, matrix[positions] @ q, rtol=1e-6)  # exact re-scoring
        assert list(scores) == sorted(scores, reverse=True)
    assert np.mean(recalls) >= 0.95


def test_below_threshold_is_exact(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    keys, matrix, queries = data
    index = DenseIndex(AnnParams(threshold=10_000))
    index.sync(keys, matrix)
    assert not index.uses_ann and index.graph_size == 0
    for q in queries[:5]:
        assert index.search(q, 7)[0].tolist() == exact_top(matrix, q, 7)


@settings(max_examples=40, deadline=None)
@given(
    share=st.floats(min_value=0.001, max_value=1.0),
    seed=st.integers(0, 2**16),
    k=st.integers(1, 30),
    exact_limit=st.sampled_from([0, 50, None]),
)
def test_filtered_search_returns_only_eligible(share: float, seed: int, k: int, exact_limit: int | None) -> None:
    rng = np.random.default_rng(seed)
    keys, matrix, queries = _DATA
    index = _GRAPHS[exact_limit]
    eligible = np.flatnonzero(rng.random(len(keys)) < share)
    q = queries[seed % len(queries)]
    positions, _ = index.search(q, k, eligible=eligible)
    assert set(positions.tolist()) <= set(eligible.tolist())
    reachable = int((matrix[eligible] @ q >= 0.0).sum())  # min_score 0 floors negative cosines
    assert len(positions) == min(k, reachable)  # widening / exact fallback always fills k
    if reachable and eligible.size <= index.params.subset_limit:  # a small subset is searched exactly
        assert positions.tolist() == exact_top(matrix, q, len(positions), eligible)


def test_filtered_recall(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """A filter keeping 10% of the rows (past the exact limit) still finds the true top-10."""
    keys, matrix, queries = data
    index = graph_index(keys, matrix, exact_limit=0)
    eligible = np.flatnonzero(np.random.default_rng(5).random(len(keys)) < 0.1)
    recall = np.mean(
        [
            len(set(index.search(q, 10, eligible=eligible)[0].tolist()) & set(exact_top(matrix, q, 10, eligible))) / 10
            for q in queries
        ]
    )
    assert recall >= 0.95


_rng = np.random.default_rng(11)
_DATA = (np.arange(1, 1501, dtype=np.int64), unit(_rng.normal(size=(1500, DIM))), unit(_rng.normal(size=(20, DIM))))
_GRAPHS = {limit: graph_index(_DATA[0], _DATA[1], exact_limit=limit) for limit in (0, 50, None)}


def test_min_score_is_a_floor(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    keys, matrix, queries = data
    index = graph_index(keys, matrix)
    q = queries[0]
    positions, scores = index.search(q, 50, min_score=0.3)
    assert (scores >= 0.3).all()
    assert set(positions.tolist()) <= {p for p in exact_top(matrix, q, 3000) if matrix[p] @ q >= 0.3}


def test_incremental_updates_equal_a_rebuild(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    keys, matrix, queries = data
    # one thread: usearch's multi-threaded inserts make the graph depend on scheduling, and then about one
    # stored vector in 300-1000 (24-d; 1 in ~3,700 at 384-d) misses itself as top-1 after the update — a
    # flake of the exact checks below on a loaded CI machine. With one thread the graph is reproducible.
    index = graph_index(keys[:2000], matrix[:2000], threads=1)
    # remove 300, add 1000 more, and replace 50 rows under reused keys (a new tag)
    tags = np.zeros(len(keys), dtype=np.uint32)
    changed = matrix.copy()
    changed[100:150] = unit(np.random.default_rng(3).normal(size=(50, DIM)))
    tags[100:150] = 1
    keep = np.ones(len(keys), dtype=bool)
    keep[500:800] = False
    index.sync(keys[keep], changed[keep], tags[keep])
    rebuilt = graph_index(keys[keep], changed[keep], threads=1)
    assert index.graph_size == rebuilt.graph_size == int(keep.sum())
    assert np.array_equal(index._ann_keys, keys[keep])
    live = changed[keep]
    for pos in (0, 120, 140, 1500, len(live) - 1):  # a stored vector finds itself first, in both
        assert index.search(live[pos], 1)[0].tolist() == [pos] == rebuilt.search(live[pos], 1)[0].tolist()
    agree = np.mean(
        [len(set(index.search(q, 10)[0].tolist()) & set(rebuilt.search(q, 10)[0].tolist())) / 10 for q in queries]
    )
    assert agree >= 0.95


def test_snapshot_round_trip(tmp_path, data, caplog) -> None:  # type: ignore[no-untyped-def]
    keys, matrix, queries = data
    path = tmp_path / "store.db.main.ann"
    first = DenseIndex(AnnParams(threshold=100), snapshot=path)
    first.sync(keys[:2500], matrix[:2500], tag="m:24")
    assert path.is_file()  # written after the build
    expected = [first.search(q, 10)[0].tolist() for q in queries]

    caplog.set_level(logging.INFO, logger="ragwright.index.ann")
    again = DenseIndex(AnnParams(threshold=100), snapshot=path)
    again.sync(keys[:2500], matrix[:2500], tag="m:24")
    assert "ann_built" not in caplog.text  # loaded, not rebuilt
    assert [again.search(q, 10)[0].tolist() for q in queries] == expected

    stale = DenseIndex(AnnParams(threshold=100), snapshot=path)  # the data moved on since the save
    stale.sync(keys[500:], matrix[500:], tag="m:24")
    assert "ann_built" not in caplog.text
    assert np.array_equal(stale._ann_keys, keys[500:])
    assert stale.save()
    reader = DenseIndex(AnnParams(threshold=100), snapshot=path)
    reader.tag = "m:24"
    assert reader._load_snapshot(DIM) and np.array_equal(reader._ann_keys, keys[500:])

    other = DenseIndex(AnnParams(threshold=100), snapshot=path)  # another model: never loaded
    other.sync(keys[:2500], matrix[:2500], tag="other:24")
    assert "ann_built" in caplog.text


def test_params_are_validated() -> None:
    with pytest.raises(ConfigError, match="threshold"):
        AnnParams(threshold=0)
    with pytest.raises(ConfigError, match="dtype"):
        AnnParams(dtype="f64")


def test_graph_then_onnx_session_in_one_process() -> None:
    """usearch loaded before onnxruntime used to crash the next ONNX session (SIGSEGV)."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from ragwright.index.ann import AnnParams, DenseIndex\n"
        "ix = DenseIndex(AnnParams(threshold=1))\n"
        "ix.sync(np.arange(1, 4), np.eye(3, dtype=np.float32))\n"
        "assert ix.uses_ann\n"
        "from ragwright.models.embedders import default_embedder\n"
        "print(default_embedder().embed_query('hello').shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(384,)" in done.stdout


class Reader:
    """A VectorReader over a matrix that records how many rows each call read; *gone* keys drop out."""

    def __init__(self, keys: np.ndarray, matrix: np.ndarray, gone: frozenset[int] = frozenset()) -> None:
        self.keys, self.matrix, self.gone, self.reads = keys, matrix, gone, [0]

    def __call__(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wanted = np.array([k for k in wanted.tolist() if k not in self.gone], dtype=np.int64)
        self.reads.append(wanted.size)
        return wanted, self.matrix[np.searchsorted(self.keys, wanted)]


def test_rows_read_on_demand_past_the_threshold(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """sync_rows keeps no float32 matrix past the threshold: candidates' rows are read to score them
    exactly, and an update reads only the rows it adds."""
    keys, matrix, queries = data
    reader = Reader(keys, matrix)
    index = DenseIndex(AnnParams(threshold=100, matrix_limit=0))
    index.sync_rows(keys[:2500], None, reader, dim=DIM)
    assert index.uses_ann and index.view().matrix is None and sum(reader.reads) == 2500
    recalls = []
    for q in queries:
        positions, scores = index.search(q, 10)
        np.testing.assert_allclose(scores, matrix[positions] @ q, rtol=1e-6)  # exact re-scoring (BLAS blocking aside)
        recalls.append(len(set(positions.tolist()) & set(exact_top(matrix[:2500], q, 10))) / 10)
    assert np.mean(recalls) >= 0.95
    reader.reads = [0]
    index.sync_rows(keys, None, reader, dim=DIM)  # 500 more
    assert sum(reader.reads) == 500 and index.graph_size == len(keys)
    assert index.search(matrix[2900], 1)[0].tolist() == [2900]


def test_rows_read_on_demand_exact_subsets_and_rows_gone(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    keys, matrix, queries = data
    gone = frozenset(keys[[5, 50, 500]].tolist())  # deleted after the keys were listed
    reader = Reader(keys, matrix, gone)
    index = DenseIndex(AnnParams(threshold=100, exact_limit=300, matrix_limit=0))
    index.sync_rows(keys, None, reader, dim=DIM)
    assert index.graph_size == len(keys) - 3
    eligible = np.sort(np.random.default_rng(2).choice(len(keys), 250, replace=False))
    eligible = np.union1d(eligible, [5, 50, 500])
    live = np.setdiff1d(eligible, [5, 50, 500])
    for q in queries[:10]:
        positions, scores = index.search(q, 7, eligible=eligible)  # 253 <= exact_limit: scored exactly
        assert positions.tolist() == exact_top(matrix, q, 7, live)
        np.testing.assert_allclose(scores, matrix[positions] @ q, rtol=1e-6)
        assert not set(positions.tolist()) & {5, 50, 500}
        assert 5 not in index.search(matrix[5], 3)[0].tolist()  # nor through the graph
    reader.reads = [0]
    index.search(queries[0], 7, eligible=eligible)
    assert sum(reader.reads) == 0  # the subset's rows were kept
    index.sync_rows(keys, None, reader, dim=DIM)  # a sync (a write) drops them
    index.search(queries[0], 7, eligible=eligible)
    assert sum(reader.reads) == eligible.size - 3


def test_rows_read_on_demand_below_the_threshold_or_the_matrix_limit_keeps_the_matrix(
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    keys, matrix, queries = data
    index = DenseIndex(AnnParams(threshold=10_000, matrix_limit=0))
    index.sync_rows(keys, None, Reader(keys, matrix), dim=DIM)
    view = index.view()
    assert view.matrix is not None and view.graph is None and not index.uses_ann
    assert index.search(queries[0], 7)[0].tolist() == exact_top(matrix, queries[0], 7)
    graph = DenseIndex(AnnParams(threshold=100, matrix_limit=len(keys)))  # past the threshold, within the limit
    graph.sync_rows(keys, None, Reader(keys, matrix), dim=DIM)
    assert graph.uses_ann and graph.view().matrix is not None
    with pytest.raises(ConfigError, match="matrix_limit"):
        AnnParams(matrix_limit=-1)
