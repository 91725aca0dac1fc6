"""Hybrid query latency at ~10k and ~100k chunks (SQLite store, no rerank).

The larger corpora are synthesised from the cached SciFact evaluation store (``ragwright eval`` /
``benchmarks/retrieval_beir.py`` build it): every chunk row and its stored vector is copied, N times,
under new document ids (``<id>~<copy>``) through ``SqliteStore.replace_document`` — nothing is
re-embedded. The synthetic stores are cached next to the evaluation stores (``--rebuild`` redoes them).

For each size, over the first ``--queries`` judged SciFact test queries (warm: one pass first):

* the bare arms with a precomputed query vector: ``store.search_dense`` and ``store.search_keyword``
  at depth 10 (what a single-arm ``top_k=10`` search fetches) and 50 (what each arm of a hybrid
  ``top_k=10`` search fetches);
* ``rag.search(q, top_k=10)`` dense-only, BM25-only and hybrid (the default fusion), and ``rag.search(q)``
  with no options (``defaults``: the facade's preset, hybrid with feedback, top 5), with the query embedding
  served from a precomputed cache (``cached``) and with the embedder really running (``full``);
* the query embedding alone (it does not depend on the corpus size);
* the ratio hybrid / (dense@50 + bm25@50), and the cold start (first search: matrix load, BM25 build);
* the dense arm's HNSW graph (``ragwright.index.ann``, used from 20k vectors): exact numpy search on
  the same store as the peer (``ann=AnnParams(threshold=None)``), the graph's recall@10 against it
  (compared on scores: the repeated corpus holds every vector N times), and the cold start with the
  graph built from the vectors and with it loaded from its snapshot beside the store file.

Then one profile (cProfile) of hybrid queries at the largest size, with the arms run inline on the
main thread so the profiler sees them (normally they run on two worker threads).

Usage::

    python benchmarks/retrieval_latency.py [--sizes 10000,100000] [--queries 200] [--blas-threads 1]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sqlite3
import sys
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

from ragwright._paths import cache_root  # noqa: E402
from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.index.analyzers import DEFAULT_ANALYZER  # noqa: E402
from ragwright.index.ann import AnnParams  # noqa: E402
from ragwright.model.chunk import Chunk  # noqa: E402
from ragwright.model.identity import Identity  # noqa: E402
from ragwright.model.records import DocumentRecord, DocumentStatus  # noqa: E402
from ragwright.options import RetrievalOptions  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402
from ragwright.stores.sqlite.schema import CHUNK_COLUMNS, chunk_from_row  # noqa: E402

TOP_K = 10


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def timed(
    plan: Sequence[tuple[str, Callable[[str], Any]]], queries: Sequence[str], warm: int = 20
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per-query wall times and CPU times (``time.process_time``: every thread of this process) of every
    measurement, interleaved query by query (so that load from other processes on a shared machine hits
    every measurement alike), after a warm-up on *warm* queries. On a loaded machine the wall time
    includes waiting for a core; the CPU time is the work itself (contention still inflates it a little:
    shared caches, SMT siblings)."""
    for q in queries[:warm]:
        for _, fn in plan:
            fn(q)
    out: dict[str, list[float]] = {name: [] for name, _ in plan}
    cpu: dict[str, list[float]] = {name: [] for name, _ in plan}
    for i, q in enumerate(queries, start=1):
        for name, fn in plan:
            c0 = time.process_time()
            start = time.perf_counter()
            fn(q)
            out[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - c0)
        if i % 50 == 0:
            log(f"    {i}/{len(queries)} queries")
    return out, cpu


class CachedQueryEmbedder:
    """The real embedder, with ``embed_query`` served from precomputed vectors when it can."""

    def __init__(self, inner: Any, vectors: dict[str, Any]) -> None:
        self._inner, self._vectors = inner, vectors

    def embed_query(self, text: str) -> Any:
        got = self._vectors.get(text)
        return got if got is not None else self._inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


# -- synthetic stores ----------------------------------------------------------------------------------
def source_chunks(path: Path) -> tuple[list[tuple[str, list[Chunk], Any]], str, int]:
    """(document id, chunks, vectors) of every document of the SciFact store, and its embedder binding."""
    import numpy as np

    with SqliteStore(path) as store:
        bound = store.embedding_model
    assert bound is not None, f"{path} has no embedding model bound"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # one bulk read (the API reads per document)
    try:
        rows = conn.execute(f"SELECT {CHUNK_COLUMNS}, vector FROM chunks ORDER BY document_id, position").fetchall()
    finally:
        conn.close()
    docs: dict[str, tuple[list[Chunk], list[bytes]]] = {}
    for row in rows:
        chunk = chunk_from_row(row[:-1])
        entry = docs.setdefault(chunk.document_id, ([], []))
        entry[0].append(chunk)
        entry[1].append(row[-1])
    out = [
        (doc, with_language(chunks), np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(chunks), bound[1]))
        for doc, (chunks, blobs) in docs.items()
    ]
    return out, bound[0], bound[1]


def with_language(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with ``metadata["language"]`` as ingestion records it today (``chunk_languages`` over the
    document's chunk texts), for stores ingested before it did; chunks that name a language are kept."""
    import dataclasses

    from ragwright.index.language import chunk_languages

    if any("language" in c.metadata for c in chunks):
        return chunks
    return [
        c if lang is None else dataclasses.replace(c, metadata={**c.metadata, "language": lang})
        for c, lang in zip(chunks, chunk_languages([c.text for c in chunks]), strict=True)
    ]


def build_store(
    target: Path, docs: list[tuple[str, list[Chunk], Any]], copies: int, model: str, dim: int
) -> tuple[int, float]:
    """Write *copies* copies of *docs* under new ids into a fresh store at *target*; (chunks, seconds)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    total = sum(len(c) for _, c, _ in docs) * copies
    written = 0
    with SqliteStore(target) as store:
        store.bind_embedder(model, dim)
        for copy in range(copies):
            for doc, chunks, vectors in docs:
                new_id = f"{doc}~{copy}"
                fresh = [
                    Chunk.create(
                        new_id,
                        c.text,
                        c.position,
                        section_path=c.section_path,
                        page=c.page,
                        page_end=c.page_end,
                        metadata=c.metadata,
                        tenant=c.tenant,
                        acl=c.acl,
                        embed_text=c.embed_text,
                    )
                    for c in chunks
                ]
                fresh = [
                    c.with_links(fresh[i - 1].id if i > 0 else None, fresh[i + 1].id if i + 1 < len(fresh) else None)
                    for i, c in enumerate(fresh)
                ]
                record = DocumentRecord(
                    new_id,
                    f"bench:{new_id}",
                    f"hash-{new_id}",
                    DocumentStatus.INDEXED,
                    embedding_model=model,
                    chunk_count=len(fresh),
                    created_at=time.time(),
                    updated_at=time.time(),
                )
                store.replace_document(record, fresh, vectors)
                written += len(fresh)
            log(f"  copy {copy + 1}/{copies}: {written}/{total} chunks ({time.perf_counter() - started:.0f} s)")
        count = store.count_chunks()
    return count, time.perf_counter() - started


def synthetic_store(
    size: int, docs: list[tuple[str, list[Chunk], Any]], model: str, dim: int, rebuild: bool
) -> tuple[Path, int, float | None]:
    per_copy = sum(len(c) for _, c, _ in docs)
    copies = max(1, round(size / per_copy))
    # "-lang": the chunks carry metadata["language"] (older cached stores without it are not reused)
    target = cache_root() / "bench" / f"latency-scifact-x{copies}-lang.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    built = Path(f"{target}.build.json")  # how long the build took, kept for runs that reuse the store
    if target.exists() and not rebuild:
        with SqliteStore(target) as store:
            have = store.count_chunks()
        if have == per_copy * copies:
            log(f"reusing {target} ({have} chunks)")
            seconds = json.loads(built.read_text())["seconds"] if built.exists() else None
            return target, have, seconds
    log(f"building {target}: {copies} x {per_copy} chunks")
    load = os.getloadavg()[0]
    count, seconds = build_store(target, docs, copies, model, dim)
    built.write_text(json.dumps({"chunks": count, "seconds": seconds, "load_at_start": load}))
    return target, count, seconds


# -- measurements --------------------------------------------------------------------------------------
def measure(
    path: Path, embedder: Any, queries: list[str], vectors: dict[str, Any], analyzer: str
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, float]]:
    identity = Identity()
    for pattern in ("ann*", "bm25*"):  # time the graph and BM25 builds, then their snapshots' loads
        for leftover in path.parent.glob(f"{path.name}.*.{pattern}"):
            leftover.unlink()
    cold: dict[str, float] = {}
    store = SqliteStore(path, keyword_analyzer=analyzer)
    start = time.perf_counter()
    store.search_dense(vectors[queries[0]], TOP_K, identity=identity)
    cold["first dense search (matrix load + graph build)"] = time.perf_counter() - start
    store.close()
    store = SqliteStore(path, keyword_analyzer=analyzer)
    start = time.perf_counter()
    store.search_dense(vectors[queries[0]], TOP_K, identity=identity)
    cold["first dense search (matrix load + graph snapshot)"] = time.perf_counter() - start
    exact = SqliteStore(path, keyword_analyzer=analyzer, ann=AnnParams(threshold=None))
    start = time.perf_counter()
    exact.search_dense(vectors[queries[0]], TOP_K, identity=identity)
    cold["first dense search, exact (matrix load)"] = time.perf_counter() - start
    graph_used = store._dense_index().uses_ann
    recalls = []
    for q in queries:
        got = sorted(round(h.score, 5) for h in store.search_dense(vectors[q], TOP_K, identity=identity))
        want = sorted(round(h.score, 5) for h in exact.search_dense(vectors[q], TOP_K, identity=identity))
        recalls.append(sum(min(got.count(v), want.count(v)) for v in set(want)) / max(1, len(want)))
    cold["dense recall@10 vs exact"] = sum(recalls) / len(recalls)
    cold["dense search through the HNSW graph (1 = yes)"] = 1.0 if graph_used else 0.0
    start = time.perf_counter()
    store.search_keyword(queries[0], TOP_K, identity=identity)
    cold["first keyword search (BM25 build)"] = time.perf_counter() - start
    if any(path.parent.glob(f"{path.name}.*.bm25")):  # stores that keep the BM25 index in a snapshot
        again = SqliteStore(path, keyword_analyzer=analyzer)
        start = time.perf_counter()
        again.search_keyword(queries[0], TOP_K, identity=identity)
        cold["first keyword search (BM25 snapshot)"] = time.perf_counter() - start
        again.close()

    cached = Rag(store, CachedQueryEmbedder(embedder, vectors))
    full = Rag(store, embedder)
    dense_opts = RetrievalOptions(top_k=TOP_K)
    bm25_opts = RetrievalOptions(top_k=TOP_K, use_dense_search=False, use_keyword_search=True)
    hybrid_opts = RetrievalOptions(top_k=TOP_K, use_hybrid_search=True)
    depth = hybrid_opts.arm_candidates
    plan: list[tuple[str, Callable[[str], Any]]] = [
        (f"store.search_dense k={TOP_K}", lambda q: store.search_dense(vectors[q], TOP_K, identity=identity)),
        (f"store.search_dense k={depth}", lambda q: store.search_dense(vectors[q], depth, identity=identity)),
        (f"  exact (peer) k={TOP_K}", lambda q: exact.search_dense(vectors[q], TOP_K, identity=identity)),
        (f"  exact (peer) k={depth}", lambda q: exact.search_dense(vectors[q], depth, identity=identity)),
        (f"store.search_keyword k={TOP_K}", lambda q: store.search_keyword(q, TOP_K, identity=identity)),
        (f"store.search_keyword k={depth}", lambda q: store.search_keyword(q, depth, identity=identity)),
        ("rag.search dense (cached q-vec)", lambda q: cached.search(q, dense_opts)),
        ("rag.search bm25", lambda q: cached.search(q, bm25_opts)),
        ("rag.search hybrid (cached q-vec)", lambda q: cached.search(q, hybrid_opts)),
        ("rag.search dense (full)", lambda q: full.search(q, dense_opts)),
        ("rag.search hybrid (full)", lambda q: full.search(q, hybrid_opts)),
        # what Rag does with no options: its default preset (hybrid with feedback, top 5)
        ("rag.search defaults (cached q-vec)", lambda q: cached.search(q)),
        ("rag.search defaults (full)", lambda q: full.search(q)),
    ]
    load_before = os.getloadavg()[0]
    results, cpu = timed(plan, queries)
    cold["load average (1 min) before the timed queries"] = load_before
    cold["load average (1 min) after the timed queries"] = os.getloadavg()[0]
    for name in results:
        log(f"    {name}: p50 {percentile(results[name], 0.5):.2f} ms (CPU {percentile(cpu[name], 0.5):.2f} ms)")
    store.close()
    exact.close()
    return results, cpu, cold


def profile_hybrid(path: Path, embedder: Any, queries: list[str], vectors: dict[str, Any], analyzer: str) -> str:
    """cProfile of hybrid searches (cached query vector) with the arms inline on this thread."""
    import ragwright.retrieve.combine as combine
    import ragwright.retrieve.pipeline as pipeline

    async def inline(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    store = SqliteStore(path, keyword_analyzer=analyzer)
    rag = Rag(store, CachedQueryEmbedder(embedder, vectors))
    options = RetrievalOptions(top_k=TOP_K, use_hybrid_search=True)
    original = getattr(pipeline, "to_thread")  # noqa: B009 - the name is imported there, not exported
    setattr(pipeline, "to_thread", inline)  # noqa: B010
    setattr(combine, "to_thread", inline)  # noqa: B010 - the fusion and feedback of each branch
    try:
        for q in queries[:20]:
            rag.search(q, options)
        profiler = cProfile.Profile()
        profiler.enable()
        for q in queries:
            rag.search(q, options)
        profiler.disable()
    finally:
        setattr(pipeline, "to_thread", original)  # noqa: B010
        setattr(combine, "to_thread", original)  # noqa: B010
        store.close()
    buf = io.StringIO()
    stats = pstats.Stats(profiler, stream=buf)
    stats.sort_stats("tottime").print_stats(18)
    stats.sort_stats("cumulative").print_stats(r"ragwright", 18)
    return buf.getvalue()


def blas_setting(threads: int | None) -> tuple[str, Any]:
    try:
        from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        return "BLAS threads: as is (threadpoolctl not installed)", None
    limiter = threadpool_limits(limits=threads, user_api="blas") if threads is not None else None
    pools = [f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info() if i.get("user_api") == "blas"]
    return "BLAS threads: " + (", ".join(pools) or "unknown"), limiter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="target chunk counts (rounded to SciFact copies)")
    parser.add_argument("--queries", type=int, default=200, help="judged SciFact test queries timed")
    parser.add_argument(
        "--analyzer", default=DEFAULT_ANALYZER, help=f"keyword analyzer of the stores (default {DEFAULT_ANALYZER})"
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the synthetic stores")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--profile-queries", type=int, default=50)
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="cap numpy's BLAS threads (threadpoolctl); default: as is"
    )
    args = parser.parse_args(argv)

    import numpy as np  # loaded before the BLAS pool is capped, so that the cap reaches it

    blas, _limiter = blas_setting(args.blas_threads)

    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    scifact = (DATA / "scifact").resolve()
    source = eval_store_path(scifact, embedder.name)
    if not source.exists():
        raise SystemExit(f"{source} is missing: run benchmarks/retrieval_beir.py --datasets scifact first")
    queries = list(load_beir(scifact, "test").judged_queries.values())[: args.queries]

    log(f"embedding {len(queries)} queries")
    embed_times: list[float] = []
    vectors: dict[str, Any] = {}
    for q in queries[:20]:
        embedder.embed_query(q)
    for q in queries:
        start = time.perf_counter()
        vectors[q] = np.asarray(embedder.embed_query(q), dtype=np.float32)
        embed_times.append(time.perf_counter() - start)

    log(f"reading {source}")
    docs, model, dim = source_chunks(source)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    measured: list[tuple[int, dict[str, list[float]], dict[str, list[float]], dict[str, float], float | None]] = []
    largest: Path | None = None
    for size in sizes:
        path, count, build_s = synthetic_store(size, docs, model, dim, args.rebuild)
        log(f"measuring {count} chunks")
        results, cpu, cold = measure(path, embedder, queries, vectors, args.analyzer)
        measured.append((count, results, cpu, cold, build_s))
        largest = path

    print(
        f"Query latency, SciFact repeated (new ids, stored vectors reused), {len(queries)} judged test queries, "
        f"top_k={TOP_K}, analyzer {args.analyzer}, no rerank; {blas}"
    )
    print(
        f"query embedding alone (all sizes): p50 {percentile(embed_times, 0.5):.2f} ms, "
        f"p95 {percentile(embed_times, 0.95):.2f} ms"
    )
    names = list(measured[0][1])
    header = ["measurement"] + [f"{c} chunks p50 / p95 ms (CPU p50)" for c, *_ in measured]
    rows = [
        [n]
        + [
            f"{percentile(r[n], 0.5):.2f} / {percentile(r[n], 0.95):.2f} ({percentile(u[n], 0.5):.2f})"
            for _, r, u, *_ in measured
        ]
        for n in names
    ]
    depth = RetrievalOptions(top_k=TOP_K, use_hybrid_search=True).arm_candidates
    ratio_row = [f"hybrid cached / (dense@{depth} + bm25@{depth}), p50"]
    full_row = [f"hybrid full / (embed + dense@{depth} + bm25@{depth}), p50"]
    emb = percentile(embed_times, 0.5)
    for _, r, u, *_ in measured:
        bare = percentile(r[f"store.search_dense k={depth}"], 0.5) + percentile(
            r[f"store.search_keyword k={depth}"], 0.5
        )
        bare_cpu = percentile(u[f"store.search_dense k={depth}"], 0.5) + percentile(
            u[f"store.search_keyword k={depth}"], 0.5
        )
        ratio_row.append(
            f"{percentile(r['rag.search hybrid (cached q-vec)'], 0.5) / bare:.2f}x "
            f"(CPU {percentile(u['rag.search hybrid (cached q-vec)'], 0.5) / bare_cpu:.2f}x)"
        )
        full_row.append(f"{percentile(r['rag.search hybrid (full)'], 0.5) / (bare + emb):.2f}x")
    rows += [ratio_row, full_row]
    for key in dict.fromkeys(k for _, _, _, c, _ in measured for k in c):
        plain = "recall" in key or "graph (1" in key or "load average" in key
        digits = 1 if "load average" in key else 3 if plain else 2
        rows.append(
            [key + ("" if plain else " (s)")]
            + [("-" if key not in c else f"{c[key]:.{digits}f}") for _, _, _, c, _ in measured]
        )
    rows.append(["synthetic store build (s)"] + ["reused" if b is None else f"{b:.1f}" for *_, b in measured])
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    big = measured[-1]
    for label, name in (("hybrid", "hybrid"), ("the defaults", "defaults")):
        p50_full = percentile(big[1][f"rag.search {name} (full)"], 0.5)
        p50_cached = percentile(big[1][f"rag.search {name} (cached q-vec)"], 0.5)
        cpu_full = percentile(big[2][f"rag.search {name} (full)"], 0.5)
        print(
            f"target p50 <= 15 ms at {big[0]} chunks, {label}: {p50_full:.1f} ms with the query embedding "
            f"({'met' if p50_full <= 15 else 'NOT met'}), {p50_cached:.1f} ms without "
            f"({'met' if p50_cached <= 15 else 'NOT met'}); CPU p50 {cpu_full:.1f} ms with the embedding"
        )
    if not args.no_profile and largest is not None:
        n = min(args.profile_queries, len(queries))
        log(f"profiling {n} hybrid queries at {big[0]} chunks")
        print(f"\ncProfile: {n} hybrid queries (cached query vector, arms inline) at {big[0]} chunks")
        text = profile_hybrid(largest, embedder, queries[:n], vectors, args.analyzer)
        print("\n".join(line for line in text.splitlines() if line.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
