"""Permission-aware caches (seed 000 "Search Result Caching", seed 003 §18).

Layers: embeddings (:class:`CachedEmbedder`), retrieval results (:class:`CachedRetriever`), reranks
(:class:`CachedReranker`) and answers (:class:`AnswerCache`), over one :class:`TieredCache` — an
in-process LRU/TTL L1 with an optional Redis L2 (:class:`~ragwright.cache.redis.RedisCache`, extra
``[redis]``) and single-flight stampede protection. Every key that derives from retrieval holds the
index version and the caller's ACL signature (:mod:`ragwright.cache.keys`).
"""

from ragwright.cache.answers import AnswerCache, answer_cacheable
from ragwright.cache.embeddings import CachedEmbedder, embedding_cache_bypassed
from ragwright.cache.keys import CacheScope, cache_scope, current_scope, make_key
from ragwright.cache.memory import MISS, MemoryCache
from ragwright.cache.options import CacheOptions
from ragwright.cache.rerank import CachedReranker
from ragwright.cache.retrieval import CachedRetriever, results_cacheable
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
    "cache_scope",
    "current_scope",
    "embedding_cache_bypassed",
    "make_key",
    "results_cacheable",
]
