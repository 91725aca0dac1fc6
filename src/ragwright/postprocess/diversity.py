"""Redundancy filtering and maximal marginal relevance over result vectors (pure functions).

MMR: Carbonell & Goldstein 1998, "The Use of MMR, Diversity-Based Reranking for Reordering Documents
and Producing Summaries".

Both take results in rank order and their unit vectors (same order) and return indices to keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Vector = npt.NDArray[np.float32]


def redundancy_filter(vectors: Matrix, threshold: float = 0.95) -> list[int]:
    """Walk in rank order; drop a result whose cosine with an already kept one is ≥ *threshold*."""
    kept: list[int] = []
    for i in range(vectors.shape[0]):
        if not kept or float((vectors[kept] @ vectors[i]).max()) < threshold:
            kept.append(i)
    return kept


def mmr(query: Vector, vectors: Matrix, k: int, lambda_: float = 0.5) -> list[int]:
    """Maximal marginal relevance: repeatedly pick ``argmax λ·sim(q, d) − (1 − λ)·max sim(d, picked)``.

    λ = 1 is pure relevance (rank by similarity to the query), λ = 0 pure diversity.
    """
    import numpy as np

    n = vectors.shape[0]
    if n == 0 or k <= 0:
        return []
    relevance = vectors @ query
    chosen: list[int] = []
    redundancy = np.full(n, -np.inf, dtype=np.float64)
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        score = lambda_ * relevance - (1.0 - lambda_) * penalty
        score = np.where(available, score, -np.inf)
        best = int(np.argmax(score))
        chosen.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, vectors @ vectors[best])
    return chosen
