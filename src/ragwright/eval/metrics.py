"""Retrieval metrics over a run (query → ranked document ids) and graded qrels, vectorised.

A run is turned once into a matrix of gains (queries × k: the grade of the document at each rank,
0 when unjudged) and every metric is a numpy expression over it. nDCG uses linear gain with a log2
discount (Järvelin & Kekäläinen 2002, "Cumulated Gain-Based Evaluation of IR
Techniques"), as trec_eval, pytrec_eval and ranx do. Queries with no relevant document are left out of
every metric (as BEIR does); a judged query missing from the run scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Run = Mapping[str, Sequence[str]]
Qrels = Mapping[str, Mapping[str, int]]
PerQuery = dict[str, float]


@dataclass(frozen=True)
class GainMatrix:
    """Gains of the top-``k`` ranked documents for every judged query."""

    queries: tuple[str, ...]
    gains: npt.NDArray[np.float64]  # (Q, k) grade at each rank, 0 for unjudged/irrelevant
    ideal: npt.NDArray[np.float64]  # (Q, k) grades sorted descending (the ideal ranking)
    relevant: npt.NDArray[np.float64]  # (Q,) number of relevant documents

    @classmethod
    def build(cls, run: Run, qrels: Qrels, k: int) -> GainMatrix:
        import numpy as np

        queries = tuple(q for q in qrels if any(v > 0 for v in qrels[q].values()))
        gains = np.zeros((len(queries), k))
        ideal = np.zeros((len(queries), k))
        relevant = np.zeros(len(queries))
        for i, q in enumerate(queries):
            rels = qrels[q]
            ranked = list(run.get(q, ()))[:k]
            gains[i, : len(ranked)] = [max(rels.get(d, 0), 0) for d in ranked]
            grades = sorted((v for v in rels.values() if v > 0), reverse=True)
            relevant[i] = len(grades)
            ideal[i, : min(k, len(grades))] = grades[:k]
        return cls(queries, gains, ideal, relevant)

    def per_query(self, values: npt.NDArray[np.float64]) -> PerQuery:
        return {q: float(v) for q, v in zip(self.queries, values, strict=True)}


def _discount(k: int) -> npt.NDArray[np.float64]:
    import numpy as np

    return 1.0 / np.log2(np.arange(2, k + 2))


def ndcg_at_k(run: Run, qrels: Qrels, k: int = 10) -> PerQuery:
    import numpy as np

    m = GainMatrix.build(run, qrels, k)
    disc = _discount(k)
    dcg, idcg = m.gains @ disc, m.ideal @ disc
    return m.per_query(np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0))


def recall_at_k(run: Run, qrels: Qrels, k: int = 10) -> PerQuery:
    m = GainMatrix.build(run, qrels, k)
    return m.per_query((m.gains > 0).sum(axis=1) / m.relevant)


def precision_at_k(run: Run, qrels: Qrels, k: int = 10) -> PerQuery:
    m = GainMatrix.build(run, qrels, k)
    return m.per_query((m.gains > 0).sum(axis=1) / k)


def hit_rate_at_k(run: Run, qrels: Qrels, k: int = 10) -> PerQuery:
    m = GainMatrix.build(run, qrels, k)
    return m.per_query((m.gains > 0).any(axis=1).astype(float))


def mrr(run: Run, qrels: Qrels, k: int | None = None) -> PerQuery:
    import numpy as np

    depth = k or max((len(v) for v in run.values()), default=1) or 1
    m = GainMatrix.build(run, qrels, depth)
    hit = m.gains > 0
    first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)
    return m.per_query(np.divide(1.0, first, out=np.zeros(len(first)), where=first > 0))


def average_precision(run: Run, qrels: Qrels, k: int | None = None) -> PerQuery:
    """AP (MAP when averaged): precision at each relevant rank, divided by all relevant documents."""
    import numpy as np

    depth = k or max((len(v) for v in run.values()), default=1) or 1
    m = GainMatrix.build(run, qrels, depth)
    hit = (m.gains > 0).astype(float)
    precision = np.cumsum(hit, axis=1) / np.arange(1, depth + 1)
    return m.per_query((precision * hit).sum(axis=1) / m.relevant)


def mean(values: Mapping[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0
