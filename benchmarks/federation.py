"""Federated search over two collections against one index holding everything (issue 25 item 3).

A BEIR-layout collection (``../shared/data``, Cranfield by default) is split at random (seeded) into two
halves. One SQLite store holds the whole corpus (the **single index**); a second store holds half A in its
live collection and half B in a second physical collection, searched together by
``federate(rag, collections="live,<second>")``: each half searched on its own (the defaults: hybrid
dense + BM25, convex fusion, Rocchio feedback), the two lists merged by weighted RRF over ranks. Also a
federated run with trust weights 1.0 / 0.5 (the sources are equally good here, so this shows what a
wrong trust weight costs).

Printed: nDCG@10 with a 95 % bootstrap interval per configuration, the paired difference against the
single index (10,000 resamples over queries), p50/p95 latency per query and the p50 ratio. Every query
runs once per configuration, the configurations interleaved query by query (same load for each).
Documents are ranked by their best chunk among the top 20 chunks. Embeddings are computed once (a memo
shared by the three ingestions), so the index builds cost one embedding pass.

Usage::

    python benchmarks/federation.py [--dataset cranfield] [--limit N] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from ragwright.eval.datasets import load_beir  # noqa: E402
from ragwright.eval.metrics import ndcg_at_k  # noqa: E402
from ragwright.eval.stats import bootstrap_ci, paired_bootstrap  # noqa: E402
from ragwright.models.embedders import default_embedder  # noqa: E402
from ragwright.rag import Rag  # noqa: E402
from ragwright.rag_federation import federate  # noqa: E402
from ragwright.sources import JsonlSource  # noqa: E402
from ragwright.stores.sqlite import SqliteStore  # noqa: E402

CHUNKS = 20  # chunks retrieved per query; documents ranked by their best chunk


class MemoEmbedder:
    """The default embedder with document vectors remembered by text (three ingestions, one embedding pass)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.memo = inner, {}

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
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            for text, vec in zip(missing, self.inner.embed_documents(missing), strict=True):
                self.memo[text] = vec
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def split_corpus(path: Path, out: Path, seed: int) -> tuple[Path, Path, int, int]:
    rng = random.Random(seed)
    a, b = out / "half_a.jsonl", out / "half_b.jsonl"
    n_a = n_b = 0
    with path.open(encoding="utf-8") as src, a.open("w", encoding="utf-8") as fa, b.open("w", encoding="utf-8") as fb:
        for line in src:
            if line.strip():
                if rng.random() < 0.5:
                    fa.write(line)
                    n_a += 1
                else:
                    fb.write(line)
                    n_b += 1
    return a, b, n_a, n_b


def documents(results: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(r.document_id for r in results))[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="cranfield")
    parser.add_argument("--limit", type=int, default=None, help="only the first N judged queries")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = load_beir(DATA / args.dataset)
    queries = list(data.judged_queries.items())[: args.limit]
    embedder = MemoEmbedder(default_embedder())
    with tempfile.TemporaryDirectory(prefix="fedbench-") as tmp:
        out = Path(tmp)
        half_a, half_b, n_a, n_b = split_corpus(data.corpus_path, out, args.seed)
        start = time.perf_counter()
        single = Rag(SqliteStore(out / "single.db"), embedder)
        single.ingest(JsonlSource(data.corpus_path))
        store = SqliteStore(out / "split.db")
        split = Rag(store, embedder)
        split.ingest(JsonlSource(half_a))
        second = store.create_collection("half B")
        with Rag(store.open_collection(second), embedder) as rag_b:
            rag_b.ingest(JsonlSource(half_b))
        built = time.perf_counter() - start
        configs = {
            "single index": single.search,
            "federated 1.0/1.0": federate(split, collections=f"live,{second}").search,
            "federated 1.0/0.5": federate(split, collections=f"live,{second}=0.5").search,
        }
        for search in configs.values():  # warm-up (indexes loaded, first-query costs paid)
            search(queries[0][1], top_k=CHUNKS)
        runs: dict[str, dict[str, list[str]]] = {name: {} for name in configs}
        times: dict[str, list[float]] = {name: [] for name in configs}
        load = os.getloadavg()[0]
        for qid, text in queries:
            for name, search in configs.items():
                t0 = time.perf_counter()
                found = search(text, top_k=CHUNKS)
                times[name].append(time.perf_counter() - t0)
                runs[name][qid] = documents(found)
        load = (load + os.getloadavg()[0]) / 2
        judged = {qid: data.qrels[qid] for qid, _ in queries}
        scores = {name: ndcg_at_k(run, judged, 10) for name, run in runs.items()}
        base = scores["single index"]
        p50_single = statistics.median(times["single index"])
        print(
            f"federation benchmark: {args.dataset}, {len(queries)} judged queries, corpus split {n_a} / {n_b} "
            f"documents (seed {args.seed}); default embedder {embedder.name}; defaults (hybrid); "
            f"top {CHUNKS} chunks -> 10 docs"
        )
        print(f"indexes built in {built:.0f} s (one embedding pass); load average ~{load:.1f} on {os.cpu_count()} CPUs")
        print()
        print(
            "| configuration | nDCG@10 [95% CI] | paired diff vs single [95% CI] | wins/losses/ties "
            "| p50 ms | p95 ms | p50 ratio |"
        )
        print("|---|---|---|---|---:|---:|---:|")
        summary: dict[str, Any] = {}
        for name in configs:
            ci = bootstrap_ci(list(scores[name].values()))
            p50 = statistics.median(times[name]) * 1000
            p95 = float(np.quantile(times[name], 0.95)) * 1000
            if name == "single index":
                diff_text, wlt = "–", "–"
            else:
                diff = paired_bootstrap(base, scores[name])
                d = diff.difference
                sig = " (significant)" if diff.significant else " (n.s.)"
                diff_text = f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{sig}"
                wlt = f"{diff.wins}/{diff.losses}/{diff.ties}"
                summary[name] = diff.to_dict()
            ratio = p50 / (p50_single * 1000)
            print(
                f"| {name} | {ci.mean:.4f} [{ci.low:.4f}, {ci.high:.4f}] | {diff_text} | {wlt} "
                f"| {p50:.1f} | {p95:.1f} | {ratio:.2f}x |"
            )
        print()
        print("json:", json.dumps({"dataset": args.dataset, "queries": len(queries), "paired": summary}))
        single.close()
        split.close()


if __name__ == "__main__":
    main()
