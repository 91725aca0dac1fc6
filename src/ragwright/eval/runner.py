"""Run retrieval configurations over a BEIR dataset: per-query metrics, latency, error analysis.

The corpus is ingested once into a store (reused across runs: unchanged documents are skipped), each
configuration is run over the judged queries, chunk hits are aggregated to documents (a document's
rank is that of its best chunk), and every metric is kept per query so that intervals and paired
comparisons can be computed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragwright.eval.configs import EvalConfig
from ragwright.eval.datasets import BeirDataset
from ragwright.eval.metrics import (
    PerQuery,
    average_precision,
    hit_rate_at_k,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from ragwright.model.identity import Identity

#: The metrics every retrieval run reports, by name.
METRICS: dict[str, Callable[[dict[str, list[str]], Any], PerQuery]] = {
    "ndcg@10": lambda run, qrels: ndcg_at_k(run, qrels, 10),
    "recall@10": lambda run, qrels: recall_at_k(run, qrels, 10),
    "recall@100": lambda run, qrels: recall_at_k(run, qrels, 100),
    "precision@10": lambda run, qrels: precision_at_k(run, qrels, 10),
    "hit@10": lambda run, qrels: hit_rate_at_k(run, qrels, 10),
    "mrr@10": lambda run, qrels: mrr(run, qrels, 10),
    "map@100": lambda run, qrels: average_precision(run, qrels, 100),
}

MISS_DEPTH = 50
CUTOFF = 10


@dataclass
class ConfigRun:
    """Everything one configuration produced on one dataset."""

    config: EvalConfig
    per_query: dict[str, PerQuery] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    run: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000 if self.latencies else 0.0

    @property
    def p95_ms(self) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000

    def error_counts(self) -> dict[str, int]:
        counts = {"hit": 0, "ranking_miss": 0, "retrieval_miss": 0}
        for category in self.errors.values():
            counts[category] += 1
        return counts


def classify(ranked: Sequence[str], relevant: set[str], *, cutoff: int = CUTOFF, depth: int = MISS_DEPTH) -> str:
    """``hit`` (a relevant document in the top *cutoff*), ``ranking_miss`` (only deeper, within *depth*)
    or ``retrieval_miss`` (none within *depth*)."""
    first = next((i for i, d in enumerate(ranked[:depth]) if d in relevant), None)
    if first is None:
        return "retrieval_miss"
    return "hit" if first < cutoff else "ranking_miss"


def documents_from_results(results: Sequence[Any]) -> list[str]:
    """Document ranking from chunk results (already best-first): first occurrence wins."""
    seen: dict[str, None] = {}
    for r in results:
        seen.setdefault(r.document_id, None)
    return list(seen)


def run_config(
    rag: Any,
    dataset: BeirDataset,
    config: EvalConfig,
    *,
    depth: int = 100,
    identity: Identity | None = None,
    repetitions: int = 1,
    limit: int | None = None,
) -> ConfigRun:
    """Evaluate *config* on the judged queries of *dataset* with a ``Rag`` whose store holds the corpus.

    With ``repetitions > 1`` (non-deterministic stages) each query runs that many times and its
    metrics are averaged; latency keeps every repetition.
    """
    options = config.options.merged(top_k=max(depth, config.options.top_k))
    queries = list(dataset.judged_queries.items())[:limit]
    out = ConfigRun(config)
    runs: list[dict[str, list[str]]] = []
    for _ in range(max(1, repetitions)):
        run: dict[str, list[str]] = {}
        for qid, text in queries:
            start = time.perf_counter()
            results = rag.search(text, options, identity=identity)
            out.latencies.append(time.perf_counter() - start)
            run[qid] = documents_from_results(results)
        runs.append(run)
    qrels = {qid: dataset.qrels[qid] for qid, _ in queries}
    for name, metric in METRICS.items():
        values = [metric(run, qrels) for run in runs]
        out.per_query[name] = {q: sum(v[q] for v in values) / len(values) for q in values[0]}
    out.run = runs[0]
    for qid in qrels:
        relevant = {d for d, g in qrels[qid].items() if g > 0}
        out.errors[qid] = classify(out.run.get(qid, []), relevant)
    return out
