"""Permission-aware caches.

Layers: embeddings (:class:`CachedEmbedder`), retrieval results (``CachedRetriever``, a retrieval
stage: :mod:`ragwright.retrieve.strategies.cached`, importable from here too), reranks
(:class:`CachedReranker`) and answers (:class:`AnswerCache`), over one :class:`TieredCache` — an
in-process LRU/TTL L1 with an optional Redis L2 (:class:`~ragwright.cache.redis.RedisCache`, extra
``[redis]``) and single-flight stampede protection. Every key that derives from retrieval holds the
index version and the caller's ACL signature (:mod:`ragwright.cache.keys`).
"""

from typing import Any

from ragwright.cache.answers import AnswerCache, answer_cacheable
from ragwright.cache.embeddings import CachedEmbedder
from ragwright.cache.keys import CacheScope, bind_scope, make_key
from ragwright.cache.memory import MISS, MemoryCache
from ragwright.cache.options import CacheOptions
from ragwright.cache.rerank import CachedReranker
from ragwright.cache.tiered import CacheStats, TieredCache

__all__ = [
    "MISS",
    "AnswerCache",
    "CacheOptions",
    "CacheScope",
    "CacheStats",
    "CachedEmbedder",
    "CachedReranker",
    "CachedRetriever",
    "MemoryCache",
    "TieredCache",
    "answer_cacheable",
    "bind_scope",
    "make_key",
    "results_cacheable",
]


def __getattr__(name: str) -> Any:
    """``CachedRetriever`` / ``results_cacheable`` live with the retrieval stages (they wrap the
    strategy stack); imported from there on first use, so this package stays below ``retrieve/``."""
    if name in ("CachedRetriever", "results_cacheable"):
        from ragwright.retrieve.strategies import cached

        return getattr(cached, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
