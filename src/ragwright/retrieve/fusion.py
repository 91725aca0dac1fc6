"""Fusion of ranked lists from several search arms: pure functions keyed by chunk id.

Every fused hit keeps each arm's rank and score (explainable fusion). RRF uses only ranks, so its
scores are ordinal (about ``1/60`` per arm) and are never compared with ``min_score``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragwright.model.results import ArmHit

Ranking = Sequence[tuple[str, float]]  # (chunk_id, score), best first


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
