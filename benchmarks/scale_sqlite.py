"""The embedded SQLite store at ~1M chunks: build and ingestion rates, memory, warm-up, query latency.

The store is synthesised as ``benchmarks/retrieval_latency.py`` does it: the cached SciFact evaluation
store's chunk rows and stored vectors copied N times under new document ids through
``SqliteStore.replace_document`` (nothing re-embedded; each chunk carries ``metadata["language"]`` as
ingestion records it), cached beside the evaluation stores (the build time is kept beside it).

Measured, each cold measurement in a fresh Python process (so that its RSS is the store's and nothing
else's):

* **build rate** of the synthesis (chunks/s) and the **real ingestion rate** (``Rag.ingest`` of
  ``--ingest-docs`` SciFact records with the default embedder) into an empty store and into the 1M store
  (the documents are removed again afterwards);
* **RSS**: after the embedder is loaded (the process without a store), after opening the store, after
  the first search and after all timed queries, and the peak (``getrusage``);
* **first-query warm-up**: opening the store plus the first ``rag.search`` (default options: hybrid,
  top 5), with the derived state built from the stored rows (``--rebuild-derived keyword``: the BM25
  index; ``all``: the HNSW graph too, ~15 minutes at 1M here) and loaded from their snapshots beside the
  store file (a reopen);
* **latency** over ``--queries`` judged SciFact test queries (interleaved, the order rotated per query, after
  a warm-up pass):
  ``rag.search`` dense-only, BM25-only and hybrid with the default options, with the query embedding
  precomputed (``cached``) and computed (``full``), and the bare arms (``store.search_dense`` /
  ``store.search_keyword`` at the depth a hybrid search fetches).

The PostgreSQL 1M figures (``benchmarks/postgres_scale.py``) are quoted from ``benchmarks/RESULTS.md``:
loading PostgreSQL and building its HNSW index at 1M takes ~10 minutes on this machine, so they are
not re-measured here.

Usage::

    python benchmarks/scale_sqlite.py [--size 1000000] [--queries 200] [--ingest-docs 300]
        [--rebuild-derived keyword|all] [--blas-threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from retrieval_latency import (  # noqa: E402
    CachedQueryEmbedder,
    blas_setting,
    log,
    percentile,
    source_chunks,
    synthetic_store,
)

from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.datasets import load_beir  # noqa: E402

#: PostgreSQL 18.6 + pgvector 0.8.6 at 1M vectors, from benchmarks/RESULTS.md ("PostgreSQL + pgvector
#: (issue 14)", ``python benchmarks/postgres_scale.py --sizes 100000,1000000``; synthetic clustered
#: vectors, d=384, dense arm only, no keyword arm).
POSTGRES_1M = [
    ("PostgreSQL ingestion, 1 process (1000 SciFact docs, wordllama)", "80.8 docs/s (SQLite 153.8 in that run)"),
    ("PostgreSQL dense HNSW p50 / p95, ef_search 40", "5.2 / 12.1 ms (recall@10 0.739)"),
    ("PostgreSQL dense HNSW p50 / p95, ef_search 100", "4.8 / 13.8 ms (recall@10 0.907)"),
    ("PostgreSQL dense HNSW p50 / p95, ef_search 200", "6.7 / 15.1 ms (recall@10 0.948)"),
    ("PostgreSQL HNSW index build at 1M", "553 s"),
    ("PostgreSQL exact dense search at 1M (no index)", "1231 ms p50"),
]


def timed(
    plan: Sequence[tuple[str, Callable[[str], Any]]], queries: Sequence[str], warm: int = 20
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per-query wall times of every measurement after a warm-up on *warm* queries, interleaved query by
    query with the order rotated each time: the first measurement of a query reads its rows from the file
    (or the disk, when the OS page cache of the 4.5 GB file was reclaimed), the next ones find them
    cached, so each measurement goes first equally often. Also the CPU time of each (``time.process_time``,
    every thread of this process): on a loaded machine the wall time includes waiting for a core."""
    for q in queries[:warm]:
        for _, fn in plan:
            fn(q)
    out: dict[str, list[float]] = {name: [] for name, _ in plan}
    cpu: dict[str, list[float]] = {name: [] for name, _ in plan}
    for i, q in enumerate(queries):
        turn = i % len(plan)
        for name, fn in [*plan[turn:], *plan[:turn]]:
            c0 = time.process_time()
            start = time.perf_counter()
            fn(q)
            out[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - c0)
        if (i + 1) % 50 == 0:
            log(f"    {i + 1}/{len(queries)} queries")
    return out, cpu


def page_cache_mb() -> float:
    """The OS page cache (``Cached`` in /proc/meminfo): how much of the store file can be there."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Cached:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def peak_mb() -> float:
    """This process's peak RSS: VmHWM (``getrusage``'s ru_maxrss would include the parent's size at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def snapshot_files(store: Path, which: str) -> list[Path]:
    """The derived-state files kept beside a store file: the BM25 index's (``keyword``) or also the HNSW
    graph's (``all``)."""
    patterns = ["bm25*"] if which == "keyword" else ["bm25*", "ann*"]
    return [p for pattern in patterns for p in store.parent.glob(f"{store.name}.*.{pattern}")]


# -- the measuring child process ------------------------------------------------------------------------
def child(args: argparse.Namespace) -> int:
    """One cold run: open the store, first search, timed queries; prints one JSON object."""
    import numpy as np

    blas, _limiter = blas_setting(args.blas_threads)
    from ragwright.models.embedders import default_embedder
    from ragwright.options import RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore

    out: dict[str, Any] = {"blas": blas}
    with np.load(args.vectors) as z:
        queries: list[str] = json.loads(z["queries"].tobytes().decode())
        vectors = {q: z["vectors"][i] for i, q in enumerate(queries)}
    embedder = default_embedder()
    embedder.embed_query("warm the embedder up")
    store_path = Path(args.store)
    if args.rebuild_derived:
        for p in snapshot_files(store_path, args.rebuild_derived):
            p.unlink()
    out["rss_process_mb"] = rss_mb()
    out["load_cold"] = os.getloadavg()[0]
    c0, start = time.process_time(), time.perf_counter()
    store = SqliteStore(store_path)
    full = Rag(store, embedder)
    out["open_s"] = time.perf_counter() - start
    out["rss_open_mb"] = rss_mb()
    c1, start = time.process_time(), time.perf_counter()
    full.search(queries[0])  # the default options: hybrid, top 5
    out["first_search_s"] = time.perf_counter() - start
    out["open_cpu_s"], out["first_search_cpu_s"] = c1 - c0, time.process_time() - c1
    out["rss_first_search_mb"] = rss_mb()
    out["chunks"] = store.count_chunks()
    out["dense_graph"] = bool(store._dense_index().uses_ann)

    if not args.cold_only:
        from ragwright.model.identity import Identity

        cached = Rag(store, CachedQueryEmbedder(embedder, vectors))
        identity = Identity()
        hybrid = full.retrieval_options
        dense = RetrievalOptions(top_k=hybrid.top_k)
        bm25 = RetrievalOptions(top_k=hybrid.top_k, use_dense_search=False, use_keyword_search=True)
        depth = hybrid.arm_candidates
        plan = [
            (f"store.search_dense k={depth}", lambda q: store.search_dense(vectors[q], depth, identity=identity)),
            (f"store.search_keyword k={depth}", lambda q: store.search_keyword(q, depth, identity=identity)),
            ("rag.search dense (cached q-vec)", lambda q: cached.search(q, dense)),
            ("rag.search bm25", lambda q: cached.search(q, bm25)),
            ("rag.search hybrid (cached q-vec)", lambda q: cached.search(q)),
            ("rag.search dense (full)", lambda q: full.search(q, dense)),
            ("rag.search hybrid (full)", lambda q: full.search(q)),
        ]
        load_before, cache_before = os.getloadavg(), page_cache_mb()
        times, cpu = timed(plan, queries)
        out["load_during"] = [load_before[0], os.getloadavg()[0]]
        out["page_cache_mb"] = [cache_before, page_cache_mb()]
        out["latency_ms"] = {
            name: [percentile(t, 0.5), percentile(t, 0.95), percentile(cpu[name], 0.5)] for name, t in times.items()
        }
        out["rss_after_queries_mb"] = rss_mb()
    out["peak_rss_mb"] = peak_mb()
    store.close()
    print(json.dumps(out))
    return 0


def run_child(args: argparse.Namespace, store: Path, vectors: Path, *extra: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--store", str(store), "--vectors", str(vectors), *extra]
    if args.blas_threads is not None:
        cmd += ["--blas-threads", str(args.blas_threads)]
    log("child: " + " ".join(cmd[2:]))
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"the measuring process failed ({done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- real ingestion ---------------------------------------------------------------------------------------
def ingest_rate(store_path: Path, docs: int, tmp: Path) -> tuple[float, int, int, float]:
    """(seconds, documents, chunks, seconds in the store's index stage) of ``Rag.ingest`` of *docs* SciFact
    records into *store_path*; the documents are removed again afterwards (the cached store stays as it was)."""
    from ragwright.models.embedders import default_embedder
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore

    subset = tmp / f"scifact-{docs}.jsonl"
    if not subset.exists():
        with (DATA / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
            subset.write_text("".join(next(fh) for _ in range(docs)), encoding="utf-8")
    store = SqliteStore(store_path)
    before = {r.document_id for r in store.list_records()}
    with Rag(store, default_embedder()) as rag:
        rag.embedder.embed_query("warm the embedder up")
        start = time.perf_counter()
        report = rag.ingest(str(subset))
        seconds = time.perf_counter() - start
        added = [r.document_id for r in store.list_records() if r.document_id not in before]
        for doc in added:
            store.remove_document(doc)
        store._conn.execute(  # the registry rows and staged bytes too: the cached store is left as it was
            "DELETE FROM documents WHERE document_id IN (SELECT value FROM json_each(?))", (json.dumps(added),)
        )
        store.prune_staging()
    return seconds, report.added, report.chunks, float(report.stage_seconds.get("index", 0.0))


# -- the report -------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="target chunk count (rounded to SciFact copies)")
    parser.add_argument("--queries", type=int, default=200, help="judged SciFact test queries timed")
    parser.add_argument("--ingest-docs", type=int, default=300, help="SciFact records ingested for the rate (0: skip)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the synthetic store")
    parser.add_argument(
        "--rebuild-derived",
        choices=("keyword", "all"),
        help="also time a first open that builds the BM25 index (keyword) or the HNSW graph too (all)",
    )
    parser.add_argument("--blas-threads", type=int, default=None, help="cap numpy's BLAS threads (threadpoolctl)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)

    import numpy as np

    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    scifact = (DATA / "scifact").resolve()
    source = eval_store_path(scifact, embedder.name)
    if not source.exists():
        raise SystemExit(f"{source} is missing: run benchmarks/retrieval_beir.py --datasets scifact first")
    queries = list(load_beir(scifact, "test").judged_queries.values())[: args.queries]
    docs, model, dim = source_chunks(source)
    path, count, build_s = synthetic_store(args.size, docs, model, dim, args.rebuild)

    with tempfile.TemporaryDirectory(prefix="rw-scale-") as tmpdir:
        tmp = Path(tmpdir)
        log(f"embedding {len(queries)} queries")
        qv = np.stack([np.asarray(embedder.embed_query(q), dtype=np.float32) for q in queries])
        vec_file = tmp / "queries.npz"
        np.savez(vec_file, queries=np.frombuffer(json.dumps(queries).encode(), dtype=np.uint8), vectors=qv)
        del embedder
        runs: list[tuple[str, dict[str, Any]]] = []
        if args.rebuild_derived:
            label = "first open, BM25 built" if args.rebuild_derived == "keyword" else "first open, graph + BM25 built"
            extra = ("--cold-only", "--rebuild-derived", args.rebuild_derived)
            runs.append((label, run_child(args, path, vec_file, *extra)))
        else:
            runs.append(("first open in this run", run_child(args, path, vec_file, "--cold-only")))
        runs.append(("reopen (snapshots)", run_child(args, path, vec_file)))
        ingest: list[tuple[str, float, int, int, float]] = []
        if args.ingest_docs:
            log(f"ingesting {args.ingest_docs} SciFact records into an empty store and into the {count} store")
            ingest.append(("empty store", *ingest_rate(tmp / "empty.db", args.ingest_docs, tmp)))
            ingest.append((f"{count:,}-chunk store", *ingest_rate(path, args.ingest_docs, tmp)))

    warm = runs[-1][1]
    print(
        f"SQLite store at {count:,} chunks (SciFact x{round(count / sum(len(c) for _, c, _ in docs))}, "
        f"new ids, stored vectors reused), {len(queries)} judged test queries, default options "
        f"(hybrid, top_k 5, analyzer auto), no rerank; {warm['blas']}; load average during the timed "
        f"queries {warm['load_during'][0]:.1f} -> {warm['load_during'][1]:.1f}, OS page cache "
        f"{warm['page_cache_mb'][0] / 1024:.1f} -> {warm['page_cache_mb'][1] / 1024:.1f} GB (store file "
        f"{path.stat().st_size / 2**30:.1f} GB)"
    )
    rows: list[tuple[str, str]] = []
    if build_s:
        rows.append(("synthetic build (replace_document)", f"{build_s:.0f} s, {count / build_s:,.0f} chunks/s"))
    for label, seconds, n_docs, n_chunks, index_s in ingest:
        rows.append(
            (
                f"real ingestion into the {label}",
                f"{n_docs} docs / {n_chunks} chunks in {seconds:.1f} s: {n_docs / seconds:.1f} docs/s, "
                f"{n_chunks / seconds:.1f} chunks/s (store writes {index_s:.2f} s)",
            )
        )
    if len(ingest) == 2:
        rows.append(("  ingestion rate at scale / empty store", f"{ingest[0][1] / ingest[1][1]:.2f}x"))
    for label, r in runs:
        rows.append(
            (
                f"warm-up, {label}: open + first rag.search",
                f"{r['open_s']:.2f} + {r['first_search_s']:.2f} s (CPU {r['open_cpu_s']:.2f} + "
                f"{r['first_search_cpu_s']:.2f} s; load {r['load_cold']:.1f}; dense graph: "
                f"{'yes' if r['dense_graph'] else 'no'})",
            )
        )
        rows.append(
            (
                f"RSS, {label}",
                f"process {r['rss_process_mb']:.0f} MB, open {r['rss_open_mb']:.0f}, first search "
                f"{r['rss_first_search_mb']:.0f}"
                + (f", after the queries {r['rss_after_queries_mb']:.0f}" if "rss_after_queries_mb" in r else "")
                + f", peak {r['peak_rss_mb']:.0f} MB",
            )
        )
    for name, (p50, p95, cpu50) in warm["latency_ms"].items():
        rows.append((f"{name} p50 / p95 (CPU p50)", f"{p50:.2f} / {p95:.2f} ms ({cpu50:.2f} ms)"))
    for name, value in POSTGRES_1M:
        rows.append((f"[quoted] {name}", value))
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    gb = warm["rss_after_queries_mb"] / 1024
    first = runs[0][1]
    p50, _, p50_cpu = warm["latency_ms"]["rag.search hybrid (full)"]
    p50_cached = warm["latency_ms"]["rag.search hybrid (cached q-vec)"][0]
    print(
        f"goal RSS <= 2.5 GB: {gb:.2f} GB after opening and the timed queries ({'met' if gb <= 2.5 else 'NOT met'}; "
        f"peak {warm['peak_rss_mb'] / 1024:.2f} GB; {runs[0][0]}: {first['rss_first_search_mb'] / 1024:.2f} GB "
        f"after the first search, peak {first['peak_rss_mb'] / 1024:.2f} GB); goal hybrid p50 <= 20 ms: "
        f"{p50:.1f} ms with the query embedding ({'met' if p50 <= 20 else 'NOT met'}), {p50_cached:.1f} ms without; "
        f"CPU p50 {p50_cpu:.1f} ms with the embedding"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
