"""Local search's last step: the graph's evidence combined with the hybrid result.

``GraphOptions.fusion``:

* ``rrf``: reciprocal rank fusion of the hybrid ranking and the whole graph ranking
  (``weight``). A chunk both arms found is promoted for that alone.
* ``bridge``: hybrid's order is kept, and the graph only *adds* the chunk a two-hop question needs — a
  **bridge chunk**: one that opens with (is about) an entity named in one of hybrid's entry chunks,
  where that entry chunk itself opens with an entity of the question (question → the chunk about it →
  an entity it names → the chunk about that entity). Up to ``GraphOptions.bridges`` of them, in the
  graph's order, are placed after hybrid's first ``bridge_position`` results (moved up if hybrid had them
  lower, added if it did not). Chunks are never promoted merely for being found by both arms, and a
  question with no such chain (single-hop, or a question whose entities are not what the chunks are
  about) keeps hybrid's ranking exactly.
* ``anchored`` (default): ``rrf`` for a question with an anchored bridge chunk (the two-hop chain above exists),
  hybrid's ranking unchanged for any other question — RRF's promotion only where the graph sees a
  second hop, so single-hop questions keep hybrid's order.

Measured in ``benchmarks/RESULTS.md`` (GraphRAG: fusing the graph arm without co-occurrence promotion).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragwright.graph.options import GraphOptions
from ragwright.model.results import ArmHit, SearchResult
from ragwright.retrieve.fusion import rrf

if TYPE_CHECKING:
    from ragwright.graph.local import Walk


def fuse(hybrid: Sequence[SearchResult], walk: Walk, options: GraphOptions, top_k: int) -> list[SearchResult]:
    """The fused top *top_k*, each result keeping its hybrid arms and, when the graph ranked it, ``arms["graph"]``."""
    if options.fusion == "rrf":
        return _rrf(hybrid, walk, options, top_k)
    if options.fusion == "anchored":
        return _rrf(hybrid, walk, options, top_k) if walk.anchored else _hybrid(hybrid, walk, top_k)
    return _bridge(hybrid, walk, options, top_k)


def _graph_arms(walk: Walk) -> dict[str, ArmHit]:
    return {cid: ArmHit(rank, score) for rank, (cid, score) in enumerate(walk.ranking, start=1)}


def _hybrid(hybrid: Sequence[SearchResult], walk: Walk, top_k: int) -> list[SearchResult]:
    """Hybrid's top *top_k* as it was (scores and order), with the graph's rank on the chunks it also found."""
    graph = _graph_arms(walk)
    return [
        SearchResult(
            r.chunk,
            r.score,
            {**r.arms, **({"graph": graph[r.chunk_id]} if r.chunk_id in graph else {})},
            fusion="hybrid+graph-anchored",
        )
        for r in hybrid[:top_k]
    ]


def _bridge(hybrid: Sequence[SearchResult], walk: Walk, options: GraphOptions, top_k: int) -> list[SearchResult]:
    kept = {r.chunk_id for r in hybrid[: options.bridge_position]}
    added = [cid for cid, _ in walk.ranking if cid in walk.anchored and cid not in kept][: options.bridges]
    by_id = {r.chunk_id: r for r in hybrid}
    rest = [r.chunk_id for r in hybrid if r.chunk_id not in added]
    order = rest[: options.bridge_position] + added + rest[options.bridge_position :]
    graph = _graph_arms(walk)
    results: list[SearchResult] = []
    for i, cid in enumerate(order[:top_k]):
        base = by_id.get(cid)
        arms = dict(base.arms) if base is not None else {}
        if cid in graph:
            arms["graph"] = graph[cid]
        if base is not None and cid not in added:
            score = base.score
        else:  # an added bridge chunk takes the score of the result it follows (the ranking stays monotone)
            score = results[i - 1].score if i else (hybrid[0].score if hybrid else 1.0)
        chunk = base.chunk if base is not None else walk.visible[cid]
        results.append(SearchResult(chunk, score, arms, fusion="hybrid+graph-bridge"))
    return results


def _rrf(hybrid: Sequence[SearchResult], walk: Walk, options: GraphOptions, top_k: int) -> list[SearchResult]:
    hybrid_ranking = [(r.chunk_id, r.score) for r in hybrid]
    by_id = {r.chunk_id: r for r in hybrid}
    fused = rrf({"hybrid": hybrid_ranking, "graph": walk.ranking}, weights={"graph": options.weight})
    results: list[SearchResult] = []
    for f in fused[:top_k]:
        base = by_id.get(f.chunk_id)
        chunk = base.chunk if base is not None else walk.visible[f.chunk_id]
        arms = dict(base.arms) if base is not None else {}
        if "graph" in f.arms:
            arms["graph"] = ArmHit(f.arms["graph"].rank, f.arms["graph"].score)
        results.append(SearchResult(chunk, f.score, arms, fusion="rrf+graph"))
    return results
