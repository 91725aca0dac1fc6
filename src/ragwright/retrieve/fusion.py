"""Fusion of ranked lists from several search arms: pure functions keyed by chunk id.

Reciprocal rank fusion: Cormack, Clarke & Büttcher 2009, "Reciprocal Rank Fusion outperforms Condorcet
and individual Rank Learning Methods"; convex combination: Bruch, Gai & Ingber 2023.

Every fused hit keeps each arm's rank and score (explainable fusion). RRF uses only ranks, so its
scores are ordinal (about ``1/60`` per arm) and are never compared with ``min_score``. Convex fusion
(the default, :func:`convex`) adds the arms' scores on known scales: see ``EnsembleOptions``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from ragwright._validate import OptionsBase, check_choice, check_float, check_int
from ragwright.errors import ConfigError
from ragwright.model.results import ArmHit

Ranking = Sequence[tuple[str, float]]  # (chunk_id, score), best first
FusionMethod = Literal["convex", "rrf", "weighted"]
ScoreNormalization = Literal["minmax", "zscore"]


#: Arm weights of each fusion method when none are given. ``convex`` was chosen by leave-one-collection-out
#: over SciFact, Cranfield, CISI, MED and NPL (``benchmarks/retrieval_beir.py``): 0.7 / 0.3 won on the
#: other four for every held-out collection. The sparse arm's weight is the keyword arm's.
DEFAULT_WEIGHTS: Final[dict[str, dict[str, float]]] = {
    "convex": {"dense": 0.7, "bm25": 0.3, "sparse": 0.3},
    "rrf": {"dense": 1.0, "bm25": 1.0, "sparse": 1.0},
    "weighted": {"dense": 1.0, "bm25": 1.0, "sparse": 1.0},
}


@dataclass(frozen=True)
class EnsembleOptions(OptionsBase):
    """How the arms of hybrid search are fused (convex combination vs RRF: Bruch, Gai & Ingber 2023, "An
    Analysis of Fusion Functions for Hybrid Retrieval"; RRF: Cormack, Clarke & Büttcher 2009).

    ``method="convex"`` (the default): a convex combination of the arms' scores, each on a known scale —
    the dense arm's cosine as it is, the keyword and sparse arms' scores divided by the query's best
    (Bruch, Gai, Ingber 2023, "An Analysis of Fusion Functions for Hybrid Retrieval"). A chunk one arm did
    not return gets that arm's exact cosine when the store has its vector, else the lowest score the arm
    returned. Because the keyword score is relative to the query's best match, a decisive exact match
    (a rare code, an identifier) keeps the full keyword weight while its near-duplicates fall away: the
    fusion adapts per query. Measured against RRF on five collections: +0.005 to +0.025 nDCG@10, and
    the right record first for every identifier query where RRF manages 72 %.
    ``method="rrf"``: weighted reciprocal rank fusion, ``Σ weight / (rrf_k + rank)`` (Cormack, Clarke,
    Büttcher 2009), the seed's fusion. ``method="weighted"``: each arm's scores normalised per query
    (``minmax`` or ``zscore``) and summed with the weights.
    Weights left ``None`` take the method's defaults (:data:`DEFAULT_WEIGHTS`). ``candidates`` is how
    many hits each arm contributes (default ``max(50, 2 × top_k)``). Supplying ensemble options always
    keeps the client-side fusion path.
    """

    dense_weight: float | None = None
    bm25_weight: float | None = None
    sparse_weight: float | None = None
    rrf_k: int = 60
    method: FusionMethod = "convex"
    normalization: ScoreNormalization = "minmax"
    candidates: int | None = None

    def __post_init__(self) -> None:
        check_choice("method", self.method, ("convex", "rrf", "weighted"))
        for name in ("dense_weight", "bm25_weight", "sparse_weight"):
            check_float(name, getattr(self, name), lo=0.0, optional=True)
        if sum(self.weight(arm) for arm in ("dense", "bm25", "sparse")) <= 0:
            raise ConfigError("at least one ensemble weight must be > 0 (dense_weight, bm25_weight, sparse_weight)")
        check_int("rrf_k", self.rrf_k, minimum=1)
        check_choice("normalization", self.normalization, ("minmax", "zscore"))
        check_int("candidates", self.candidates, minimum=1, optional=True)

    def weight(self, arm: str) -> float:
        """The weight of *arm* (``dense``, ``bm25``, ``sparse``): the given one, else the method's default."""
        given: float | None = {"dense": self.dense_weight, "bm25": self.bm25_weight, "sparse": self.sparse_weight}[arm]
        return float(given) if given is not None else DEFAULT_WEIGHTS[self.method][arm]


@dataclass(frozen=True, slots=True)
class Fused:
    chunk_id: str
    score: float
    arms: dict[str, ArmHit] = field(default_factory=dict)


def _evidence(rankings: Mapping[str, Ranking]) -> dict[str, dict[str, ArmHit]]:
    evidence: dict[str, dict[str, ArmHit]] = {}
    for arm, ranking in rankings.items():
        for rank, (cid, score) in enumerate(ranking, start=1):
            evidence.setdefault(cid, {}).setdefault(arm, ArmHit(rank, score))
    return evidence


def _ordered(scores: Mapping[str, float], evidence: Mapping[str, dict[str, ArmHit]]) -> list[Fused]:
    def key(cid: str) -> tuple[float, int, str]:
        return (-scores[cid], min(h.rank for h in evidence[cid].values()), cid)

    return [Fused(cid, scores[cid], evidence[cid]) for cid in sorted(scores, key=key)]


def rrf(rankings: Mapping[str, Ranking], *, k: int = 60, weights: Mapping[str, float] | None = None) -> list[Fused]:
    """Weighted reciprocal rank fusion: ``score(d) = Σ_arm weight_arm / (k + rank_arm(d))``."""
    evidence = _evidence(rankings)
    scores: dict[str, float] = {}
    for cid, hits in evidence.items():
        scores[cid] = sum((weights or {}).get(arm, 1.0) / (k + hit.rank) for arm, hit in hits.items())
    return _ordered(scores, evidence)


def _normalise(values: Sequence[float], method: str) -> list[float]:
    if not values:
        return []
    if method == "zscore":
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return [(v - mean) / std if std > 0 else 0.0 for v in values]
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in values]


def weighted_score(
    rankings: Mapping[str, Ranking], *, weights: Mapping[str, float] | None = None, normalization: str = "minmax"
) -> list[Fused]:
    """Each arm's scores normalised (min-max or z-score) and summed with the arm weights.

    A chunk an arm did not return contributes that arm's minimum normalised score (absent = worst).
    """
    evidence = _evidence(rankings)
    normalised: dict[str, dict[str, float]] = {}
    floors: dict[str, float] = {}
    for arm, ranking in rankings.items():
        values = _normalise([s for _, s in ranking], normalization)
        normalised[arm] = {}
        for (cid, _), v in zip(ranking, values, strict=True):
            normalised[arm].setdefault(cid, v)
        floors[arm] = min(values) if values else 0.0
    scores = {
        cid: sum((weights or {}).get(arm, 1.0) * normalised[arm].get(cid, floors[arm]) for arm in rankings)
        for cid in evidence
    }
    return _ordered(scores, evidence)


Scale = Literal["raw", "max"]


def convex(
    rankings: Mapping[str, Ranking],
    *,
    weights: Mapping[str, float],
    scales: Mapping[str, Scale] | None = None,
    completions: Mapping[str, Mapping[str, float]] | None = None,
    complete: Collection[str] = (),
) -> list[Fused]:
    """A convex combination of the arms' scores (Bruch, Gai, Ingber 2023): ``Σ weight · norm(score)``.

    Each arm's scores are read on its *scale*: ``"raw"`` as they are (a cosine), ``"max"`` divided by the
    arm's best score for this query (BM25, sparse dot products; the default). A chunk an arm did not
    return scores that arm's *completions* value when one is given (its exact cosine), else the lowest
    score the arm returned (an upper bound of what it would have scored) — or 0 when the arm's ranking is
    *complete* (it returned fewer hits than asked: nothing else matched). An arm that returned nothing
    contributes nothing.
    """
    evidence = _evidence(rankings)
    scales = scales or {}
    completions = completions or {}
    norm: dict[str, dict[str, float]] = {}
    floors: dict[str, float] = {}
    divisors: dict[str, float] = {}
    for arm, ranking in rankings.items():
        if not ranking:
            continue
        top = max(score for _, score in ranking)
        divisor = top if scales.get(arm, "max") == "max" and top > 0 else 1.0
        divisors[arm] = divisor
        norm[arm] = {}
        for cid, score in ranking:
            norm[arm].setdefault(cid, score / divisor)
        floors[arm] = 0.0 if arm in complete else min(norm[arm].values())
    scores: dict[str, float] = {}
    for cid in evidence:
        total = 0.0
        for arm, values in norm.items():
            value = values.get(cid)
            if value is None:
                extra = completions.get(arm, {}).get(cid)
                value = floors[arm] if extra is None else extra / divisors[arm]
            total += weights.get(arm, 1.0) * value
        scores[cid] = total
    return _ordered(scores, evidence)
