"""Chunking strategies compared on retrieval quality: structural vs recursive vs semantic (seed 003 §4–5).

Each configuration ingests the BEIR corpus (default: Cranfield) through the real pipeline — JSONL
source → chunker → default embedder (all-MiniLM-L6-v2 int8) → in-memory store — then runs the judged
queries with dense retrieval only (``use_hybrid_search=False``), ranks documents by the first
occurrence of their chunks (``ragwright.eval.runner.run_config``) and reports nDCG@10 with a
bootstrap confidence interval, plus a paired bootstrap of each configuration against structural.
Embeddings are cached by text across configurations, so identical chunks are embedded once.

    python benchmarks/chunking_cranfield.py [--dataset PATH] [--threads 2] [--configs structural,semantic]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright.chunk import make_chunker
from ragwright.chunk.tokens import count_tokens
from ragwright.eval.configs import EvalConfig
from ragwright.eval.datasets import load_beir
from ragwright.eval.runner import run_config
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap
from ragwright.models.embedders import load_embedder
from ragwright.options import ChunkingOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import JsonlSource
from ragwright.stores.memory import MemoryStore

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONFIGS: dict[str, ChunkingOptions] = {
    "structural": ChunkingOptions(),
    "recursive": ChunkingOptions(strategy="recursive"),
    "semantic": ChunkingOptions(strategy="semantic"),
    "structural+overlap": ChunkingOptions(overlap="sentences", overlap_sentences=1),
}


class CachedEmbedder:
    """The wrapped embedder with vectors cached by text, and a count of texts actually embedded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cache: dict[str, Any] = {}
        self.embedded = 0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def max_tokens(self) -> int:
        return int(self.inner.max_tokens)

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def embed_documents(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            self.embedded += len(missing)
            for text, vector in zip(missing, self.inner.embed_documents(missing), strict=True):
                self.cache[text] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def run(dataset: Path, names: list[str], threads: int, resamples: int) -> str:
    data = load_beir(dataset, "test")
    embedder = CachedEmbedder(load_embedder("default", threads=threads))
    retrieval = RetrievalOptions(use_hybrid_search=False)
    rows: list[dict[str, Any]] = []
    per_query: dict[str, dict[str, float]] = {}
    for name in names:
        options = CONFIGS[name]
        before = embedder.embedded
        started = time.perf_counter()
        with Rag(MemoryStore(), embedder, chunking=options, retrieval_options=retrieval) as rag:
            chunker = make_chunker(embedder, options)
            rag.chunker = rag.ingestion.chunker = chunker  # type: ignore[assignment]
            report = rag.ingest(JsonlSource(data.corpus_path))
            ingest_s = time.perf_counter() - started
            chunks = rag.store.count_chunks()
            store = rag.store
            texts = [c.text for r in store.list_records() for c in store.document_chunks(r.document_id)]
            result = run_config(rag, data, EvalConfig(name, retrieval))
        per_query[name] = result.per_query["ndcg@10"]
        rows.append(
            {
                "name": name,
                "version": chunker.version,
                "docs": report.added + report.updated,
                "failed": len(report.failed),
                "chunks": chunks,
                "tokens": statistics.mean(count_tokens(t) for t in texts) if texts else float("nan"),
                "embedded": embedder.embedded - before,
                "ingest_s": ingest_s,
                "ndcg": bootstrap_ci(list(per_query[name].values()), resamples=resamples),
                "recall100": statistics.mean(result.per_query["recall@100"].values()),
            }
        )
        print(f"done {name}: {chunks} chunks, {ingest_s:.0f}s", flush=True)
    base = names[0]
    lines = [
        f"dataset {dataset.name}: {len(data.judged_queries)} judged queries, dense retrieval, {embedder.name}",
        f"{'config':20} {'chunker':14} {'chunks':>6} {'cl100k/chunk':>12} {'embedded':>8} {'ingest s':>8} "
        f"{'nDCG@10 [95% CI]':>24} {'R@100':>6} {'Δ vs ' + base + ' [95% CI]':>34} {'W/L/T':>11}",
    ]
    for row in rows:
        iv = row["ndcg"]
        delta = "—"
        wlt = ""
        if row["name"] != base:
            cmp = paired_bootstrap(per_query[base], per_query[row["name"]], resamples=resamples)
            d = cmp.difference
            delta = f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{' *' if cmp.significant else ''}"
            wlt = f"{cmp.wins}/{cmp.losses}/{cmp.ties}"
        lines.append(
            f"{row['name']:20} {row['version']:14} {row['chunks']:>6} {row['tokens']:>12.1f} {row['embedded']:>8} "
            f"{row['ingest_s']:>8.0f} {f'{iv.mean:.4f} [{iv.low:.4f}, {iv.high:.4f}]':>24} {row['recall100']:>6.3f} "
            f"{delta:>34} {wlt:>11}"
        )
    lines.append("* = the paired 95% interval excludes 0; W/L/T = queries better/worse/tied than " + base)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=SHARED / "data" / "cranfield")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated; the first is the baseline")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error(f"unknown config(s) {unknown}; choose from {list(CONFIGS)}")
    print(run(args.dataset, names, args.threads, args.resamples))


if __name__ == "__main__":
    main()
