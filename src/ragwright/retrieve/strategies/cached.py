"""The retrieval result cache.

A retrieval stage (:class:`~ragwright.retrieve.request.RetrievalStage`) around the strategy stack.
On a hit it skips everything below it — embedding, search, reranking, strategies. The key holds the
index version (read *before* computing, so a result computed while an ingestion commits lands under
the older, now unreachable version), the caller's ACL signature, the models, the prompt version, the
normalised query and every option (filters included). Degraded results (a stage fell back) and
results holding web content are never stored. ``use_cache_result=False`` skips the lookup. The call's
cache scope (index version, ACL signature, models, prompt version, filters) goes down on the request
(``RetrievalRequest.cache``), where the cached embedders and rerankers below read it;
``use_cache_embedding=False`` (and HyDE mode) marks the request ``fresh_embeddings``. Which way a
call went is recorded in ``outcome.cache`` (``l1``, ``l2``, ``miss``, ``shared``, ``bypass``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

from ragwright._sync import to_thread
from ragwright.cache.codec import ResultsCodec
from ragwright.cache.keys import CacheScope, Uncacheable, canonical, digest, make_key, normalize_query
from ragwright.cache.options import CacheOptions
from ragwright.cache.tiered import TieredCache
from ragwright.model.outcome import RetrievalOutcome
from ragwright.retrieve.options import RetrievalOptions
from ragwright.retrieve.request import RetrievalRequest, RetrievalStage, RetrieverLike, StageBase, as_stage

log = logging.getLogger(__name__)

_PER_CALL_SWITCHES = frozenset({"use_cache_result", "use_cache_embedding"})


def results_cacheable(outcome: RetrievalOutcome) -> bool:
    """Only clean results are stored: no stage fell back and nothing came from the web."""
    return not outcome.is_degraded and not any(r.chunk.metadata.get("origin") == "web" for r in outcome.results)


class CachedRetriever(StageBase):
    """A permission-aware, version-keyed result cache around *inner*."""

    def __init__(
        self,
        inner: RetrievalStage | RetrieverLike,
        cache: TieredCache,
        *,
        index_version: Callable[[], int],
        models: Mapping[str, str],
        options: CacheOptions | None = None,
        hyde_active: Callable[[RetrievalOptions], bool] | None = None,
    ) -> None:
        self.inner, self.cache, self.index_version = as_stage(inner), cache, index_version
        self.models = dict(sorted(models.items()))
        self.options = options or CacheOptions()
        self.hyde_active = hyde_active
        self._codec = ResultsCodec()

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        options, identity = request.options, request.identity
        version = await to_thread(self.index_version)
        try:
            # under the flat names (the parts' layout is not part of the key), less the per-call switches
            opts = canonical({k: v for k, v in options.flat().items() if k not in _PER_CALL_SWITCHES})
            filters = digest([opts.get("metadata_filter"), opts.get("filter")])
        except Uncacheable as exc:
            log.debug("cache_bypass: %s", exc)
            opts, filters = None, ""
        scope = CacheScope(version, identity, tuple(self.models.items()), self.options.prompt_version, filters)
        fresh = not options.use_cache_embedding or bool(self.hyde_active and self.hyde_active(options))
        inner = replace(request, cache=scope, fresh_embeddings=request.fresh_embeddings or fresh)
        if opts is None or not options.use_cache_result:
            return replace(await self.inner.run(inner), cache="bypass")
        key = make_key(
            "result",
            namespace=self.options.namespace,
            index_version=version,
            identity=identity,
            parts={
                "query": normalize_query(request.query),
                "options": opts,
                "models": self.models,
                "prompt_version": self.options.prompt_version,
            },
        )

        async def compute() -> RetrievalOutcome:
            return await self.inner.run(inner)

        value, source = await self.cache.get_or_create(
            key, compute, ttl_s=self.options.result_ttl_s, codec=self._codec, cacheable=results_cacheable
        )
        return replace(value, cache=source)
