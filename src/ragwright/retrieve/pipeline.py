"""The retrieval chain: the caller's security filter and the metadata filter inside every arm
(before top-k), the arms (dense, BM25) run concurrently, fused client-side with RRF or weighted score
fusion, then specification filters in-process.

``min_score`` is a floor on the dense arm's cosine; BM25 hits bypass it (seed 000), and fused RRF
scores are ordinal and never filtered by it. Every result carries its per-arm evidence; the path taken
is logged as ``retrieval_path`` (debug).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING

from ragwright._sync import to_thread
from ragwright.chunk.passages import merge_adjacent
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.results import ArmHit, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.options import EnsembleOptions, RetrievalOptions
from ragwright.postprocess.budget import apply_budget
from ragwright.postprocess.diversity import mmr, redundancy_filter
from ragwright.postprocess.reorder import lost_in_the_middle
from ragwright.postprocess.rerank import Reranker, rerank
from ragwright.retrieve.fusion import Fused, rrf, weighted_score
from ragwright.stores.base import Hit, KeywordSearch, VectorSearch

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

log = logging.getLogger(__name__)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_inactive(names: list[str]) -> None:
    """Log ``option_not_active`` once per option name and process."""
    with _warned_lock:
        fresh = [n for n in names if n not in _warned]
        _warned.update(fresh)
    for name in fresh:
        log.warning("option_not_active: %s is accepted but its stage is not active in this release", name)


class Retriever:
    """Dense, keyword and hybrid retrieval over a store, under the caller's identity."""

    def __init__(self, store: VectorSearch, embedder: Embedder, reranker: Reranker | None = None) -> None:
        self.store, self.embedder, self.reranker = store, embedder, reranker

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]:
        if not isinstance(query, str) or not query.strip():
            raise ConfigError.invalid("query", query, "a non-empty question or search text")
        warn_inactive(options.inactive_requests())
        flt: Filter | None = options.metadata_filter  # type: ignore[assignment]  # normalised by the options
        arms = options.arms
        pool = self._pool(options)
        depth = pool if len(arms) == 1 else max(pool, options.arm_candidates)
        query_vector: list[Vector] = []
        tasks = [self._arm(arm, query, depth, options, identity, flt, query_vector) for arm in arms]
        hits_per_arm = dict(zip(arms, await asyncio.gather(*tasks), strict=True))
        if len(arms) == 1:
            (arm,) = arms
            candidates: Iterable[SearchResult] = (
                SearchResult(h.chunk, h.score, arms={arm: ArmHit(rank, h.score)})
                for rank, h in enumerate(hits_per_arm[arm], start=1)
            )
        else:
            candidates = _fuse(hits_per_arm, options.ensemble or EnsembleOptions())
        log.debug(
            "retrieval_path: client arms=%s hits=%s", ",".join(arms), {a: len(h) for a, h in hits_per_arm.items()}
        )
        spec = options.filter
        results = list(islice((r for r in candidates if spec is None or spec.is_satisfied_by(r)), pool))
        return await self._postprocess(query, results, options, query_vector, identity)

    def _pool(self, options: RetrievalOptions) -> int:
        """How many candidates the post-processing stages need (over-fetch for rerank/MMR/redundancy)."""
        pool = options.top_k
        if self.reranker is not None and options.use_reranking:
            pool = max(pool, options.effective_candidate_count)
        if options.use_mmr:
            pool = max(pool, options.mmr_candidate_count or options.top_k * 3)
        if options.use_redundancy_filter:
            pool = max(pool, options.top_k * 2)
        return pool

    async def _postprocess(
        self,
        query: str,
        results: list[SearchResult],
        options: RetrievalOptions,
        query_vector: list[Vector],
        identity: Identity,
    ) -> list[SearchResult]:
        """redundancy → MMR → rerank → trim → parents → token budget → lost-in-the-middle (DESIGN.md order)."""
        reranking = self.reranker is not None and options.use_reranking
        if (options.use_redundancy_filter or options.use_mmr) and results:
            vectors = await to_thread(self._vectors, results)
            if options.use_redundancy_filter:
                keep = redundancy_filter(vectors, options.redundancy_threshold)
                results, vectors = [results[i] for i in keep], vectors[keep]
            if options.use_mmr:
                qv = query_vector[0] if query_vector else await to_thread(self.embedder.embed_query, query)
                picked = mmr(qv, vectors, len(results) if reranking else options.top_k, options.mmr_lambda)
                results = [results[i] for i in picked]
        if reranking and self.reranker is not None:
            results = await to_thread(rerank, self.reranker, query, results)
        results = results[: options.top_k]
        if options.use_parent_document and any(r.chunk.parent_id for r in results):
            ratio = options.auto_merge_ratio if options.parent_mode == "auto_merge" else None
            results = await to_thread(self._swap_parents, results, identity, ratio)
        if options.neighbour_window > 0 and results:
            results = await to_thread(self._expand_neighbours, results, identity, options.neighbour_window)
        results = apply_budget(results, lambda r: r.chunk.text, options.max_context_tokens)
        if options.use_lost_in_the_middle_reordering:
            results = lost_in_the_middle(results)
        return results

    def _swap_parents(
        self, results: list[SearchResult], identity: Identity, auto_merge: float | None = None
    ) -> list[SearchResult]:
        """Children → their parents, the best-ranked occurrence keeping its place.

        With *auto_merge* (a fraction), a parent replaces its children only when at least that share of
        its children were hit; otherwise the children stay. If any parent cannot be found (or is not
        visible to *identity*), the results are returned unchanged with a warning (seed 000).
        """
        wanted = list(dict.fromkeys(r.chunk.parent_id for r in results if r.chunk.parent_id))
        found = {p.id: p for p in self.store.get_parents(wanted, identity)}  # type: ignore[attr-defined]
        if any(pid not in found for pid in wanted):
            log.warning(
                "parent_lookup_failed: %d of %d parents missing; returning the matched chunks",
                len(set(wanted) - set(found)),
                len(wanted),
            )
            return results
        matched: dict[str, list[str]] = {}
        for r in results:
            if r.chunk.parent_id is not None:
                matched.setdefault(r.chunk.parent_id, []).append(r.chunk.id)
        merge = {
            pid
            for pid, hits in matched.items()
            if auto_merge is None or len(set(hits)) >= auto_merge * max(1, len(found[pid].metadata.get("children", [])))
        }
        out: list[SearchResult] = []
        emitted: set[str] = set()
        for r in results:
            pid = r.chunk.parent_id
            if pid is None or pid not in merge:
                out.append(r)
            elif pid not in emitted:
                emitted.add(pid)
                parent = replace(found[pid], metadata={**found[pid].metadata, "matched_children": matched[pid]})
                out.append(replace(r, chunk=parent))
        return out

    def _expand_neighbours(self, results: list[SearchResult], identity: Identity, window: int) -> list[SearchResult]:
        """Each hit grows by up to *window* chunks on each side (prev/next links, fetched under the
        caller's identity); overlapping or adjacent hits merge into one passage without repeated text."""
        get_chunks = self.store.get_chunks  # type: ignore[attr-defined]
        known: dict[str, Chunk] = {r.chunk.id: r.chunk for r in results}
        backward = [r.chunk.prev_id for r in results]
        forward = [r.chunk.next_id for r in results]
        for _ in range(window):
            wanted = [cid for cid in backward + forward if cid and cid not in known]
            for chunk in get_chunks(wanted, identity) if wanted else []:
                known[chunk.id] = chunk
            backward = [known[c].prev_id if c in known else None for c in backward if c]
            forward = [known[c].next_id if c in known else None for c in forward if c]
        rank = {r.chunk.id: i for i, r in enumerate(results)}
        members = list(results) + [SearchResult(c, float("-inf")) for cid, c in known.items() if cid not in rank]
        out: list[tuple[int, SearchResult]] = []
        for passage in merge_adjacent(members):
            hits = [r for r in passage.results if r.chunk.id in rank]
            if not hits:
                continue
            best = min(hits, key=lambda r: rank[r.chunk.id])
            chunk = replace(
                best.chunk,
                text=passage.text,
                metadata={**best.chunk.metadata, "passage_chunks": list(passage.chunk_ids)},
            )
            out.append((rank[best.chunk.id], replace(best, chunk=chunk)))
        return [r for _, r in sorted(out, key=lambda pair: pair[0])]

    def _vectors(self, results: Sequence[SearchResult]) -> Matrix:
        import numpy as np

        stored = self.store.get_vectors([r.chunk_id for r in results])  # type: ignore[attr-defined]
        missing = [r.chunk.text_for_embedding for r in results if r.chunk_id not in stored]
        fresh = iter(self.embedder.embed_documents(missing)) if missing else iter(())
        return np.stack([stored[r.chunk_id] if r.chunk_id in stored else next(fresh) for r in results])

    async def _arm(
        self,
        arm: str,
        query: str,
        depth: int,
        options: RetrievalOptions,
        identity: Identity,
        flt: Filter | None,
        query_vector: list[Vector],
    ) -> list[Hit]:
        if arm == "dense":
            vector = await to_thread(self.embedder.embed_query, query)
            query_vector.append(vector)
            return await to_thread(
                self.store.search_dense,
                vector,
                depth,
                identity=identity,
                metadata_filter=flt,
                min_score=options.min_score,
            )
        if not isinstance(self.store, KeywordSearch):
            raise ConfigError(
                f"{type(self.store).__name__} has no keyword search; use a store with BM25 "
                "(MemoryStore, SqliteStore) or set use_hybrid_search=False"
            )
        return await to_thread(self.store.search_keyword, query, depth, identity=identity, metadata_filter=flt)


def _fuse(hits_per_arm: dict[str, list[Hit]], ensemble: EnsembleOptions) -> Iterator[SearchResult]:
    chunks: dict[str, Chunk] = {}
    rankings: dict[str, Sequence[tuple[str, float]]] = {}
    for arm, hits in hits_per_arm.items():
        rankings[arm] = [(h.chunk.id, h.score) for h in hits]
        for h in hits:
            chunks.setdefault(h.chunk.id, h.chunk)
    weights = {arm: ensemble.weight(arm) for arm in hits_per_arm}
    fused: list[Fused]
    if ensemble.method == "rrf":
        fused = rrf(rankings, k=ensemble.rrf_k, weights=weights)
    else:
        fused = weighted_score(rankings, weights=weights, normalization=ensemble.normalization)
    return (SearchResult(chunks[f.chunk_id], f.score, arms=f.arms, fusion=ensemble.method) for f in fused)
