"""Merging the ranked lists of several sources: weighted reciprocal rank fusion over ranks.

``score(d) = Σ_source weight_source / (k + rank_source(d))`` (Cormack, Clarke & Büttcher 2009,
"Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods"), computed by
:func:`ragwright.retrieve.fusion.rrf` — the one RRF implementation. Only ranks count: the sources'
own scores (cosines, BM25 values, their own fusion scores, another embedder's cosines) are on scales
that cannot be compared, so they never are. The merged scores are RRF sums, an *opaque ranking*
(:attr:`~ragwright.stores.base.ScoreScale.OPAQUE_RANKING`), not similarities.

Results are keyed by ``(source, chunk id)``: two sources may hold chunks with the same id (the same
document ingested twice, or two stores built alike), and each stays its own result. Each merged result
names its ``source``, keeps the evidence its source gave (per-arm ranks and scores) and adds a
``federation`` entry: its rank in its source's list and the score its source gave it. Ties break by
best rank, then source name, then chunk id (deterministic).

Since keys never coincide across sources, the merge interleaves the sources' lists by
``weight / (k + rank)``: equal weights alternate them rank by rank, and a trust weight *w* puts a
source's rank *r* level with an equally trusted source's rank ``(k + r) / w − k`` — with ``k`` = 60 a
weight of 0.5 puts that source's best hit level with the other's 62nd: it only fills in behind. Trust
weights are strong; ``benchmarks/federation.py`` measures what they and the interleaving cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Final

from ragwright.model.results import ArmHit, SearchResult
from ragwright.retrieve.fusion import rrf

#: ``SearchResult.fusion`` of a merged result; ``arms[FEDERATION]`` is its place in its source's list.
FUSION: Final = "federated_rrf"
FEDERATION: Final = "federation"
_SEP: Final = "\x1f"  # never in a source name (see federation.options)


def merge(
    rankings: Mapping[str, Sequence[SearchResult]],
    *,
    weights: Mapping[str, float] | None = None,
    k: int = 60,
    top_k: int | None = None,
) -> list[SearchResult]:
    """The sources' ranked lists (best first, by source name) merged by weighted RRF; the best *top_k*
    (all when ``None``). Returns new results; the inputs are not changed."""
    by_key: dict[str, tuple[str, SearchResult]] = {}
    lists: dict[str, list[tuple[str, float]]] = {}
    for name, results in rankings.items():
        ranking: list[tuple[str, float]] = []
        for result in results:
            key = f"{name}{_SEP}{result.chunk.id}"
            if key in by_key:  # a source listing a chunk twice: its first (best) place counts
                continue
            by_key[key] = (name, result)
            ranking.append((key, result.score))
        lists[name] = ranking
    fused = rrf(lists, k=k, weights=weights)
    out: list[SearchResult] = []
    for item in fused[:top_k] if top_k is not None else fused:
        name, result = by_key[item.chunk_id]
        place = item.arms[name]
        out.append(
            replace(
                result,
                score=item.score,
                arms={**result.arms, FEDERATION: ArmHit(place.rank, place.score)},
                fusion=FUSION,
                source=name,
            )
        )
    return out
