"""Fusing what the search arms returned into one list of results (client-side hybrid search).

:func:`fuse_hits` turns each arm's hits into a ranking, fuses them with the call's
:class:`~ragwright.options.EnsembleOptions` (:mod:`ragwright.retrieve.fusion`) and keeps every arm's
rank and score on each result. For convex fusion, :func:`dense_completions` gives the chunks the dense
arm did not return their exact cosine (from the vectors the store holds), so a strong keyword match
that the dense arm ranked just past its cut is not scored as if it were unrelated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragwright._validate import OptionsBase, check_bool, check_float
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.retrieve.feedback import FeedbackOptions
from ragwright.retrieve.fusion import EnsembleOptions, Fused, Scale, convex, rrf, weighted_score
from ragwright.stores.base import Hit

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

__all__ = ["SearchOptions", "dense_completions", "fuse_hits", "missing_from", "rescore"]


@dataclass(frozen=True)
class SearchOptions(OptionsBase):
    """The search arms a call runs and how their rankings are fused.

    ``use_dense_search`` (on), ``use_keyword_search`` (BM25: ``None`` follows ``use_hybrid_search``),
    ``use_hybrid_search`` (dense + BM25, + the sparse arm unless ``use_sparse_search=False``),
    ``min_score`` (a floor on the dense arm's cosine), ``ensemble`` (fusion), ``feedback``
    (pseudo-relevance feedback).
    """

    use_dense_search: bool = True
    use_keyword_search: bool | None = None
    use_hybrid_search: bool = False
    use_sparse_search: bool | None = None
    min_score: float = 0.0
    ensemble: EnsembleOptions | None = None
    feedback: FeedbackOptions | None = None

    def __post_init__(self) -> None:
        check_bool("use_dense_search", self.use_dense_search)
        check_bool("use_hybrid_search", self.use_hybrid_search)
        check_bool("use_sparse_search", self.use_sparse_search, optional=True)
        check_bool("use_keyword_search", self.use_keyword_search, optional=True)
        check_float("min_score", self.min_score, lo=0.0)
        if self.ensemble is not None and not isinstance(self.ensemble, EnsembleOptions):
            raise ConfigError.invalid("ensemble", self.ensemble, "an EnsembleOptions or None")
        if self.feedback is not None and not isinstance(self.feedback, FeedbackOptions):
            raise ConfigError.invalid("feedback", self.feedback, "a FeedbackOptions or None")
        if not self.arms:
            raise ConfigError(
                "no search arm is active: use_dense_search=False needs use_hybrid_search=True "
                "or use_keyword_search=True"
            )

    @property
    def keyword_active(self) -> bool:
        """The BM25 arm runs when asked explicitly, or with hybrid search unless switched off."""
        return self.use_keyword_search if self.use_keyword_search is not None else self.use_hybrid_search

    @property
    def sparse_active(self) -> bool:
        """The sparse arm joins hybrid search unless ``use_sparse_search=False`` (``True`` without
        hybrid search has no effect). It runs only where a sparse encoder and a sparse-capable store are."""
        return self.use_hybrid_search and self.use_sparse_search is not False

    @property
    def arms(self) -> tuple[str, ...]:
        """The search arms this call runs, in a fixed order."""
        switches = (("dense", self.use_dense_search), ("bm25", self.keyword_active), ("sparse", self.sparse_active))
        return tuple(name for name, on in switches if on)


def missing_from(arm: str, hits_per_arm: Mapping[str, Sequence[Hit]]) -> list[str]:
    """Chunk ids the other arms returned that *arm* did not, in first-seen order."""
    have = {h.chunk_id for h in hits_per_arm.get(arm, ())}
    out: dict[str, None] = {}
    for other, hits in hits_per_arm.items():
        if other != arm:
            out.update((h.chunk_id, None) for h in hits if h.chunk_id not in have)
    return list(out)


def dense_completions(query_vector: Vector, vectors: Mapping[str, Vector]) -> dict[str, float]:
    """The cosine of *query_vector* with each stored vector (chunk id -> cosine)."""
    import numpy as np

    if not vectors:
        return {}
    ids = list(vectors)
    matrix = np.stack([np.asarray(vectors[cid], dtype=np.float32) for cid in ids])
    q = np.asarray(query_vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    cosines = (matrix @ q) / np.where(norms > 0, norms, 1.0)
    return dict(zip(ids, cosines.astype(float).tolist(), strict=True))


def rescore(
    query_vector: Vector,
    pool: Mapping[str, Chunk | Hit],
    vectors: Mapping[str, Vector],
    depth: int,
    min_score: float = 0.0,
) -> list[Hit]:
    """The dense arm over a candidate *pool* (chunk id -> the chunk or a hit on it, already visible to the
    caller; a hit's chunk is not read: a store may defer it): the exact cosine of *query_vector* with each
    candidate's stored vector, best first, at most *depth*, none below *min_score* (candidates without a
    stored vector are left out)."""
    scores = dense_completions(query_vector, {cid: vectors[cid] for cid in pool if cid in vectors})
    ranked = sorted((item for item in scores.items() if item[1] >= min_score), key=lambda kv: (-kv[1], kv[0]))
    return [_scored(pool[cid], score) for cid, score in ranked[:depth]]


def _scored(found: Chunk | Hit, score: float) -> Hit:
    return found.with_score(score) if isinstance(found, Hit) else Hit(found, score)


def fuse_hits(
    hits_per_arm: Mapping[str, Sequence[Hit]],
    ensemble: EnsembleOptions,
    *,
    scales: Mapping[str, Scale] | None = None,
    completions: Mapping[str, Mapping[str, float]] | None = None,
    depth: int | None = None,
    limit: int | None = None,
) -> list[SearchResult]:
    """One ranked list from the arms' hits, each result carrying every arm's rank and score. *depth* is
    how many hits each arm was asked for: an arm that returned fewer has no other match. *limit*: only
    the best that many are made results (the fusion itself ranks every hit by id; only the results
    read their chunks, which a store may decode on first read)."""
    first: dict[str, Hit] = {}
    rankings: dict[str, Sequence[tuple[str, float]]] = {}
    for arm, hits in hits_per_arm.items():
        rankings[arm] = [(h.chunk_id, h.score) for h in hits]
        for h in hits:
            first.setdefault(h.chunk_id, h)
    weights = {arm: ensemble.weight(arm) for arm in hits_per_arm}
    fused: list[Fused]
    if ensemble.method == "rrf":
        fused = rrf(rankings, k=ensemble.rrf_k, weights=weights)
    elif ensemble.method == "convex":
        complete = [arm for arm, hits in hits_per_arm.items() if depth is not None and len(hits) < depth]
        fused = convex(rankings, weights=weights, scales=scales, completions=completions, complete=complete)
    else:
        fused = weighted_score(rankings, weights=weights, normalization=ensemble.normalization)
    kept = fused if limit is None else fused[:limit]
    return [SearchResult(first[f.chunk_id].chunk, f.score, arms=f.arms, fusion=ensemble.method) for f in kept]
