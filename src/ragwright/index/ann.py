"""Dense vector search: exact (numpy) for small collections, an HNSW graph (usearch) past a threshold.

:class:`DenseIndex` holds the vectors of a store as one float32 matrix with sorted int64 keys (the
SQLite store's rowids, the memory store's labels) and, once the collection reaches
``AnnParams.threshold`` vectors, an HNSW graph over them (Malkov & Yashunin 2018, "Efficient and
robust approximate nearest neighbor search using Hierarchical Navigable Small World graphs"). The
graph is derived state: it follows the matrix incrementally (:meth:`DenseIndex.sync` diffs keys —
and a per-key tag, so a reused key is noticed — then removes and adds only what changed) and can be
kept in a snapshot file (:meth:`DenseIndex.save`), which a later :meth:`sync` loads and brings up to
date instead of rebuilding.

Filtered search keeps recall. The eligible positions (security + metadata filter) are given per
query: a small eligible set (``<= exact_limit``) is scored exactly; otherwise the graph is searched
with oversampling by the inverse selectivity, widening until ``k`` eligible hits are found, and
falling back to exact search over the eligible set when it cannot. Candidates are re-scored exactly
with the float32 vectors, so scores (dot products of unit vectors: cosine) equal the exact path's and
``min_score`` is a floor on them. Ties order by key. Measured choice of usearch over faiss-cpu:
``benchmarks/RESULTS.md`` ("Dense ANN index").

Where the float32 rows live. :meth:`DenseIndex.sync` is given the matrix and keeps it.
:meth:`DenseIndex.sync_rows` is given a :data:`VectorReader` instead (the SQLite store reads its stored
vectors by rowid): up to ``AnnParams.matrix_limit`` vectors it reads the whole matrix and keeps it;
past the graph's threshold and that limit no float32 matrix is held at all — the graph (f16) finds the
candidates and only their rows are read to score them, the graph is built or brought up to date by
reading rows in batches, and an eligible subset scored exactly has its rows read once and kept (a few,
up to :data:`SUBSET_CACHE_BYTES`) until the next sync. At 1M MiniLM vectors that is 1.5 GB of RAM not
held (``benchmarks/RESULTS.md``, "SQLite store at 1M chunks").
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from ragwright.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    F32 = npt.NDArray[np.float32]
    I64 = npt.NDArray[np.int64]
    U32 = npt.NDArray[np.uint32]
    Positions = npt.NDArray[np.intp]

__all__ = ["SUBSET_CACHE_BYTES", "AnnParams", "DenseIndex", "DenseView", "VectorReader"]

log = logging.getLogger(__name__)

_SNAPSHOT_FORMAT = 1
_MAX_WIDENINGS = 4
#: Rows read per batch when a graph is built or updated from a reader.
_READ_BATCH = 50_000
#: The rows of exactly scored eligible subsets kept per index when rows are read on demand.
SUBSET_CACHE_BYTES = 64 << 20

#: Reads stored float32 vectors by key (sorted keys in, as a rule): the keys found — a subsequence of
#: those asked, in the same order; a key deleted meanwhile drops out — and their rows.
VectorReader: TypeAlias = "Callable[[I64], tuple[I64, F32]]"


@dataclass(frozen=True)
class AnnParams:
    """When and how the HNSW graph is used.

    ``threshold``: vectors from which the graph is built (``None``: never; exact search always).
    ``exact_limit``: an eligible subset at most this large is scored exactly (default: threshold).
    ``connectivity``/``expansion_add``/``expansion_search``: HNSW's M, efConstruction and efSearch
    (measured on 100k MiniLM vectors with real SciFact queries: M 32 / ef 128 gives recall@10 0.987 at
    0.7 ms a query; M 16 / ef 64 0.941).
    ``dtype``: the graph's vector storage (``f16`` halves memory at no measurable recall cost, since
    candidates are re-scored with the float32 vectors). ``threads``: for bulk builds.
    ``matrix_limit``: with :meth:`DenseIndex.sync_rows`, up to this many vectors the float32 matrix is
    held in memory; past it only the graph is, and the candidates' rows are read to score them
    (``None``: always held; ``0``: never). Reading costs ~0.5 ms a search, holding 1.5 KB a vector: at
    100k vectors (150 MB) the matrix is kept, at 1M (1.5 GB) it is not.
    """

    threshold: int | None = 20_000
    exact_limit: int | None = None
    connectivity: int = 32
    expansion_add: int = 128
    expansion_search: int = 128
    dtype: str = "f16"
    threads: int = 2
    matrix_limit: int | None = 250_000

    def __post_init__(self) -> None:
        for name, minimum, optional in (
            ("threshold", 1, True),
            ("exact_limit", 0, True),
            ("connectivity", 2, False),
            ("expansion_add", 1, False),
            ("expansion_search", 1, False),
            ("threads", 1, False),
            ("matrix_limit", 0, True),
        ):
            value = getattr(self, name)
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError.invalid(name, value, f"an integer >= {minimum}" + (" or None" if optional else ""))
        if self.dtype not in ("f32", "f16", "i8"):
            raise ConfigError.invalid("dtype", self.dtype, "'f32', 'f16' or 'i8'")

    @property
    def subset_limit(self) -> int:
        return self.exact_limit if self.exact_limit is not None else (self.threshold or 0)

    def fingerprint(self) -> dict[str, Any]:
        return {"connectivity": self.connectivity, "expansion_add": self.expansion_add, "dtype": self.dtype}


class DenseView(NamedTuple):
    """A consistent picture of a :class:`DenseIndex`: keys, the float32 matrix (``None``: rows are read
    through ``reader``) and the graph (``None``: exact)."""

    keys: I64
    matrix: F32 | None
    graph: Any
    reader: VectorReader | None = None


class DenseIndex:
    """A matrix of unit vectors with sorted int64 keys, searched exactly or through HNSW. Thread-safe.

    ``snapshot``: a file path where :meth:`save` keeps the graph (with ``.keys.npz`` and ``.json``
    beside it); ``tag`` names what the vectors came from (model and dimension) and must match for a
    snapshot to be used.
    """

    def __init__(self, params: AnnParams | None = None, *, snapshot: str | os.PathLike[str] | None = None) -> None:
        import numpy as np

        self.params = params or AnnParams()
        self.snapshot = Path(snapshot) if snapshot is not None else None
        self._lock = threading.RLock()
        self._keys: I64 = np.zeros(0, dtype=np.int64)
        self._matrix: F32 | None = np.zeros((0, 0), dtype=np.float32)
        self._reader: VectorReader | None = None  # set instead of the matrix by sync_rows past the threshold
        self._subsets: list[tuple[Positions, Positions, F32]] = []  # (eligible, read positions, rows)
        self._ann: Any = None  # usearch Index
        self._ann_keys: I64 = np.zeros(0, dtype=np.int64)  # sorted keys in the graph
        self._ann_tags: U32 = np.zeros(0, dtype=np.uint32)  # aligned with _ann_keys
        self._dirty = False  # the graph changed since the last save
        self.tag = ""

    # -- state -----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._keys.size)

    @property
    def uses_ann(self) -> bool:
        """True when searches go through the graph (the collection is past the threshold)."""
        t = self.params.threshold
        return t is not None and self._keys.size >= t and self._ann is not None

    @property
    def graph_size(self) -> int:
        return 0 if self._ann is None else len(self._ann)

    def sync(self, keys: I64, matrix: F32, tags: U32 | None = None, *, tag: str = "") -> None:
        """Replace the contents with *keys* (sorted, unique) and their rows in *matrix*.

        The graph follows incrementally: keys gone (or whose *tags* changed) are removed, new ones
        added. Past the threshold a missing graph is loaded from the snapshot (then brought up to date)
        or built.
        """
        import numpy as np

        keys = np.ascontiguousarray(keys, dtype=np.int64)
        tags = np.zeros(keys.size, dtype=np.uint32) if tags is None else np.asarray(tags, dtype=np.uint32)
        with self._lock:
            self._keys, self._matrix, self._reader = keys, matrix, None
            self._subsets = []
            if tag != self.tag:
                self._drop_graph()
                self.tag = tag
            threshold = self.params.threshold
            if threshold is None or (self._ann is None and keys.size < threshold):
                return
            read = _matrix_reader(keys, matrix)
            if self._ann is None and not self._load_snapshot(matrix.shape[1]):
                self._build(keys, tags, read, matrix.shape[1], batch=max(1, keys.size))
                return
            self._update(keys, tags, read)

    def sync_rows(self, keys: I64, tags: U32 | None, reader: VectorReader, *, dim: int, tag: str = "") -> None:
        """Like :meth:`sync`, with the rows read through *reader* instead of given.

        Below the threshold (or with none), or up to ``matrix_limit`` vectors, the whole matrix is read and
        kept, as :meth:`sync` keeps it. Past both no float32 matrix is held: the graph is loaded from its
        snapshot and brought up to date (only added rows are read) or built from rows read in batches,
        and searches read the rows of their candidates.
        """
        import numpy as np

        keys = np.ascontiguousarray(keys, dtype=np.int64)
        tags = np.zeros(keys.size, dtype=np.uint32) if tags is None else np.asarray(tags, dtype=np.uint32)
        threshold, limit = self.params.threshold, self.params.matrix_limit
        if threshold is None or keys.size < threshold or limit is None or keys.size <= limit:
            found, matrix = reader(keys)
            self.sync(found, matrix.reshape(found.size, dim), tags[_present(keys, found)], tag=tag)
            return
        with self._lock:
            self._keys, self._matrix, self._reader = keys, None, reader
            self._subsets = []
            if tag != self.tag:
                self._drop_graph()
                self.tag = tag
            if self._ann is None and not self._load_snapshot(dim):
                self._build(keys, tags, reader, dim, batch=_READ_BATCH)
                return
            self._update(keys, tags, reader)

    def _new_graph(self, dim: int) -> Any:
        # onnxruntime must be loaded before usearch's extension: the other way round, the next onnxruntime
        # session crashes the process (SIGSEGV; usearch 2.26, onnxruntime 1.32). Both are base dependencies.
        import onnxruntime  # noqa: F401
        from usearch.index import Index  # imported when a graph is first needed

        p = self.params
        return Index(
            ndim=dim,
            metric="ip",
            dtype=p.dtype,
            connectivity=p.connectivity,
            expansion_add=p.expansion_add,
            expansion_search=p.expansion_search,
        )

    def _build(self, keys: I64, tags: U32, read: VectorReader, dim: int, *, batch: int) -> None:
        import time

        started = time.perf_counter()
        graph = self._new_graph(dim)
        missing = self._add_rows(graph, keys, read, batch)
        present = _absent(keys, missing)
        self._ann, self._ann_keys, self._ann_tags = graph, keys[present], tags[present]
        self._dirty = True
        log.info("ann_built: %d vectors in %.1f s", keys.size, time.perf_counter() - started)
        if self.snapshot is not None:
            self.save()

    def _add_rows(self, graph: Any, keys: I64, read: VectorReader, batch: int) -> I64:
        """Add the rows of *keys* to *graph*, read *batch* at a time; the keys that could not be read."""
        import numpy as np

        missing: list[I64] = []
        for lo in range(0, keys.size, batch):
            part = keys[lo : lo + batch]
            found, rows = read(part)
            if found.size:
                graph.add(found, rows, threads=self.params.threads)
            if found.size != part.size:
                missing.append(np.setdiff1d(part, found, assume_unique=True))
        return np.concatenate(missing) if missing else np.zeros(0, dtype=np.int64)

    def _update(self, keys: I64, tags: U32, read: VectorReader) -> None:
        import numpy as np

        old_keys, old_tags = self._ann_keys, self._ann_tags
        same, i_old, i_new = np.intersect1d(old_keys, keys, assume_unique=True, return_indices=True)
        stale = same[old_tags[i_old] != tags[i_new]]
        gone = np.setdiff1d(old_keys, keys, assume_unique=True)
        removed = np.union1d(gone, stale)
        added_keys = np.union1d(np.setdiff1d(keys, old_keys, assume_unique=True), stale)
        if removed.size:
            self._ann.remove(removed)
        missing = self._add_rows(self._ann, added_keys, read, _READ_BATCH) if added_keys.size else added_keys
        if removed.size or added_keys.size:
            present = _absent(keys, missing)
            self._ann_keys, self._ann_tags = keys[present], tags[present]
            self._dirty = True

    def _drop_graph(self) -> None:
        import numpy as np

        self._ann = None
        self._ann_keys = np.zeros(0, dtype=np.int64)
        self._ann_tags = np.zeros(0, dtype=np.uint32)

    # -- snapshots -------------------------------------------------------------------------------
    def _meta(self, dim: int) -> dict[str, Any]:
        return {"format": _SNAPSHOT_FORMAT, "tag": self.tag, "dimension": dim, **self.params.fingerprint()}

    def save(self) -> bool:
        """Write the graph to :attr:`snapshot` when it changed since the last save; True if written."""
        import numpy as np

        with self._lock:
            if self.snapshot is None or self._ann is None or not self._dirty:
                return False
            path = self.snapshot
            tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._ann.save(str(tmp))
                with open(f"{tmp}.keys.npz", "wb") as fh:
                    np.savez(fh, keys=self._ann_keys, tags=self._ann_tags)
                Path(f"{tmp}.json").write_text(json.dumps(self._meta(int(self._ann.ndim))), encoding="utf-8")
                os.replace(f"{tmp}.keys.npz", f"{path}.keys.npz")
                os.replace(f"{tmp}.json", f"{path}.json")
                os.replace(tmp, path)  # last: a reader checks the graph against the keys file
            except OSError as exc:
                log.warning("ann_snapshot_failed: could not write %s (%s); it is rebuilt when needed", path, exc)
                return False
            finally:
                for leftover in (tmp, Path(f"{tmp}.keys.npz"), Path(f"{tmp}.json")):
                    leftover.unlink(missing_ok=True)
            self._dirty = False
            return True

    def _load_snapshot(self, dim: int) -> bool:
        """Load the snapshot's graph when it matches (tag, dimension, parameters); True on success."""
        import numpy as np

        path = self.snapshot
        if path is None or not path.is_file():
            return False
        try:
            meta = json.loads(Path(f"{path}.json").read_text(encoding="utf-8"))
            if meta != self._meta(dim):
                log.info("ann_snapshot_ignored: %s was built with other settings", path)
                return False
            with np.load(f"{path}.keys.npz") as data:
                keys, tags = data["keys"].astype(np.int64), data["tags"].astype(np.uint32)
            graph = self._new_graph(dim)
            graph.load(str(path))
            graph.expansion_search = self.params.expansion_search  # a search-time setting: ours, not the file's
            if len(graph) != keys.size:
                raise ValueError(f"graph holds {len(graph)} vectors, keys file {keys.size}")
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            log.warning("ann_snapshot_unreadable: %s (%s); rebuilding", path, exc)
            return False
        self._ann, self._ann_keys, self._ann_tags = graph, keys, tags
        self._dirty = False
        return True

    # -- search ----------------------------------------------------------------------------------
    def view(self) -> DenseView:
        """The current contents, for a later :meth:`search` consistent with positions computed now."""
        with self._lock:
            return DenseView(self._keys, self._matrix, self._ann if self.uses_ann else None, self._reader)

    def search(
        self,
        query: F32,
        k: int,
        *,
        eligible: Positions | None = None,
        min_score: float = 0.0,
        view: DenseView | None = None,
    ) -> tuple[Positions, F32]:
        """Positions (rows of the matrix) and scores of the best *k* rows, best first, ties by key.

        *eligible*: the positions the caller may see (``None``: all); only they are returned.
        *view*: the contents those positions refer to (default: the current ones).
        """
        import numpy as np

        view = view or self.view()
        keys, matrix, graph, reader = view
        n = keys.size
        q = np.asarray(query, dtype=np.float32)
        if n == 0 or k <= 0 or (eligible is not None and eligible.size == 0):
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        subset = eligible is not None and eligible.size < n
        if graph is None or (subset and eligible is not None and eligible.size <= self.params.subset_limit):
            return self._exact(view, q, k, eligible if subset else None, min_score)
        allowed: npt.NDArray[np.bool_] | None = None
        if subset and eligible is not None:
            allowed = np.zeros(n, dtype=bool)
            allowed[eligible] = True
        share = 1.0 if allowed is None or eligible is None else eligible.size / n
        want = min(n, max(k, math.ceil(k / share * 1.2) + 8))
        for _ in range(_MAX_WIDENINGS):
            with self._lock:
                found = np.asarray(graph.search(q, want, threads=1).keys, dtype=np.int64)
            # keys the graph knows but this matrix does not (a write in between) drop out
            positions = np.minimum(np.searchsorted(keys, found), n - 1)
            positions = positions[keys[positions] == found]
            if allowed is not None:
                positions = positions[allowed[positions]]
            positions, scores = _score(keys, matrix, reader, positions, q)
            # done with k eligible hits, or once the graph's candidates fall below the floor (everything
            # above it is in); a short answer from the graph is not proof of absence: widen, then go exact
            below = scores.size > 0 and float(scores.min()) < min_score
            if positions.size >= k or below:
                return _top(keys, positions, scores, k, min_score)
            if want >= n:
                break
            want = min(n, want * 4)
        return self._exact(view, q, k, eligible if subset else None, min_score)

    def _exact(
        self, view: DenseView, q: F32, k: int, eligible: Positions | None, min_score: float
    ) -> tuple[Positions, F32]:
        import numpy as np

        keys, matrix, _, reader = view
        if matrix is None:  # rows read on demand: an eligible subset's rows are kept for the next query
            assert reader is not None, "a view without a matrix has a reader"
            positions, scores = self._read_scores(keys, reader, eligible, q)
            return _top(keys, positions, scores, k, min_score)
        if eligible is None:
            positions = np.arange(keys.size, dtype=np.intp)
            scores = matrix @ q
        elif eligible.size * 4 < keys.size:  # a small subset: copy its rows
            positions = eligible
            scores = matrix[eligible] @ q
        else:  # a large subset: score every row (a gather would cost more), keep the eligible ones
            positions = eligible
            scores = (matrix @ q)[eligible]
        return _top(keys, positions, scores, k, min_score)

    def _read_scores(
        self, keys: I64, reader: VectorReader, eligible: Positions | None, q: F32
    ) -> tuple[Positions, F32]:
        """Exact scores of the rows at *eligible* (or all) that could be read, with their positions. Rows
        are read in batches and only scored, except a subset's small enough to keep (most recent first, up
        to :data:`SUBSET_CACHE_BYTES`) for the next query with the same eligible set, until the next sync."""
        import numpy as np

        with self._lock:
            if keys is self._keys:
                for entry in self._subsets:
                    if entry[0] is eligible or (
                        eligible is not None and entry[0].size == eligible.size and np.array_equal(entry[0], eligible)
                    ):
                        return entry[1], entry[2] @ q
        positions = np.arange(keys.size, dtype=np.intp) if eligible is None else eligible
        keep = eligible is not None and eligible.size * q.size * 4 <= SUBSET_CACHE_BYTES
        found: list[I64] = []
        scores: list[F32] = []
        kept: list[F32] = []
        for lo in range(0, positions.size, _READ_BATCH):
            got, rows = reader(keys[positions[lo : lo + _READ_BATCH]])
            rows = rows.reshape(got.size, q.size)
            found.append(got)
            scores.append(rows @ q)
            if keep:
                kept.append(rows)
        if found:
            positions = positions[_present(keys[positions], np.concatenate(found))]
        all_scores = np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)
        if keep and eligible is not None:
            rows = np.concatenate(kept) if kept else np.zeros((0, q.size), dtype=np.float32)
            with self._lock:
                if keys is self._keys:  # not synced meanwhile
                    cached = [(eligible, positions, rows)]
                    for entry in self._subsets:
                        if sum(e[2].nbytes for e in cached) + entry[2].nbytes > SUBSET_CACHE_BYTES:
                            break
                        cached.append(entry)
                    self._subsets = cached
        return positions, all_scores


def _matrix_reader(keys: I64, matrix: F32) -> VectorReader:
    """A :data:`VectorReader` over a matrix held in memory (rows aligned with sorted *keys*)."""
    import numpy as np

    def read(wanted: I64) -> tuple[I64, F32]:
        if wanted.size == keys.size and np.array_equal(wanted, keys):
            return keys, matrix
        positions = np.minimum(np.searchsorted(keys, wanted), max(0, keys.size - 1))
        ok = keys[positions] == wanted if keys.size else np.zeros(wanted.size, dtype=bool)
        return wanted[ok], matrix[positions[ok]]

    return read


def _present(asked: I64, found: I64) -> npt.NDArray[np.bool_]:
    """Which of *asked* are in *found* (a subsequence of *asked*, as a :data:`VectorReader` answers)."""
    import numpy as np

    if found.size == asked.size:
        return np.ones(asked.size, dtype=bool)
    return np.isin(asked, found, assume_unique=True)


def _absent(keys: I64, missing: I64) -> npt.NDArray[np.bool_]:
    """Which of the sorted *keys* are not in *missing*."""
    import numpy as np

    if missing.size == 0:
        return np.ones(keys.size, dtype=bool)
    return ~np.isin(keys, missing, assume_unique=True)


def _score(
    keys: I64, matrix: F32 | None, reader: VectorReader | None, positions: Positions, q: F32
) -> tuple[Positions, F32]:
    """Exact scores of the rows at *positions*, from the matrix or read; rows gone meanwhile drop out."""
    if matrix is not None:
        return positions, matrix[positions] @ q
    assert reader is not None, "a view without a matrix has a reader"
    found, rows = reader(keys[positions])
    return positions[_present(keys[positions], found)], rows.reshape(found.size, q.size) @ q


def _top(keys: I64, positions: Positions, scores: F32, k: int, min_score: float) -> tuple[Positions, F32]:
    """The best *k* of (*positions*, *scores*) at or above *min_score*, ordered by score then key."""
    import numpy as np

    keep = scores >= min_score
    positions, scores = positions[keep], scores[keep]
    if scores.size > k:
        part = np.argpartition(-scores, k - 1)[:k]
        positions, scores = positions[part], scores[part]
    order = np.lexsort((keys[positions], -scores))
    return positions[order], scores[order]
