"""BM25 speed and quality: ragwright's incremental ``Bm25Index`` against ``bm25s`` (numpy backend).

Same run, same data, one process: the full SciFact corpus (``title + ' ' + text``) analysed by
ragwright's default analyzer (``auto``: each text's language detected, its stop words and Snowball
stemmer, identifiers kept whole; ``--analyzer english`` for Lucene's English), then

* index time: ours = ``upsert`` of the texts + the consolidation a first search does; bm25s =
  analysing the texts with the same analyzer + ``BM25(method="lucene").index(tokens)``; both analyse
  each text the same way (language detection included);
* queries/s, single-threaded: ours = ``search(text, 10)`` per query (analysis included), cold (the
  first pass over a freshly built index: up to 4M postings its first search computes every term's
  contributions at once, past that each term's on first use) and warm; bm25s = analysing the queries + one
  ``retrieve(tokens, k=10, n_threads=0, backend_selection="numpy")`` over the whole batch, the queries
  analysed into exactly the terms ours searches for (``Bm25Index.query_terms``);
* nDCG@10 of both on the judged test queries (reference: bm25s' own tokenizer, 0.6863);
* incremental upserts: 100 documents added one call each to an index of the rest, docs/s, and the
  latency until they are searchable, against what bm25s needs for the same (a full re-index).

Target: our queries/s >= 1.0x bm25s.

Usage::

    python benchmarks/bm25_speed.py [--queries all|test] [--repeat 3] [--analyzer auto|english|default]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
from _common import best_of, load_corpus  # noqa: E402  (sibling helper module)

from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k  # noqa: E402
from ragwright.index import Bm25Index, get_analyzer  # noqa: E402


def mean_ndcg(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> float:
    return float(np.mean(list(ndcg_at_k(run, qrels, 10).values())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "scifact")
    parser.add_argument("--queries", choices=("all", "test"), default="all", help="queries timed (default all)")
    parser.add_argument("--analyzer", default="auto")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)

    import bm25s  # type: ignore[import-untyped]

    ds = load_beir(args.data, "test")
    docs = load_corpus(ds.corpus_path)
    doc_ids = np.array([cid for cid, _ in docs])
    texts = [text for _, text in docs]
    queries = ds.queries if args.queries == "all" else ds.judged_queries
    qids, qtexts = list(queries), list(queries.values())
    analyzer = get_analyzer(args.analyzer)
    analyzer(texts[0])  # compile the patterns, load the stemmer

    # -- index ------------------------------------------------------------------------------
    def build_ours() -> Bm25Index:
        index = Bm25Index(get_analyzer(args.analyzer))
        index.upsert(docs)
        index.search("warm", 1)  # consolidation: the index is query-ready
        return index

    def build_bm25s() -> Any:
        tokens = [analyzer(t) for t in texts]
        retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numpy")
        retriever.index(tokens, show_progress=False)
        return retriever

    _, analyse_s = best_of(lambda: [analyzer(t) for t in texts], args.repeat)
    ours, ours_index_s = best_of(build_ours, args.repeat)
    theirs, theirs_index_s = best_of(build_bm25s, args.repeat)

    # -- queries ----------------------------------------------------------------------------
    def query_ours(index: Bm25Index) -> list[list[str]]:
        return [[cid for cid, _ in index.search(q, args.k)] for q in qtexts]

    def query_bm25s() -> list[list[str]]:
        tokens = [ours.query_terms(q) or [""] for q in qtexts]  # bm25s maps an empty query to its empty token
        found, scores = theirs.retrieve(tokens, k=args.k, n_threads=0, show_progress=False, backend_selection="numpy")
        return [
            [str(doc_ids[d]) for d, s in zip(row, srow, strict=True) if s > 0]
            for row, srow in zip(found, scores, strict=True)
        ]

    cold_s = float("inf")
    for _ in range(args.repeat):
        fresh = build_ours()
        start = time.perf_counter()
        query_ours(fresh)
        cold_s = min(cold_s, time.perf_counter() - start)
    ours_run, warm_s = best_of(lambda: query_ours(ours), args.repeat)
    theirs_run, theirs_q_s = best_of(query_bm25s, args.repeat)

    judged = ds.judged_queries
    ours_ndcg = mean_ndcg({q: r for q, r in zip(qids, ours_run, strict=True) if q in judged}, ds.qrels)
    theirs_ndcg = mean_ndcg({q: r for q, r in zip(qids, theirs_run, strict=True) if q in judged}, ds.qrels)
    same_top = np.mean([a == b for a, b in zip(ours_run, theirs_run, strict=True)])
    same_set = np.mean([set(a) == set(b) for a, b in zip(ours_run, theirs_run, strict=True)])

    # -- incremental ------------------------------------------------------------------------
    head, tail = docs[:-100], docs[-100:]
    inc_upsert_s = inc_first_s = float("inf")
    for _ in range(args.repeat):
        index = Bm25Index(get_analyzer(args.analyzer))
        index.upsert(head)
        index.search("warm", 1)
        start = time.perf_counter()
        for item in tail:
            index.upsert([item])
        mid = time.perf_counter()
        index.search(qtexts[0], args.k)
        inc_upsert_s = min(inc_upsert_s, mid - start)
        inc_first_s = min(inc_first_s, time.perf_counter() - mid)

    # -- report -----------------------------------------------------------------------------
    nq = len(qtexts)
    print(
        f"SciFact: {len(docs)} documents, {nq} queries ({args.queries}), analyzer {analyzer.name}, "
        f"k={args.k}, best of {args.repeat}; bm25s {bm25s.__version__}, numpy {np.__version__}"
    )
    print(f"analysing the corpus alone: {analyse_s:.2f} s (inside both index times)")
    header = ("engine", "index s", "queries/s", "q/s vs bm25s", "nDCG@10 (test)")
    widths = [36, 8, 10, 13, 14]
    rows = [
        ("bm25s (numpy, lucene)", theirs_index_s, nq / theirs_q_s, 1.0, theirs_ndcg),
        ("ragwright Bm25Index, cold", ours_index_s, nq / cold_s, theirs_q_s / cold_s, ours_ndcg),
        ("ragwright Bm25Index, warm", ours_index_s, nq / warm_s, theirs_q_s / warm_s, ours_ndcg),
    ]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for name, index_s, qps, ratio, ndcg in rows:
        cells = (name, f"{index_s:.2f}", f"{qps:.0f}", f"{ratio:.2f}x", f"{ndcg:.4f}")
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
    print(f"identical top-{args.k} lists: {same_top:.1%} of queries; identical top-{args.k} sets: {same_set:.1%}")
    print(
        f"incremental: 100 docs upserted one by one into {len(head)}: {100 / inc_upsert_s:.0f} docs/s; "
        f"first search after them {inc_first_s * 1000:.1f} ms "
        f"(bm25s has no update: a full re-index takes {theirs_index_s:.2f} s)"
    )
    ok = theirs_q_s / cold_s >= 1.0
    print(f"target queries/s >= 1.0x bm25s (cold): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
