"""Dense ANN: recall@10 and speed of ragwright's HNSW index against exact numpy search, with faiss-cpu
as a peer when it is installed.

The corpus is the cached SciFact evaluation store's chunk vectors (MiniLM, 384-d; ``retrieval_beir.py``
builds it) plus nine noisy copies of them (Gaussian noise ``--sigma`` per dimension, re-normalised), so
~100k distinct vectors; the queries are real SciFact test queries embedded with the default embedder.
Recall@10 is against the exact top-10; q/s is one query at a time on one thread (``DenseIndex.search``
includes the exact re-scoring of the candidates). Also a filtered run: 10% of the rows eligible.

Usage::

    python benchmarks/ann_recall.py [--copies 10] [--sigma 0.02] [--queries 150]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.index.ann import AnnParams, DenseIndex  # noqa: E402


def timed(fn: Any, queries: np.ndarray) -> tuple[list[set[int]], float]:
    fn(queries[0])
    start = time.perf_counter()
    found = [fn(q) for q in queries]
    return found, len(queries) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--sigma", type=float, default=0.02)
    parser.add_argument("--queries", type=int, default=150)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]

    threadpool_limits(1, "blas")
    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    scifact = (DATA / "scifact").resolve()
    texts = list(load_beir(scifact, "test").judged_queries.values())[: args.queries]
    queries = np.stack([embedder.embed_query(t) for t in texts])
    conn = sqlite3.connect(f"file:{eval_store_path(scifact, embedder.name)}?mode=ro", uri=True)
    base = np.frombuffer(b"".join(r[0] for r in conn.execute("SELECT vector FROM chunks")), np.float32)
    base = base.reshape(-1, queries.shape[1])
    rng = np.random.default_rng(0)
    noisy = [base + rng.normal(0, args.sigma, base.shape).astype(np.float32) for _ in range(args.copies - 1)]
    data = np.concatenate([base, *noisy])
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    keys = np.arange(1, len(data) + 1, dtype=np.int64)
    eligible = np.flatnonzero(rng.random(len(data)) < 0.1)
    truth = [set(np.argsort(-(data @ q))[:10].tolist()) for q in queries]
    truth_f = [set(eligible[np.argsort(-(data[eligible] @ q))[:10]].tolist()) for q in queries]

    def recall(found: list[set[int]], want: list[set[int]]) -> float:
        return float(np.mean([len(f & w) / 10 for f, w in zip(found, want, strict=True)]))

    rows: list[tuple[str, str, float, float, str]] = []
    _, qps = timed(lambda q: set(np.argpartition(-(data @ q), 10)[:10].tolist()), queries)
    rows.append(("numpy exact (peer)", "-", 1.0, qps, ""))
    for m, ef in ((16, 64), (32, 128)):
        index = DenseIndex(AnnParams(threshold=1, connectivity=m, expansion_search=ef))
        start = time.perf_counter()
        index.sync(keys, data)
        build = time.perf_counter() - start
        found, qps = timed(lambda q, ix=index: set(ix.search(q, 10)[0].tolist()), queries)
        default = " (default)" if (m, ef) == (AnnParams().connectivity, AnnParams().expansion_search) else ""
        rows.append((f"ragwright DenseIndex M{m} ef{ef} f16{default}", f"{build:.0f}", recall(found, truth), qps, ""))
        found, qps = timed(lambda q, ix=index: set(ix.search(q, 10, eligible=eligible)[0].tolist()), queries)
        rows.append(("  same, 10% of rows eligible", "-", recall(found, truth_f), qps, "oversampled, exact re-scoring"))
    try:
        import faiss  # type: ignore[import-not-found]
    except ImportError:
        rows.append(("faiss-cpu HNSWFlat (peer)", "-", float("nan"), float("nan"), "not installed"))
    else:
        faiss.omp_set_num_threads(2)
        peer = faiss.IndexHNSWFlat(data.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        peer.hnsw.efConstruction = 128
        start = time.perf_counter()
        peer.add(data)
        build = time.perf_counter() - start
        faiss.omp_set_num_threads(1)
        peer.hnsw.efSearch = 128
        found, qps = timed(lambda q: set(peer.search(q[None, :], 10)[1][0].tolist()), queries)
        rows.append(
            ("faiss-cpu HNSWFlat M32 ef128 (peer)", f"{build:.0f}", recall(found, truth), qps, "f32, no remove")
        )
    print(
        f"Dense ANN on {len(data)} MiniLM vectors (SciFact chunks + {args.copies - 1} noisy copies, sigma "
        f"{args.sigma}), {len(queries)} real SciFact queries, k=10, one thread per query, graph builds on 2"
    )
    header = ("index", "build s", "recall@10", "q/s", "note")
    body = [(n, b, f"{r:.3f}", f"{q:.0f}", note) for n, b, r, q, note in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    for row in (header, *body):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
