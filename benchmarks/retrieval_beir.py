"""Retrieval quality of the defaults on five BEIR-layout collections, with peers in the same run.

One run, three tables, for SciFact, Cranfield, CISI, MED and NPL (``../shared/data``):

1. **nDCG@10** (95 % bootstrap interval), Recall@100, p50 latency and queries/s of every configuration.
   ``default`` is what a user gets with no flags (``Rag(store)`` / ``ragwright search``): hybrid dense +
   BM25, the language-aware analyzer, convex fusion, Rocchio feedback. Beside it: dense and BM25 alone,
   the previous default (RRF over the language-neutral analyzer, no feedback), the default without
   feedback, RRF over the new analyzer, convex fusion with other weights, other feedback settings (RM3
   too, more documents, a larger step) and, with the SPLADE encoder, the three-arm hybrid. **Peers** in
   the same process: bm25s (``method="lucene"``, k1 1.5, b 0.75, its
   English stop words and PyStemmer, whole documents), the default embedder over whole documents
   (title + text, truncated at its window, exact numpy cosine), and a **plain RRF** (k 60) of those two
   top-100 lists — what a user would build in an afternoon.
2. **Paired differences** (10,000 bootstrap resamples over queries): the default against the better of
   bm25s and plain RRF on that collection, and against the previous default.
3. **Leave-one-collection-out**: every tuned choice (the dense weight of convex fusion; RRF against convex
   fusion; feedback and its settings; the analyzer) is chosen on the other four collections (mean
   nDCG@10) and reported on the held-out one, beside the default's own figure there.

The corpus is ingested once into the cached evaluation store of ``ragwright eval`` (one per dataset and
embedder; ``--reingest`` runs the incremental ingestion on it). Whole-document embeddings of the peers
are cached beside it. Document rankings come from the top ``depth`` = 100 chunks, a document ranked as
its best chunk (as ``ragwright eval``).

Usage::

    python benchmarks/retrieval_beir.py [--datasets scifact,cranfield,cisi,med,npl] [--limit N] [--no-sparse]
"""

from __future__ import annotations

import argparse
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
from _common import load_corpus  # noqa: E402  (sibling helper module)

from ragwright.eval.commands import eval_store_path  # noqa: E402
from ragwright.eval.configs import parse_config  # noqa: E402
from ragwright.eval.datasets import BeirDataset, load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from ragwright.eval.runner import run_config  # noqa: E402
from ragwright.eval.stats import Interval, bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.model.records import DocumentStatus  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

DEPTH = 100
DEFAULT = "default"
OLD_DEFAULT = "previous default (rrf, neutral analyzer)"
NO_FEEDBACK = "default without feedback"
#: (row, config spec, BM25 analyzer of the store it runs on). ``hybrid`` with no overrides is Rag's default:
#: convex fusion (dense 0.7, BM25 0.3) with Rocchio feedback, over the auto analyzer.
CONFIGS: tuple[tuple[str, str, str], ...] = (
    (DEFAULT, "hybrid", "auto"),
    ("dense", "dense", "auto"),
    ("bm25 (auto analyzer)", "bm25", "auto"),
    ("bm25 (neutral analyzer)", "bm25", "default"),
    (OLD_DEFAULT, "hybrid+ensemble.method=rrf+feedback=null", "default"),
    (NO_FEEDBACK, "hybrid+feedback=null", "auto"),
    ("rrf k60 (auto analyzer)", "hybrid+ensemble.method=rrf", "auto"),
    ("convex dense 0.5", "hybrid+ensemble.dense_weight=0.5+ensemble.bm25_weight=0.5", "auto"),
    ("convex dense 0.6", "hybrid+ensemble.dense_weight=0.6+ensemble.bm25_weight=0.4", "auto"),
    ("convex dense 0.8", "hybrid+ensemble.dense_weight=0.8+ensemble.bm25_weight=0.2", "auto"),
    ("feedback rocchio 5 docs", "hybrid+feedback.documents=5", "auto"),
    ("feedback rocchio beta 1", "hybrid+feedback.rocchio_beta=1.0", "auto"),
    ("feedback rm3+rocchio", "hybrid+feedback.rm3=true", "auto"),
    ("feedback rm3", "hybrid+feedback.rm3=true+feedback.rocchio=false", "auto"),
)
#: Rows that need the SPLADE encoder (skipped with --no-sparse or without the model).
SPARSE_CONFIGS: tuple[tuple[str, str, str], ...] = (
    ("hybrid3 convex (dense+bm25+sparse)", "hybrid", "auto"),
    ("hybrid3 rrf", "hybrid+ensemble.method=rrf", "auto"),
)
#: Leave-one-collection-out choices: a name, the row that is the default, and the rows it chooses between.
LOCO: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("convex dense weight", DEFAULT, ("convex dense 0.5", "convex dense 0.6", DEFAULT, "convex dense 0.8")),
    ("fusion method", DEFAULT, (DEFAULT, "rrf k60 (auto analyzer)")),
    (
        "feedback",
        DEFAULT,
        (
            NO_FEEDBACK,
            DEFAULT,
            "feedback rocchio 5 docs",
            "feedback rocchio beta 1",
            "feedback rm3+rocchio",
            "feedback rm3",
        ),
    ),
    ("analyzer (bm25 alone)", "bm25 (auto analyzer)", ("bm25 (auto analyzer)", "bm25 (neutral analyzer)")),
)
#: Pairs compared on every collection and on all their queries pooled: (row, against).
PAIRS: tuple[tuple[str, str], ...] = ((DEFAULT, NO_FEEDBACK), ("rrf k60 (auto analyzer)", DEFAULT))
PEERS = ("bm25s lucene en (peer)", "plain rrf: bm25s + dense docs (peer)")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Row:
    dataset: str
    name: str
    ndcg: Interval
    recall100: float
    p50_ms: float | None = None
    qps: float | None = None
    per_query: dict[str, float] = field(default_factory=dict)


def row_of(dataset: str, name: str, run: dict[str, list[str]], qrels: Any, seconds: Sequence[float] = ()) -> Row:
    per_q = dict(ndcg_at_k(run, qrels, 10))
    recall = float(np.mean(list(recall_at_k(run, qrels, 100).values())))
    p50 = statistics.median(seconds) * 1000 if seconds else None
    qps = len(seconds) / sum(seconds) if seconds else None
    return Row(dataset, name, bootstrap_ci(list(per_q.values())), recall, p50, qps, per_q)


# -- the cached store ---------------------------------------------------------------------------------
def prepare_store(
    dataset_dir: Path, data: BeirDataset, embedder: Any, reingest: bool, sparse: Any = None
) -> tuple[Path, str]:
    """The cached evaluation store of *dataset_dir*, ingested once (sparse vectors back-filled once);
    returns its path and a one-line description."""
    from ragwright.ingest.sparse import backfill_sparse
    from ragwright.sources import JsonlSource

    path = eval_store_path(dataset_dir, embedder.name)
    with Rag(SqliteStore(path), embedder) as rag:
        if rag.store.count_chunks() == 0 or reingest:
            log(f"{dataset_dir.name}: ingesting {data.corpus_path} into {path}")
            report = rag.ingest(JsonlSource(data.corpus_path))
            log(f"{dataset_dir.name}: added={report.added} updated={report.updated} in {report.seconds:.1f} s")
        if sparse is not None:
            done = backfill_sparse(rag.store, sparse)
            if done:
                log(f"{dataset_dir.name}: {done} chunks sparse-encoded")
        indexed = len(rag.store.list_records(DocumentStatus.INDEXED))
        desc = f"{indexed} documents indexed, {rag.store.count_chunks()} chunks"
    log(f"{dataset_dir.name}: {desc} in {path.name}")
    return path, desc


# -- ragwright configurations -----------------------------------------------------------------------
def run_ours(name: str, path: Path, data: BeirDataset, embedder: Any, limit: int | None, sparse: Any) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    groups: list[tuple[tuple[tuple[str, str, str], ...], str, Any]] = [
        (CONFIGS, "auto", None),
        (CONFIGS, "default", None),
    ]
    if sparse is not None:
        groups.append((SPARSE_CONFIGS, "auto", sparse))
    for configs, analyzer, encoder in groups:
        wanted = [c for c in configs if c[2] == analyzer]
        if not wanted:
            continue
        with Rag(SqliteStore(path, keyword_analyzer=analyzer), embedder, sparse_encoder=encoder) as rag:
            rag.search("warm up", top_k=10)  # loads the matrix, builds the indexes
            for row, spec, _ in wanted:
                log(f"  {name}: {row} ({spec}, analyzer {analyzer})")
                run = run_config(rag, data, parse_config(spec), depth=DEPTH, limit=limit)
                rows[row] = row_of(name, row, run.run, data.qrels, run.latencies)
    return rows


# -- peers ----------------------------------------------------------------------------------------------
def doc_vectors(dataset_dir: Path, corpus: list[tuple[str, str]], embedder: Any) -> np.ndarray:
    """Whole-document embeddings (title + text, truncated at the embedder's window), cached."""
    cache = eval_store_path(dataset_dir, embedder.name).with_suffix(".docvectors.npy")
    if cache.is_file():
        vectors = np.load(cache)
        if vectors.shape[0] == len(corpus):
            return vectors
    log(f"{dataset_dir.name}: embedding {len(corpus)} whole documents for the peers")
    vectors = np.asarray(embedder.embed_documents([t for _, t in corpus]), dtype=np.float32)
    np.save(cache, vectors)
    return vectors


def run_peers(
    name: str, dataset_dir: Path, data: BeirDataset, embedder: Any, queries: list[tuple[str, str]]
) -> dict[str, Row]:
    import bm25s  # type: ignore[import-untyped]
    import Stemmer  # type: ignore[import-not-found]

    corpus = load_corpus(data.corpus_path)
    ids = np.array([d for d, _ in corpus])
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numpy")
    retriever.index(bm25s.tokenize([t for _, t in corpus], stopwords="en", stemmer=stemmer, show_progress=False))
    texts = [q for _, q in queries]
    started = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    found, scores = retriever.retrieve(
        [t or [""] for t in tokens], k=min(DEPTH, len(corpus)), n_threads=0, show_progress=False
    )
    bm25_s = time.perf_counter() - started
    bm25_run = {
        qid: [str(ids[d]) for d, s in zip(row, srow, strict=True) if s > 0]
        for (qid, _), row, srow in zip(queries, found, scores, strict=True)
    }
    vectors = doc_vectors(dataset_dir, corpus, embedder)
    dense_run: dict[str, list[str]] = {}
    for qid, text in queries:
        sims = vectors @ np.asarray(embedder.embed_query(text), dtype=np.float32)
        top = np.argpartition(-sims, min(DEPTH, sims.size) - 1)[:DEPTH]
        dense_run[qid] = [str(ids[i]) for i in top[np.argsort(-sims[top], kind="stable")]]
    rrf_run: dict[str, list[str]] = {}
    for qid, _ in queries:
        fused: dict[str, float] = {}
        for ranking in (bm25_run[qid], dense_run[qid]):
            for rank, doc in enumerate(ranking, start=1):
                fused[doc] = fused.get(doc, 0.0) + 1.0 / (60 + rank)
        rrf_run[qid] = sorted(fused, key=lambda d: (-fused[d], d))[:DEPTH]
    per_query_s = [bm25_s / len(queries)] * len(queries)
    return {
        PEERS[0]: row_of(name, PEERS[0], bm25_run, data.qrels, per_query_s),
        "dense whole documents (peer)": row_of(name, "dense whole documents (peer)", dense_run, data.qrels),
        PEERS[1]: row_of(name, PEERS[1], rrf_run, data.qrels),
    }


# -- report -----------------------------------------------------------------------------------------------
def fmt_ci(iv: Interval) -> str:
    return f"{iv.mean:.4f} [{iv.low:.4f}, {iv.high:.4f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def paired_row(dataset: str, a: Row, b: Row) -> list[str]:
    cmp = paired_bootstrap(b.per_query, a.per_query)  # a - b
    d = cmp.difference
    return [
        dataset,
        a.name,
        b.name,
        f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]",
        "yes" if d.low > 0 else ("worse" if d.high < 0 else "no"),
        f"{cmp.wins}/{cmp.losses}/{cmp.ties}",
    ]


def loco_rows(results: dict[str, dict[str, Row]]) -> list[list[str]]:
    names = list(results)
    out: list[list[str]] = []
    for choice, default, candidates in LOCO:
        present = [c for c in candidates if all(c in results[d] for d in names)]
        if len(present) < 2 or len(names) < 2 or default not in present:
            continue
        for held in names:
            others = [d for d in names if d != held]
            best = max(present, key=lambda c: float(np.mean([results[d][c].ndcg.mean for d in others])))
            out.append(
                [
                    choice,
                    held,
                    best,
                    f"{results[held][best].ndcg.mean:.4f}",
                    f"{results[held][default].ndcg.mean:.4f}",
                    "yes" if best == default else "NO",
                ]
            )
    return out


def pooled(results: dict[str, dict[str, Row]], row: str, against: str) -> tuple[Row, Row] | None:
    """*row* and *against* over every query of every collection (query ids prefixed by the collection)."""
    if not all(row in rows and against in rows for rows in results.values()):
        return None
    out: list[Row] = []
    for which in (row, against):
        per_q = {f"{name}/{q}": v for name, rows in results.items() for q, v in rows[which].per_query.items()}
        out.append(Row("all", which, bootstrap_ci(list(per_q.values())), 0.0, per_query=per_q))
    return out[0], out[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="scifact,cranfield,cisi,med,npl")
    parser.add_argument("--data", type=Path, default=DATA, help="folder holding the BEIR datasets")
    parser.add_argument("--limit", type=int, default=None, help="only the first N judged queries")
    parser.add_argument("--reingest", action="store_true", help="run the incremental ingestion on cached stores")
    parser.add_argument("--no-sparse", action="store_true", help="skip the three-arm (SPLADE) rows")
    args = parser.parse_args(argv)

    from ragwright.models.embedders import default_embedder

    embedder = default_embedder()
    sparse: Any = None
    if not args.no_sparse:
        from ragwright.errors import ConfigError
        from ragwright.models.sparse import SpladeEncoder

        try:
            sparse = SpladeEncoder.default(threads=1)
        except ConfigError as exc:
            log(f"no sparse rows: {exc}")
    started = time.perf_counter()
    results: dict[str, dict[str, Row]] = {}
    for name in [n.strip() for n in args.datasets.split(",") if n.strip()]:
        dataset_dir = (args.data / name).resolve()
        data = load_beir(dataset_dir, "test")
        queries = list(data.judged_queries.items())[: args.limit]
        path, _ = prepare_store(dataset_dir, data, embedder, args.reingest, sparse)
        rows = run_ours(name, path, data, embedder, args.limit, sparse)
        rows.update(run_peers(name, dataset_dir, data, embedder, queries))
        results[name] = rows
        log(f"{name}: done ({time.perf_counter() - started:.0f} s so far)")

    print("Retrieval on BEIR-layout collections (test split, document-level, depth 100; 95% bootstrap CIs)")
    main_rows = [
        [
            r.dataset,
            r.name,
            fmt_ci(r.ndcg),
            f"{r.recall100:.4f}",
            "-" if r.p50_ms is None else f"{r.p50_ms:.1f}",
            "-" if r.qps is None else f"{r.qps:.0f}",
        ]
        for rows in results.values()
        for r in rows.values()
    ]
    print(table(("dataset", "config", "nDCG@10 [95% CI]", "R@100", "p50 ms", "q/s"), main_rows))
    print(
        "\np50 / q/s of ragwright rows: one rag.search(top_k=100) per query, query embedding included (each arm "
        "fetches 200); bm25s: batch tokenise + retrieve, per query."
    )
    paired: list[list[str]] = []
    for name, rows in results.items():
        peer = max((rows[p] for p in PEERS), key=lambda r: r.ndcg.mean)
        paired.append(paired_row(name, rows[DEFAULT], peer))
        paired.append(paired_row(name, rows[DEFAULT], rows[OLD_DEFAULT]))
        paired += [paired_row(name, rows[a], rows[b]) for a, b in PAIRS if a in rows and b in rows]
    for a, b in PAIRS:
        pair = pooled(results, a, b)
        if pair is not None:
            paired.append(paired_row("all (pooled)", *pair))
    print("\nPaired nDCG@10: the default minus the better peer and minus the previous default; other pairs")
    print(table(("dataset", "config", "against", "delta [95% CI]", "CI above 0", "W/L/T"), paired))
    print("\nLeave-one-collection-out: each choice made on the other four collections, reported on the held-out one")
    print(
        table(
            ("choice", "held out", "chosen on the other four", "nDCG@10 of the choice", "of the default", "default?"),
            loco_rows(results),
        )
    )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
