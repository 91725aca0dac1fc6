"""The retrieval chain: the caller's security filter and the metadata filter inside every arm
(before top-k), the arms (dense, BM25) run concurrently, fused client-side with RRF or weighted score
fusion, then specification filters in-process, then post-processing.

One call is a :class:`~ragwright.retrieve.request.RetrievalRequest` (query, identity, options,
conversation history, trace, cache scope); :meth:`Retriever.run` returns a
:class:`~ragwright.model.outcome.RetrievalOutcome`. The embedder and reranker serve the call bound to
the request's cache scope; parents and neighbours come through the store's
:class:`~ragwright.stores.base.ChunkLookup` (security-filtered inside every lookup).

``min_score`` is a floor on the dense arm's cosine; BM25 hits bypass it, and fused RRF
scores are ordinal and never filtered by it. Every result carries its per-arm evidence; the path taken
is logged as ``retrieval_path`` (debug).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from ragwright import telemetry
from ragwright._sync import to_thread
from ragwright.cache.keys import bind_scope
from ragwright.errors import ConfigError
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.model.outcome import RetrievalOutcome
from ragwright.model.results import SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel, Message
from ragwright.postprocess.chain import Tools, postprocess
from ragwright.postprocess.rerank import Reranker
from ragwright.retrieve.combine import BranchFusion
from ragwright.retrieve.dispatch import choose_path
from ragwright.retrieve.options import EnsembleOptions, RetrievalOptions
from ragwright.retrieve.phrases import apply_phrases, quoted_phrases
from ragwright.retrieve.request import RetrievalRequest, StageBase
from ragwright.retrieve.transforms.options import TransformOptions
from ragwright.retrieve.transforms.plan import Branch, QueryPlan, RetrievalTrace, build_plan, fuse_branches
from ragwright.stores.base import ChunkLookup, Hit, HybridSearch, KeywordSearch, SparseSearch, VectorSearch

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragwright.models.sparse.base import SparseEncoder

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


@dataclass(frozen=True, slots=True)
class _Call:
    """One run of the pipeline: the request and the models bound to its cache scope."""

    request: RetrievalRequest
    embedder: Embedder
    reranker: Reranker | None

    @property
    def options(self) -> RetrievalOptions:
        return self.request.options

    @property
    def identity(self) -> Identity:
        return self.request.identity


class Retriever(StageBase):
    """Dense, keyword and hybrid retrieval over a store, under the caller's identity."""

    def __init__(
        self,
        store: VectorSearch,
        embedder: Embedder,
        reranker: Reranker | None = None,
        *,
        llm: ChatModel | None = None,
        transforms: TransformOptions | None = None,
        sparse_encoder: SparseEncoder | None = None,
        lookup: ChunkLookup | None = None,
    ) -> None:
        """*llm* serves the configured query *transforms* (rewrite, multi-query, HyDE, self-query);
        without one, or with no transform configured, retrieval never calls a model. *lookup* reads
        parents, neighbours and stored vectors (by default the store itself, when it offers them)."""
        if transforms is not None and not isinstance(transforms, TransformOptions):
            raise ConfigError.invalid("transforms", transforms, "a TransformOptions or None")
        if lookup is not None and not isinstance(lookup, ChunkLookup):
            raise ConfigError.invalid("lookup", lookup, "a ChunkLookup (get_chunks, get_parents, get_vectors) or None")
        self.store, self.embedder, self.reranker = store, embedder, reranker
        self._lookup = lookup
        self.llm = llm
        self.transforms = transforms if transforms is not None else TransformOptions()
        self.sparse_encoder = sparse_encoder  # the sparse arm runs only with one (and a SparseSearch store)

    @property
    def lookup(self) -> ChunkLookup | None:
        """What reads parents, neighbours and stored vectors: the one given, else the current store
        when it offers :class:`ChunkLookup` (so a reindex that swaps ``store`` swaps this too)."""
        return self._lookup if self._lookup is not None else _lookup_of(self.store)

    async def retrieve(  # the older call shape, with history and trace
        self,
        query: str,
        options: RetrievalOptions,
        identity: Identity,
        *,
        history: Sequence[Message | Mapping[str, Any]] = (),
        trace: RetrievalTrace | None = None,
    ) -> list[SearchResult]:
        """Ranked results for *query* (:meth:`run` for a request of these)."""
        request = RetrievalRequest.of(query, options, identity, history=history, trace=trace)
        return (await self.run(request)).as_results()

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        """Ranked results for the request; its identity's security filter is applied inside every arm.

        With an ``llm`` and configured transforms, the call's switches (``use_query_rewrite``,
        ``use_multi_query``, ``use_self_query``, ``use_hyde``) decide which run; every branch of the
        plan runs the arms and the rankings are fused by RRF, the original query weighted highest.
        The request's history feeds conversation condensing; its trace receives what ran, what fell
        back and which self-query filters were relaxed. Cost: HyDE runs per branch, so multi-query with
        HyDE makes ``(variant_count + 1) × hypothesis_count`` chat calls (12 with the defaults) per query.
        """
        options = request.options
        fresh = request.fresh_embeddings or not options.use_cache_embedding
        call = _Call(
            request,
            bind_scope(self.embedder, request.cache, fresh=fresh),
            bind_scope(self.reranker, request.cache) if self.reranker is not None else None,
        )
        with telemetry.span("ragnet.retrieve", {"retrieval.top_k": options.top_k}) as span:
            start = time.perf_counter()
            results = await self._retrieve(call)
            path = "native" if any(r.fusion == "native" for r in results) else "client"
            span.set_attribute("retrieval.hybrid.path", path)
            span.set_attribute("retrieval.arms", list(self._active_arms(options)))  # the arms that ran
            span.set_attribute("retrieval.result_count", len(results))
            telemetry.record_stage("retrieve", "retrieve", time.perf_counter() - start, {"retrieval.hybrid.path": path})
            return RetrievalOutcome(tuple(results))

    async def _retrieve(self, call: _Call) -> list[SearchResult]:
        request, options = call.request, call.options
        query = request.query
        if not isinstance(query, str) or not query.strip():
            raise ConfigError.invalid("query", query, "a non-empty question or search text")
        warn_inactive(options.inactive_requests())
        trace = request.trace if request.trace is not None else RetrievalTrace(query)
        plan = await build_plan(
            query,
            options,
            llm=self.llm,
            config=self.transforms,
            embedder=call.embedder,
            history=request.history,
            trace=trace,
        )
        if plan.skip:
            log.debug("retrieval_path: skipped (needs_retrieval=false) %s", trace.summary())
            return []
        base: Filter | None = options.metadata_filter  # type: ignore[assignment]  # normalised by the options
        pool, spec = self._pool(options), options.filter
        query_vector: list[Vector] = []
        results: list[SearchResult] = []
        for flt, relaxed in plan.filter_steps(base):
            if relaxed:
                trace.relaxed_filters = list(relaxed)
                log.info("self_query_relaxed: dropped %s after too few results", ",".join(relaxed))
            query_vector.clear()
            candidates = plan.boost(await self._candidates(call, plan, flt, pool, query_vector))
            results = list(islice((r for r in candidates if spec is None or spec.is_satisfied_by(r)), pool))
            if plan.enough(len(results)):
                break
        log.debug(
            "retrieval_path: %s arms=%s %s",
            "native" if any(r.fusion == "native" for r in results) else "client",
            ",".join(self._active_arms(options)),
            trace.summary(),
        )
        return await self._postprocess(call, plan.rerank_query, results, query_vector)

    async def _candidates(
        self, call: _Call, plan: QueryPlan, flt: Filter | None, pool: int, query_vector: list[Vector]
    ) -> list[SearchResult]:
        """Every branch runs the arms (keyword-only queries just BM25); several rankings fuse by RRF.
        A store with native hybrid search serves the call itself when nothing would be lost (dispatch.py)."""
        options = call.options
        arms = self._active_arms(options)
        depth = pool if len(arms) == 1 and plan.single else max(pool, options.arm_candidates)
        path = choose_path(
            self.store,
            options,
            sparse_active="sparse" in arms,
            transforms_active=not plan.single or bool(plan.keyword_queries),
        )
        log.debug("hybrid_path: %s (%s)", path.path, path.reason)
        if path.native:
            return await self._native(call, plan.branches[0], depth, flt, query_vector)
        # One plain branch, no specification filter, no soft boost: only the first *pool* results are read
        # (the rest of the fused candidates are never made results, nor their chunks decoded).
        limit = pool if plan.single and options.filter is None and not plan.soft else None
        ranked = await asyncio.gather(
            *(
                self._branch(call, b, arms, depth, flt, query_vector if i == 0 else [], limit)
                for i, b in enumerate(plan.branches)
            ),
            *(self._branch(call, Branch(t, w, "keywords"), ("bm25",), depth, flt, []) for t, w in plan.keyword_queries),
        )
        if plan.single:
            return ranked[0]
        weights = [b.weight for b in plan.branches] + [w for _, w in plan.keyword_queries]
        return fuse_branches(ranked, weights, (options.ensemble or EnsembleOptions()).rrf_k)

    async def _branch(
        self,
        call: _Call,
        branch: Branch,
        arms: Sequence[str],
        depth: int,
        flt: Filter | None,
        query_vector: list[Vector],
        limit: int | None = None,
    ) -> list[SearchResult]:
        """The branch's arms, fused (and fed back); *limit*: how many of its results the caller reads."""
        options = call.options
        phrases = quoted_phrases(branch.text)
        if phrases:
            limit = None  # the phrase pass reorders every result
        vectors: list[Vector] = []
        tasks = [self._arm(call, arm, branch.text, depth, flt, vectors, branch.vector) for arm in arms]
        hits_per_arm = dict(zip(arms, await asyncio.gather(*tasks), strict=True))
        if branch.vector is None and vectors:
            branch.vector = vectors[0]  # reused when self-query filters are relaxed
        query_vector.extend(vectors)
        fusion = BranchFusion(self.store, self.lookup)
        fb = options.feedback
        if fb is not None and fb.rocchio and fb.rocchio_scope == "candidates" and len(hits_per_arm) > 1:
            await fusion.prefetch(hits_per_arm)  # one read for the completions and the feedback
        vector = vectors[0] if vectors else None
        first_limit = limit if fb is None or limit is None else max(limit, fb.documents)  # feedback reads the top
        results = await fusion.combine(hits_per_arm, depth, options, vector, first_limit)
        if fb is not None and results:

            def search_dense(moved: Vector) -> Awaitable[list[Hit]]:
                return self._arm(call, "dense", branch.text, depth, flt, [], moved)

            hits_per_arm, vector = await fusion.feedback(
                fb,
                branch.text,
                branch.vector,
                hits_per_arm,
                results,
                depth=depth,
                min_score=options.min_score,
                identity=call.identity,
                metadata_filter=flt,
                search_dense=search_dense,
            )
            results = await fusion.combine(hits_per_arm, depth, options, vector, limit)
        return await to_thread(apply_phrases, results, phrases) if phrases else results

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
        self, call: _Call, query: str, results: list[SearchResult], query_vector: list[Vector]
    ) -> list[SearchResult]:
        """The post-retrieval chain (:func:`ragwright.postprocess.chain.postprocess`), off the event loop."""
        tools = Tools(call.embedder, call.reranker, self.llm, self.lookup, type(self.store).__name__)
        return await to_thread(
            postprocess,
            query,
            results,
            call.options.postprocess,
            top_k=call.options.top_k,
            identity=call.identity,
            tools=tools,
            query_vector=query_vector[0] if query_vector else None,
        )

    async def _arm(
        self,
        call: _Call,
        arm: str,
        query: str,
        depth: int,
        flt: Filter | None,
        query_vector: list[Vector],
        vector: Vector | None = None,
    ) -> list[Hit]:
        options, identity = call.options, call.identity
        if arm == "dense":
            if vector is None:  # a HyDE branch brings its own vector (no query-embedding cache on that path)
                vector = await to_thread(call.embedder.embed_query, query)
            query_vector.append(vector)
            return await to_thread(
                self.store.search_dense,
                vector,
                depth,
                identity=identity,
                metadata_filter=flt,
                min_score=options.min_score,
            )
        if arm == "sparse":
            return await self._sparse(query, depth, options, identity, flt)
        if not isinstance(self.store, KeywordSearch):
            raise ConfigError(
                f"{type(self.store).__name__} has no keyword search; use a store with BM25 "
                "(MemoryStore, SqliteStore) or set use_hybrid_search=False"
            )
        return await to_thread(self.store.search_keyword, query, depth, identity=identity, metadata_filter=flt)

    def _active_arms(self, options: RetrievalOptions) -> tuple[str, ...]:
        """The call's arms, less the sparse arm when no encoder is configured or the store has none."""
        arms = options.arms
        if "sparse" in arms and (self.sparse_encoder is None or not isinstance(self.store, SparseSearch)):
            arms = tuple(a for a in arms if a != "sparse")
            if not arms:
                raise ConfigError(
                    "only the sparse arm is switched on, but no sparse encoder is configured (or the store has "
                    "no sparse search); configure one (Rag(sparse_encoder='splade')) or switch another arm on"
                )
        return arms

    async def _sparse(
        self, query: str, depth: int, options: RetrievalOptions, identity: Identity, flt: Filter | None
    ) -> list[Hit]:
        """The sparse arm on the raw query text; a failure degrades to the other arms (``sparse_failed``)."""
        assert self.sparse_encoder is not None and isinstance(self.store, SparseSearch)
        try:
            vector = await to_thread(self.sparse_encoder.encode_query, query)
            return await to_thread(
                self.store.search_sparse,
                vector,
                depth,
                identity=identity,
                metadata_filter=flt,
                min_score=options.min_score,
            )
        except Exception as exc:  # degrade, never break
            log.warning("sparse_failed: %s: %s; the other arms serve the query", type(exc).__name__, exc)
            return []

    async def _native(
        self, call: _Call, branch: Branch, depth: int, flt: Filter | None, query_vector: list[Vector]
    ) -> list[SearchResult]:
        """One native hybrid call; scores are on the store's fusion scale (``fusion="native"``)."""
        assert isinstance(self.store, HybridSearch)
        vector = branch.vector
        if vector is None:
            vector = await to_thread(call.embedder.embed_query, branch.text)
        query_vector.append(vector)
        hits = await to_thread(
            self.store.search_hybrid, branch.text, vector, depth, identity=call.identity, metadata_filter=flt
        )
        return [SearchResult(h.chunk, h.score, fusion="native") for h in hits]


def _lookup_of(store: object) -> ChunkLookup | None:
    return store if isinstance(store, ChunkLookup) else None
