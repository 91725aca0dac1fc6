"""Dense retrieval quality and speed on SciFact (BEIR test split) with the default embedder.

Ingests ``corpus.jsonl`` through the real pipeline (JSONL source → structure-aware chunker → ONNX
embedder → SQLite store), runs the judged test queries, aggregates chunk hits to documents (max score
per document), and prints nDCG@10 beside the model's published figure, recall@100, MRR@10, ingestion
throughput (chunks/s, documents/s) and query latency p50/p95.

A second row checks the embedder itself under the BEIR protocol the published figure uses: each
document embedded whole as ``title + " " + text`` (truncated at 256 word pieces, as
sentence-transformers does), exact cosine search in numpy. The pipeline row differs from it because
ragwright chunks long documents instead of truncating them.

    python benchmarks/dense_scifact.py [--embedder default] [--threads 1] [--keep-store PATH]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ragwright import Rag
from ragwright.eval.datasets import BeirDataset, load_beir
from ragwright.eval.metrics import mean, mrr, ndcg_at_k, recall_at_k
from ragwright.models.embedders import Embedder, load_embedder
from ragwright.sources import JsonlSource
from ragwright.stores.sqlite import SqliteStore

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PUBLISHED_NDCG10 = 0.645  # all-MiniLM-L6-v2 on SciFact (MTEB / sentence-transformers)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def beir_protocol_ndcg(data: BeirDataset, embedder: Embedder) -> float:
    """nDCG@10 of the bare embedder: whole documents (title + text), exact cosine top-10."""
    import json

    import numpy as np

    ids, texts = [], []
    with data.corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            ids.append(str(rec["_id"]))
            texts.append(f"{rec.get('title', '')} {rec.get('text', '')}".strip())
    matrix = embedder.embed_documents(texts)
    run = {}
    for qid, text in data.judged_queries.items():
        scores = matrix @ embedder.embed_query(text)
        top = np.argsort(-scores)[:10]
        run[qid] = [ids[i] for i in top]
    return mean(ndcg_at_k(run, data.qrels, 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=SHARED / "data" / "scifact")
    parser.add_argument("--split", default="test")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--keep-store", type=Path, default=None, help="reuse/keep the store at this path")
    parser.add_argument("--chunk-k", type=int, default=100, help="chunks retrieved per query")
    parser.add_argument("--skip-protocol", action="store_true", help="skip the whole-document BEIR protocol row")
    args = parser.parse_args()

    data = load_beir(args.dataset, args.split)
    embedder = load_embedder(args.embedder, threads=args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        store_path = args.keep_store or Path(tmp) / "scifact.db"
        with Rag(SqliteStore(store_path), embedder) as rag:
            report = rag.ingest(JsonlSource(data.corpus_path))
            indexed = report.added + report.updated
            run: dict[str, list[str]] = {}
            latencies: list[float] = []
            for qid, text in data.judged_queries.items():
                start = time.perf_counter()
                results = rag.search(text, top_k=args.chunk_k)
                latencies.append(time.perf_counter() - start)
                ranked: list[str] = []
                for r in results:  # results are score-ordered: first occurrence = the document's max
                    if r.document_id not in ranked:
                        ranked.append(r.document_id)
                run[qid] = ranked
            chunks_total = rag.store.count_chunks()

    ndcg = mean(ndcg_at_k(run, data.qrels, 10))
    protocol = None if args.skip_protocol else beir_protocol_ndcg(data, embedder)
    rows = [
        ("embedder", embedder.name),
        ("queries", str(len(run))),
        ("nDCG@10", f"{ndcg:.4f}"),
        ("published nDCG@10", f"{PUBLISHED_NDCG10:.3f}"),
        ("difference", f"{ndcg - PUBLISHED_NDCG10:+.4f}"),
        *(
            []
            if protocol is None
            else [
                ("nDCG@10 BEIR protocol", f"{protocol:.4f} (whole documents, truncated, exact search)"),
                ("protocol difference", f"{protocol - PUBLISHED_NDCG10:+.4f}"),
            ]
        ),
        ("recall@100", f"{mean(recall_at_k(run, data.qrels, 100)):.4f}"),
        ("MRR@10", f"{mean(mrr(run, data.qrels, 10)):.4f}"),
        ("documents indexed", f"{indexed} ({report.unchanged} unchanged, {len(report.failed)} failed)"),
        ("chunks in store", str(chunks_total)),
    ]
    if report.chunks:
        embed_s = report.stage_seconds.get("embed", 0.0)
        rows += [
            ("ingest seconds", f"{report.seconds:.1f} (embedding {embed_s:.1f})"),
            ("ingest chunks/s", f"{report.chunks / report.seconds:.1f}"),
            ("ingest documents/s", f"{indexed / report.seconds:.1f}"),
        ]
    rows += [
        ("query latency p50", f"{statistics.median(latencies) * 1000:.1f} ms"),
        ("query latency p95", f"{percentile(latencies, 0.95) * 1000:.1f} ms"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"{'metric':<{width}}  value")
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
