"""Two writer processes and a searching reader on one SQLite store (issue 21).

The store is first filled with ``--docs`` SciFact abstracts. Then, for ``--seconds`` (default 120):

* **two writer processes**, each owning its own document ids, loop: ingest a new document or update one
  of theirs (another abstract, under a revision marker) through ``Rag.ingest`` of an in-memory source,
  or delete one (``Rag.remove``, a quarter of the operations). Each writer remembers what it committed
  last for every document it touched;
* **one reader process** searches in a loop through the ``Rag`` facade (default options: hybrid dense +
  BM25, top 5) with SciFact's queries, timing each search.

The **peer rows**: the same reader alone on the same store, no writer running, for ``--alone-seconds``
before the writers start and again after they stopped (the ratio is against both together: on a
shared machine the load of other work moves latencies as much as the writers do; the load average
is printed).

Reported: failed searches (any exception), lost documents (every document a writer committed must be
in the store at the end with its last content — its content hash, its chunks, its revision marker in
them — and every document it deleted must be gone), the store's integrity check, the reader's p50/p95
latency alone and with the writers (and their ratio), and the writers' documents/s.

The embedder is ``--embedder`` (default ``wordllama``, the static model, so that the writers'
embedding does not take the reader's cores; ``default`` uses MiniLM).

Usage::

    python benchmarks/concurrency.py [--seconds 120] [--alone-seconds 30] [--docs 1000] [--embedder wordllama]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from _common import load_corpus  # noqa: E402

WRITERS = 2
#: Document ids each writer owns (it creates, updates and deletes among them).
POOL = 200


def _rag(store: str, embedder: str) -> Any:
    from ragwright.models.embedders import load_embedder
    from ragwright.rag import Rag
    from ragwright.stores.sqlite import SqliteStore

    return Rag(SqliteStore(store), load_embedder(embedder))


def _document(text: str, marker: str) -> bytes:
    return f"{marker}.\n\n{text}\n".encode()


def _ready_then_wait() -> None:
    """Say this process is warm (models loaded, derived state read), then wait for the common start."""
    print("ready", flush=True)
    start_at = float(sys.stdin.readline())
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)


# -- roles (each runs in its own process) -------------------------------------------------------------
def run_writer(args: argparse.Namespace) -> dict[str, Any]:
    from ragwright.sources.memory import BytesSource

    texts = [t for _, t in load_corpus(SCIFACT / "corpus.jsonl")]
    rng = random.Random(1000 + args.writer)
    rag = _rag(args.store, args.embedder)
    expected: dict[str, str | None] = {}  # document id -> marker of its last committed content (None: deleted)
    ops = {"ingested": 0, "updated": 0, "deleted": 0, "failed": 0}
    errors: list[str] = []
    warm = f"writer{args.writer}/warm-up.txt"  # the first ingest loads the tokenizer and the language model
    rag.ingest(BytesSource({warm: _document(texts[args.writer], "Warm-up")}))
    expected[warm] = "Warm-up"
    _ready_then_wait()
    started = time.perf_counter()
    end = time.time() + args.seconds
    revision = 0
    while time.time() < end:
        doc_id = f"writer{args.writer}/doc{rng.randrange(POOL)}.txt"
        live = expected.get(doc_id) is not None
        try:
            if live and rng.random() < 0.25:
                rag.remove(doc_id)
                expected[doc_id] = None
                ops["deleted"] += 1
                continue
            revision += 1
            marker = f"Revision marker w{args.writer}r{revision}"
            report = rag.ingest(BytesSource({doc_id: _document(rng.choice(texts), marker)}))
            if report.failed:
                ops["failed"] += 1
                errors.append(str(report.failed[0]))
                continue
            expected[doc_id] = marker
            ops["updated" if live else "ingested"] += 1
        except Exception as exc:  # counted: the benchmark reports it
            ops["failed"] += 1
            errors.append(f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - started
    rag.close()
    return {"expected": expected, "ops": ops, "seconds": seconds, "errors": errors[:5]}


def run_reader(args: argparse.Namespace) -> dict[str, Any]:
    queries = [json.loads(line)["text"] for line in (SCIFACT / "queries.jsonl").open(encoding="utf-8")]
    rng = random.Random(7)
    rag = _rag(args.store, args.embedder)
    rag.search(queries[0])  # warm: derived state loaded, models ready
    latencies: list[float] = []
    failures: list[str] = []
    empty = 0
    _ready_then_wait()
    end = time.time() + args.seconds
    while time.time() < end:
        query = rng.choice(queries)
        started = time.perf_counter()
        try:
            results = rag.search(query)
        except Exception as exc:  # counted: the benchmark reports it
            failures.append(f"{type(exc).__name__}: {exc}")
            continue
        latencies.append(time.perf_counter() - started)
        empty += not results
    rag.close()
    return {"latencies": latencies, "failures": len(failures), "errors": failures[:5], "empty": empty}


# -- orchestration -----------------------------------------------------------------------------------
def _spawn(role: str, store: str, embedder: str, seconds: float, writer: int = 0) -> Any:
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--role",
            role,
            "--store",
            store,
            "--embedder",
            embedder,
            "--seconds",
            str(seconds),
            "--writer",
            str(writer),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _start(procs: list[Any]) -> None:
    """Wait until every process is warm, then start them together."""
    for proc in procs:
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"a {proc.args[3]} process failed to start")
    start_at = f"{time.time() + 0.5}\n"
    for proc in procs:
        proc.stdin.write(start_at)
        proc.stdin.flush()


def _collect(proc: Any) -> dict[str, Any]:
    out = proc.stdout.read()
    proc.wait()
    if proc.returncode != 0:
        raise SystemExit(f"a {proc.args[3]} process failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _fill(store: str, embedder: str, docs: int) -> float:
    from ragwright.sources.memory import BytesSource

    corpus = load_corpus(SCIFACT / "corpus.jsonl")[:docs]
    rag = _rag(store, embedder)
    started = time.perf_counter()
    rag.ingest(BytesSource({f"scifact/{i}.txt": _document(t, f"SciFact {i}") for i, t in corpus}))
    rag.close()
    return time.perf_counter() - started


def _verify(store: str, embedder: str, expected: dict[str, str | None]) -> tuple[int, list[str]]:
    """Documents lost or stale (committed but absent, or not with their last content) and deleted ones
    still present; with the problems of the store's integrity check."""
    from ragwright.model.records import DocumentStatus

    rag = _rag(store, embedder)
    problems: list[str] = []
    try:
        for doc_id, marker in expected.items():
            record = rag.store.get_record(doc_id)
            chunks = rag.store.document_chunks(doc_id)
            if marker is None:
                if chunks or (record is not None and record.status is not DocumentStatus.DELETED):
                    problems.append(f"{doc_id}: deleted, but still in the store")
                continue
            text = " ".join(c.text for c in chunks)
            if record is None or record.status is not DocumentStatus.INDEXED:
                problems.append(f"{doc_id}: committed, but its record is {record and record.status.value}")
            elif not chunks or len(chunks) != record.chunk_count:
                problems.append(f"{doc_id}: {len(chunks)} chunks stored, {record.chunk_count} recorded")
            elif marker not in text:
                problems.append(f"{doc_id}: not its last content ({marker!r} missing)")
        integrity = rag.check()
    finally:
        rag.close()
    return len(problems), problems[:5] + [f"integrity: {p}" for p in integrity[:5]]


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000 if len(values) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the writers and the reader run")
    parser.add_argument(
        "--alone-seconds", type=float, default=30.0, help="how long the reader runs alone, before and after"
    )
    parser.add_argument("--docs", type=int, default=1000, help="SciFact abstracts the store starts with")
    parser.add_argument("--embedder", default="wordllama", help="default | wordllama | PATH")
    parser.add_argument("--store", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--role", choices=("writer", "reader"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--writer", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role is not None:
        print(json.dumps(run_writer(args) if args.role == "writer" else run_reader(args)), flush=True)
        return

    with tempfile.TemporaryDirectory(prefix="ragwright-concurrency-") as tmp:
        store = str(Path(tmp) / "store.db")
        print(f"filling the store with {args.docs} SciFact abstracts ({args.embedder}) ...", file=sys.stderr)
        fill_s = _fill(store, args.embedder, args.docs)

        lone = _spawn("reader", store, args.embedder, args.alone_seconds)
        _start([lone])
        before = _collect(lone)
        print(f"reader alone: {len(before['latencies'])} searches", file=sys.stderr)

        writers = [_spawn("writer", store, args.embedder, args.seconds, w) for w in range(WRITERS)]
        reader = _spawn("reader", store, args.embedder, args.seconds)
        _start([*writers, reader])
        together = _collect(reader)
        written = [_collect(w) for w in writers]
        load = os.getloadavg()[1]
        lone = _spawn("reader", store, args.embedder, args.alone_seconds)
        _start([lone])
        after = _collect(lone)
        expected = {k: v for w in written for k, v in w["expected"].items()}
        lost, problems = _verify(store, args.embedder, expected)

    ops = {k: sum(w["ops"][k] for w in written) for k in written[0]["ops"]}
    writes = ops["ingested"] + ops["updated"] + ops["deleted"]
    rate = sum((w["ops"]["ingested"] + w["ops"]["updated"] + w["ops"]["deleted"]) / w["seconds"] for w in written)
    alone = {
        "latencies": before["latencies"] + after["latencies"],
        "failures": before["failures"] + after["failures"],
    }
    p50a, p95a = _pct(alone["latencies"], 50), _pct(alone["latencies"], 95)
    p50, p95 = _pct(together["latencies"], 50), _pct(together["latencies"], 95)

    print(
        f"\nSQLite store, {args.docs} SciFact abstracts to start (filled in {fill_s:.0f} s), embedder {args.embedder}; "
        f"{WRITERS} writers + 1 reader for {args.seconds:.0f} s, the reader alone for {args.alone_seconds:.0f} s "
        f"before and after; load average (5 min) {load:.1f} on {os.cpu_count()} CPUs\n"
    )
    header = f"{'run':<28} {'searches':>8} {'failed':>6} {'p50 ms':>7} {'p95 ms':>7} {'writes':>7} {'docs/s':>7}"
    print(header)
    print("-" * len(header))
    for name, run in (("reader alone, before", before), ("reader alone, after", after), ("reader alone (peer)", alone)):
        lat = run["latencies"]
        print(
            f"{name:<28} {len(lat):>8} {run['failures']:>6} "
            f"{_pct(lat, 50):>7.1f} {_pct(lat, 95):>7.1f} {'-':>7} {'-':>7}"
        )
    print(
        f"{'reader + 2 writers':<28} {len(together['latencies']):>8} {together['failures']:>6} "
        f"{p50:>7.1f} {p95:>7.1f} {writes:>7} {rate:>7.1f}"
    )
    print(f"{'ratio (with writers / alone)':<28} {'':>8} {'':>6} {p50 / p50a:>6.2f}x {p95 / p95a:>6.2f}x")
    print(
        f"\nwrites: {ops['ingested']} new, {ops['updated']} updated, {ops['deleted']} deleted, "
        f"{ops['failed']} failed; documents checked at the end: {len(expected)}, lost or stale: {lost}; "
        f"searches with no result: {together['empty']}"
    )
    for line in [*problems, *together["errors"], *(e for w in written for e in w["errors"])]:
        print(f"  {line}")
    if together["failures"] or alone["failures"] or lost or ops["failed"] or problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
