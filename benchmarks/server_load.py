"""Load check of the HTTP server: N concurrent ``POST /search`` over loopback vs ``Rag.asearch`` direct.

One process: a SQLite store with the first ``--docs`` SciFact documents (default embedder), served by
uvicorn on a free loopback port (``ragwright.server.live.serve_in_thread``). The same SciFact queries
are sent ``--requests`` times at ``--concurrency`` in flight — through HTTP (httpx) and straight to
``Rag.asearch`` — and at concurrency 1 for the per-request overhead. Each phase stops early after
``--max-seconds``. Client and server share the process (and the GIL): the HTTP figures are an upper
bound on the server's own overhead.

Usage::

    python benchmarks/server_load.py [--docs 300] [--requests 200] [--concurrency 8] [--embedder default]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "scifact"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_corpus  # noqa: E402

from ragwright.models.embedders import load_embedder  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.server import ServerConfig, ServerLimits, create_app  # noqa: E402
from ragwright.server.live import serve_in_thread  # noqa: E402
from ragwright.sources import BytesSource  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))] if ordered else float("nan")


async def drive(
    call: Callable[[str], Awaitable[bool]], queries: list[str], n: int, concurrency: int, max_seconds: float
) -> dict[str, Any]:
    """Send *n* calls with at most *concurrency* in flight; latencies (s), errors, wall time."""
    latencies: list[float] = []
    errors = 0
    sem = asyncio.Semaphore(concurrency)
    deadline = time.perf_counter() + max_seconds

    async def one(i: int) -> None:
        nonlocal errors
        async with sem:
            if time.perf_counter() > deadline:
                return
            start = time.perf_counter()
            try:
                ok = await call(queries[i % len(queries)])
            except Exception as exc:  # counted, not raised: the table reports it
                log(f"error: {type(exc).__name__}: {exc}")
                ok = False
            latencies.append(time.perf_counter() - start)
            errors += not ok

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return {"latencies": latencies, "errors": errors, "wall": time.perf_counter() - start}


async def measure(
    rag: Rag, url: str, queries: list[str], args: argparse.Namespace
) -> list[tuple[str, int, dict[str, Any]]]:
    import httpx

    async def direct(q: str) -> bool:
        await rag.asearch(q, top_k=10)
        return True

    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def http(q: str) -> bool:
            response = await client.post("/search", json={"query": q, "options": {"top_k": 10}})
            return response.status_code == 200 and bool(response.json()["results"])

        for q in queries[:5]:  # warm both paths (matrix load, BM25 build, connections)
            await direct(q)
            await http(q)
        rows = []
        for concurrency in (1, args.concurrency):
            n = args.requests if concurrency > 1 else max(20, args.requests // 4)
            for name, call in (("Rag.asearch direct", direct), ("HTTP POST /search", http)):
                log(f"{name}: {n} requests at concurrency {concurrency}")
                rows.append((name, concurrency, await drive(call, queries, n, concurrency, args.max_seconds)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-seconds", type=float, default=60.0, help="Per phase.")
    parser.add_argument("--embedder", default="default", help="default | wordllama | PATH")
    args = parser.parse_args()

    docs = load_corpus(DATA / "corpus.jsonl")[: args.docs]
    with (DATA / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh if line.strip()][: args.queries]
    with tempfile.TemporaryDirectory() as tmp:
        rag = Rag(SqliteStore(Path(tmp) / "store.db"), load_embedder(args.embedder))
        start = time.perf_counter()
        report = rag.ingest(BytesSource({f"{doc_id}.txt": text.encode() for doc_id, text in docs}))
        log(f"ingested {report.added} documents, {report.chunks} chunks in {time.perf_counter() - start:.1f}s")
        config = ServerConfig(limits=ServerLimits(max_concurrency=args.concurrency, queue_timeout_s=60))
        with rag, serve_in_thread(create_app(rag, config)) as url:
            rows = asyncio.run(measure(rag, url, queries, args))

    print(f"embedder {rag.embedder.name}; {report.added} documents, {report.chunks} chunks; top_k 10, hybrid")
    print(f"{'path':<22}{'conc':>5}{'requests':>10}{'p50 ms':>9}{'p95 ms':>9}{'req/s':>8}{'errors':>8}")
    p50s: dict[tuple[str, int], float] = {}
    for name, concurrency, r in rows:
        lat = r["latencies"]
        p50, p95 = percentile(lat, 0.5) * 1000, percentile(lat, 0.95) * 1000
        p50s[(name, concurrency)] = p50
        rate = len(lat) / r["wall"] if r["wall"] else float("nan")
        print(f"{name:<22}{concurrency:>5}{len(lat):>10}{p50:>9.1f}{p95:>9.1f}{rate:>8.1f}{r['errors']:>8}")
    for concurrency in sorted({c for _, c, _ in rows}):
        ratio = p50s[("HTTP POST /search", concurrency)] / p50s[("Rag.asearch direct", concurrency)]
        overhead = p50s[("HTTP POST /search", concurrency)] - p50s[("Rag.asearch direct", concurrency)]
        print(f"concurrency {concurrency}: HTTP/direct p50 {ratio:.2f}x (+{overhead:.1f} ms)")
    total_errors = sum(r["errors"] for _, _, r in rows)
    print(
        f"errors: {total_errors}; mean latency all HTTP rows "
        f"{statistics.fmean(x for n, _, r in rows if n.startswith('HTTP') for x in r['latencies']) * 1000:.1f} ms"
    )
    sys.exit(1 if total_errors else 0)


if __name__ == "__main__":
    main()
