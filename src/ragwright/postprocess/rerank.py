"""The reranker seam and its failure semantics (cross-encoder reranking: Nogueira & Cho 2019, "Passage
Re-ranking with BERT").

A reranker scores (query, passage) pairs; its scores replace the retrieval order and are on its own
scale. If it fails, the original order is kept and ``rerank_failed`` is logged — retrieval never
breaks because an optional stage did.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ragwright.model.results import ArmHit, SearchResult

log = logging.getLogger(__name__)


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for a query; higher is more relevant."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


def rerank(
    reranker: Reranker, query: str, results: Sequence[SearchResult], *, min_score: float | None = None
) -> list[SearchResult]:
    """Results reordered by the reranker (its score becomes ``score``; the retrieval evidence stays).

    Failure or malformed output → the original order, with a warning. ``min_score`` drops results the
    reranker scores below it, so "nothing relevant" is possible.
    """
    if not results:
        return []
    try:
        scores = reranker.score(query, [r.chunk.text for r in results])
        if len(scores) != len(results) or not all(isinstance(s, int | float) and s == s for s in scores):
            raise ValueError(f"expected {len(results)} numeric scores, got {scores!r:.200}")
    except Exception as exc:  # any failure of an optional stage degrades
        log.warning("rerank_failed: %s: %s; keeping the retrieval order", getattr(reranker, "name", "reranker"), exc)
        return list(results)
    order = sorted(range(len(results)), key=lambda i: (-float(scores[i]), i))
    out = []
    for rank, i in enumerate(order, start=1):
        r = results[i]
        if min_score is not None and float(scores[i]) < min_score:
            continue
        out.append(replace(r, score=float(scores[i]), arms={**r.arms, "rerank": ArmHit(rank, float(scores[i]))}))
    return out
