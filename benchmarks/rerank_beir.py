"""What each post-retrieval stage buys on BEIR: hybrid vs + LLM reranking (top-20, top-50) vs + MMR.

One run, one table per dataset (SciFact, Cranfield, CISI under ``../shared/data``), on the same
query subsample for every row: nDCG@10, the reranker's pairs/s and the latency it adds per query.

* **hybrid**: the default retrieval (dense MiniLM int8 + BM25, RRF), document ranking from the top
  100 chunks (as ``ragwright eval``), over the cached evaluation store of ``retrieval_beir.py``.
* **+ MMR**: ``use_mmr=True`` (λ 0.5, candidates top_k × 3) on the same store.
* **+ rerank top-N**: the offline default reranker — the local LLM scoring each (query, passage)
  pair from its yes/no logits (``load_reranker("llm:0.5b")`` by default, ``--reranker`` to change) —
  reorders the first N chunks through ``ragwright.postprocess.rerank.rerank`` (the code path of
  ``Retriever``); the chunks below N keep their hybrid order.

LLM reranking costs one forward pass per pair on one CPU thread, so the default subsample is small
(``--queries 20``); the table says how many queries it used. The anchors from the BEIR paper: BM25 +
MiniLM-L6 cross-encoder 0.688 on SciFact; RRF of BM25 and bge-base 0.744.

Usage::

    python benchmarks/rerank_beir.py [--datasets scifact,cranfield,cisi] [--queries 20]
        [--candidates 20,50] [--reranker llm:0.5b]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

from retrieval_beir import prepare_store  # noqa: E402  (sibling benchmark)

from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.eval.metrics import mean, ndcg_at_k  # noqa: E402
from ragwright.eval.runner import documents_from_results  # noqa: E402
from ragwright.models.embedders import default_embedder  # noqa: E402
from ragwright.models.rerankers import load_reranker  # noqa: E402
from ragwright.postprocess.rerank import rerank  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

DEPTH = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="scifact,cranfield,cisi")
    parser.add_argument("--queries", type=int, default=20, help="queries per dataset (random sample, seed 0)")
    parser.add_argument("--candidates", default="20,50")
    parser.add_argument("--reranker", default="llm:0.5b")
    args = parser.parse_args()
    embedder = default_embedder()
    sizes = [int(n) for n in args.candidates.split(",")]
    extra = {"max_candidates": max(sizes)} if args.reranker.startswith("llm") else {}
    reranker = load_reranker(args.reranker, **extra)
    if reranker is None:
        raise SystemExit("--reranker none: nothing to compare")
    if hasattr(reranker, "load"):
        reranker.load()
    print(f"reranker: {reranker.name}")
    for name in args.datasets.split(","):
        dataset_dir = DATA / name
        data = load_beir(dataset_dir)
        path, desc = prepare_store(dataset_dir, data, embedder, False)
        queries = sorted(data.judged_queries.items())
        queries = random.Random(0).sample(queries, min(args.queries, len(queries)))
        qrels = {qid: data.qrels[qid] for qid, _ in queries}
        runs: dict[str, dict[str, list[str]]] = {"hybrid": {}, "hybrid + MMR": {}}
        runs.update({f"hybrid + rerank top-{n}": {} for n in sizes})
        added: dict[str, list[float]] = {k: [] for k in runs}
        pairs: dict[str, tuple[int, float]] = {}
        with Rag(SqliteStore(path), embedder) as rag:
            for qid, text in queries:
                start = time.perf_counter()
                base = rag.search(text, top_k=DEPTH)
                base_s = time.perf_counter() - start
                runs["hybrid"][qid] = documents_from_results(base)
                start = time.perf_counter()
                mmr = rag.search(text, top_k=DEPTH, use_mmr=True)
                added["hybrid + MMR"].append(time.perf_counter() - start - base_s)
                runs["hybrid + MMR"][qid] = documents_from_results(mmr)
                for n in sizes:
                    row = f"hybrid + rerank top-{n}"
                    start = time.perf_counter()
                    head = rerank(reranker, text, base[:n])
                    spent = time.perf_counter() - start
                    added[row].append(spent)
                    done, secs = pairs.get(row, (0, 0.0))
                    pairs[row] = (done + min(n, len(base)), secs + spent)
                    runs[row][qid] = documents_from_results([*head, *base[n:]])
        print(f"\n{name}: {len(queries)} queries, {desc}")
        print(f"{'configuration':28} {'nDCG@10':>8} {'pairs/s':>8} {'added ms/query':>15}")
        for row, run in runs.items():
            ndcg = mean(ndcg_at_k(run, qrels, 10))
            rate = f"{pairs[row][0] / pairs[row][1]:.1f}" if row in pairs and pairs[row][1] else "-"
            extra = 1000 * sum(added[row]) / len(added[row]) if added[row] else 0.0
            print(f"{row:28} {ndcg:>8.4f} {rate:>8} {extra:>15.0f}")


if __name__ == "__main__":
    main()
