"""The retrieval result cache (seed 000 ``ResultCacheBehavior``; seed 003 §18 ``CachedRetriever``).

Wraps a retriever (``async retrieve(query, options, identity)``). On a hit it skips everything below
it — embedding, search, reranking, strategies. The key holds the index version (read *before*
computing, so a result computed while an ingestion commits lands under the older, now unreachable
version), the caller's ACL signature, the models, the prompt version, the normalised query and every
option (filters included). Degraded results (a stage fell back) and results holding web content are
never stored. ``use_cache_result=False`` skips the lookup; ``use_cache_embedding=False`` (and HyDE
mode) makes cached embedders below embed afresh. Which way a call went is recorded in
``extensions["cache"]`` (``l1``, ``l2``, ``miss``, ``shared``, ``bypass``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import Protocol

from ragwright._sync import to_thread
from ragwright.cache.codec import ResultsCodec
from ragwright.cache.embeddings import embedding_cache_bypassed
from ragwright.cache.keys import CacheScope, Uncacheable, cache_scope, canonical, digest, make_key, normalize_query
from ragwright.cache.options import CacheOptions
from ragwright.cache.tiered import TieredCache
from ragwright.model.extensions import RetrievalResults, annotate
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.options import RetrievalOptions

log = logging.getLogger(__name__)

_PER_CALL_SWITCHES = frozenset({"use_cache_result", "use_cache_embedding"})


class _Retriever(Protocol):
    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]: ...


def results_cacheable(results: RetrievalResults) -> bool:
    """Only clean results are stored: no stage fell back and nothing came from the web."""
    return not results.degraded and not any(r.chunk.metadata.get("origin") == "web" for r in results)


class CachedRetriever:
    """A permission-aware, version-keyed result cache around *inner*."""

    def __init__(
        self,
        inner: _Retriever,
        cache: TieredCache,
        *,
        index_version: Callable[[], int],
        models: Mapping[str, str],
        options: CacheOptions | None = None,
        hyde_active: Callable[[RetrievalOptions], bool] | None = None,
    ) -> None:
        self.inner, self.cache, self.index_version = inner, cache, index_version
        self.models = dict(sorted(models.items()))
        self.options = options or CacheOptions()
        self.hyde_active = hyde_active
        self._codec = ResultsCodec()

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]:
        version = await to_thread(self.index_version)
        try:
            opts = canonical(options, skip=_PER_CALL_SWITCHES)
            filters = digest([opts.get("metadata_filter"), opts.get("filter")])
        except Uncacheable as exc:
            log.debug("cache_bypass: %s", exc)
            opts, filters = None, ""
        scope = CacheScope(version, identity, tuple(self.models.items()), self.options.prompt_version, filters)
        bypass_embeddings = not options.use_cache_embedding or bool(self.hyde_active and self.hyde_active(options))
        with cache_scope(scope), embedding_cache_bypassed() if bypass_embeddings else nullcontext():
            if opts is None or not options.use_cache_result:
                return annotate(await self.inner.retrieve(query, options, identity), cache="bypass")
            key = make_key(
                "result",
                namespace=self.options.namespace,
                index_version=version,
                identity=identity,
                parts={
                    "query": normalize_query(query),
                    "options": opts,
                    "models": self.models,
                    "prompt_version": self.options.prompt_version,
                },
            )

            async def compute() -> RetrievalResults:
                return annotate(await self.inner.retrieve(query, options, identity))

            value, source = await self.cache.get_or_create(
                key, compute, ttl_s=self.options.result_ttl_s, codec=self._codec, cacheable=results_cacheable
            )
        return RetrievalResults(value, {**value.extensions, "cache": source})
