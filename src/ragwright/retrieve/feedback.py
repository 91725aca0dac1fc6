"""Pseudo-relevance feedback: the query learns from its own best results.

:func:`rm3_query` builds the keyword arm's second query: the original terms plus the terms most likely
in the feedback results (RM3: Abdul-Jaleel et al. 2004, "UMass at TREC 2004", over the relevance model
of Lavrenko & Croft 2001), analysed exactly as the index analyses text. :func:`rocchio` moves the
dense query vector towards the feedback results' vectors (Rocchio 1971). Both are pure functions;
:class:`~ragwright.options.FeedbackOptions` says when they run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragwright.index.analyzers import Analyzer, LanguageAwareAnalyzer
from ragwright.model.chunk import Chunk

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

__all__ = ["rm3_query", "rocchio"]


def _terms(analyzer: Analyzer, chunk: Chunk) -> list[str]:
    if isinstance(analyzer, LanguageAwareAnalyzer):
        language = chunk.metadata.get("language")
        return analyzer.index_terms(chunk.text_for_embedding, language if isinstance(language, str) else None)
    return analyzer(chunk.text_for_embedding)


def rm3_query(
    analyzer: Analyzer, query: str, feedback: Sequence[Chunk], *, terms: int, weight: float
) -> dict[str, float]:
    """Weighted keyword terms: ``(1 - weight) · c(t, q) + weight · |q| · P(t | R)``, where ``P(t | R)`` is
    the feedback chunks' mean term distribution cut to its *terms* most likely terms and renormalised."""
    if isinstance(analyzer, LanguageAwareAnalyzer):
        tags = (c.metadata.get("language") for c in feedback)
        original = Counter(analyzer.query_terms(query, Counter(t for t in tags if isinstance(t, str))))
    else:
        original = Counter(analyzer(query))
    relevance: dict[str, float] = {}
    docs = [t for t in (_terms(analyzer, c) for c in feedback) if t]
    for doc in docs:
        for term, count in Counter(doc).items():
            relevance[term] = relevance.get(term, 0.0) + count / len(doc) / len(docs)
    best = sorted(relevance.items(), key=lambda kv: (-kv[1], kv[0]))[:terms]
    mass = sum(p for _, p in best)
    length = sum(original.values()) or 1
    out = {term: (1.0 - weight) * count for term, count in original.items()}
    for term, p in best:
        out[term] = out.get(term, 0.0) + weight * length * p / mass
    return out


def rocchio(query_vector: Vector, feedback: Sequence[Vector], beta: float) -> Vector:
    """``q + beta · mean(feedback)``, unit length."""
    import numpy as np

    q = np.asarray(query_vector, dtype=np.float32)
    if not feedback:
        return q
    moved = q / (float(np.linalg.norm(q)) or 1.0) + np.float32(beta) * np.mean(np.stack(feedback), axis=0)
    norm = float(np.linalg.norm(moved))
    return (moved / norm if norm > 0 else q).astype(np.float32)
