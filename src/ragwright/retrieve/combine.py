"""One branch's arms made into one ranking: fusion with exact completions, and the feedback pass.

:class:`BranchFusion` serves one branch of one retrieval call (:mod:`ragwright.retrieve.pipeline`). It
keeps the stored vectors it reads (a chunk's vector is read once per branch, whoever needs it first:
the dense completions of convex fusion, or Rocchio feedback), fuses the arms' hits
(:func:`~ragwright.retrieve.arms.fuse_hits`) and runs pseudo-relevance feedback
(:mod:`~ragwright.retrieve.feedback`): Rocchio's moved vector re-scores the first pass's candidates
(``rocchio_scope="candidates"``, the default) or searches the index again (``"index"``), RM3 re-runs the
keyword arm. Every chunk it touches came from the caller's own filtered arms. A failing completion or
feedback pass degrades (logged), never breaks the query.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from ragwright._sync import to_thread
from ragwright.index.analyzers import get_analyzer
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.results import ArmHit, SearchResult
from ragwright.retrieve.arms import dense_completions, fuse_hits, missing_from, rescore
from ragwright.retrieve.feedback import rm3_query, rocchio
from ragwright.retrieve.fusion import Scale
from ragwright.retrieve.options import EnsembleOptions, FeedbackOptions, RetrievalOptions
from ragwright.stores.base import ChunkLookup, Hit, KeywordSearch, ScoreScale, VectorSearch

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

__all__ = ["BranchFusion"]

#: The dense arm again, with another query vector (the ``"index"`` scope of Rocchio feedback).
DenseSearch = Callable[["Vector"], Awaitable[list[Hit]]]


class BranchFusion:
    """Fusion and feedback for one branch, over *store* (its score scale, its keyword arm) and *lookup*
    (stored vectors); see the module docstring."""

    def __init__(self, store: VectorSearch, lookup: ChunkLookup | None) -> None:
        self.store, self.lookup = store, lookup
        self.stored: dict[str, Vector] = {}  # stored vectors read for this branch, shared by its passes

    def _read(self, ids: Sequence[str]) -> None:
        """Add the stored vectors of *ids* not yet read (one read for all of them)."""
        missing = [cid for cid in ids if cid not in self.stored]
        if missing and self.lookup is not None:
            self.stored.update(self.lookup.get_vectors(missing))

    async def prefetch(self, hits_per_arm: dict[str, list[Hit]]) -> None:
        """The stored vectors of every candidate, in one read (before the first fusion, when Rocchio on the
        candidates will need them all); a failure leaves them to be read where they are needed."""
        if self.lookup is None or "dense" not in hits_per_arm:
            return
        ids = list(dict.fromkeys(h.chunk_id for hits in hits_per_arm.values() for h in hits))
        try:
            await to_thread(self._read, ids)
        except Exception as exc:  # degrade: the completions and the feedback read what they need
            log.debug("vector_prefetch_failed: %s: %s", type(exc).__name__, exc)

    async def combine(
        self,
        hits_per_arm: dict[str, list[Hit]],
        depth: int,
        options: RetrievalOptions,
        vector: Vector | None,
        limit: int | None = None,
    ) -> list[SearchResult]:
        """One arm's hits as results, or several arms fused (convex fusion gets the exact cosine of the
        chunks the dense arm did not return); only the best *limit* when given (the rest are never read)."""
        if len(hits_per_arm) == 1:
            ((arm, hits),) = hits_per_arm.items()
            kept = hits if limit is None else hits[:limit]
            return [SearchResult(h.chunk, h.score, arms={arm: ArmHit(rank, h.score)}) for rank, h in enumerate(kept, 1)]
        ensemble = options.ensemble or EnsembleOptions()
        completions: dict[str, dict[str, float]] = {}
        if ensemble.method == "convex" and "dense" in hits_per_arm and vector is not None:
            completions["dense"] = await to_thread(self._dense_completions, vector, hits_per_arm)
        return fuse_hits(
            hits_per_arm, ensemble, scales=self.scales(), completions=completions, depth=depth, limit=limit
        )

    def scales(self) -> dict[str, Scale]:
        """How convex fusion reads each arm: the dense arm's cosine as it is (unless the store's scores
        are opaque), keyword and sparse scores relative to the query's best."""
        dense: Scale = "raw" if self.store.score_scale == ScoreScale.SIMILARITY else "max"
        return {"dense": dense, "bm25": "max", "sparse": "max"}

    def _dense_completions(self, vector: Vector, hits_per_arm: dict[str, list[Hit]]) -> dict[str, float]:
        """Exact cosines of the chunks only the other arms returned (already visible to the caller)."""
        wanted = missing_from("dense", hits_per_arm)
        if not wanted or self.lookup is None:
            return {}
        try:
            self._read(wanted)
            return dense_completions(vector, {cid: self.stored[cid] for cid in wanted if cid in self.stored})
        except Exception as exc:  # degrade: fusion reads the dense arm's floor instead
            log.warning("dense_completion_failed: %s: %s; fusing without exact cosines", type(exc).__name__, exc)
            return {}

    async def feedback(
        self,
        fb: FeedbackOptions,
        text: str,
        vector: Vector | None,
        hits_per_arm: dict[str, list[Hit]],
        results: list[SearchResult],
        *,
        depth: int,
        min_score: float,
        identity: Identity,
        metadata_filter: Filter | None,
        search_dense: DenseSearch,
    ) -> tuple[dict[str, list[Hit]], Vector | None]:
        """The second pass: RM3 on the keyword arm, Rocchio on the dense arm, learnt from the first pass's
        best results. Returns the arms' new hits and the dense query vector they used; a failure keeps
        the first pass (``feedback_failed``)."""
        top = [r.chunk for r in results[: fb.documents]]
        out = dict(hits_per_arm)
        moved = vector
        try:
            if fb.rocchio and "dense" in out and vector is not None and self.lookup is not None:
                if fb.rocchio_scope == "candidates":
                    pool = {h.chunk_id: h for hits in hits_per_arm.values() for h in hits}
                    await to_thread(self._read, list(pool))
                    moved = rocchio(vector, [self.stored[c.id] for c in top if c.id in self.stored], fb.rocchio_beta)
                    out["dense"] = rescore(moved, pool, self.stored, depth, min_score)
                else:
                    await to_thread(self._read, [c.id for c in top])
                    moved = rocchio(vector, [self.stored[c.id] for c in top if c.id in self.stored], fb.rocchio_beta)
                    out["dense"] = await search_dense(moved)
            if fb.rm3 and "bm25" in out and isinstance(self.store, KeywordSearch):
                analyzer = get_analyzer(self.store.keyword_analyzer)
                query = rm3_query(analyzer, text, top, terms=fb.terms, weight=fb.rm3_weight)
                out["bm25"] = await to_thread(
                    self.store.search_keyword, query, depth, identity=identity, metadata_filter=metadata_filter
                )
        except Exception as exc:  # degrade, never break
            log.warning("feedback_failed: %s: %s; the first pass serves the query", type(exc).__name__, exc)
            return hits_per_arm, vector
        return out, moved
