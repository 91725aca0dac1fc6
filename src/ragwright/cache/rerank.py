"""The rerank cache: a reranker that remembers scores for (query, passages).

Keyed by the reranker's name, the query and the ordered hashes of the passages, plus the scope of the
retrieval call it serves (index version, the caller's ACL signature, prompt version, filters) when a
result cache bound it to one (:meth:`CachedReranker.scoped`). Failures and malformed score lists are never cached.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Sequence
from typing import Protocol

from ragwright.cache.codec import ScoresCodec
from ragwright.cache.keys import CacheScope, make_key
from ragwright.cache.tiered import TieredCache


class _Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class CachedReranker:
    """Wraps *inner* (a :class:`~ragwright.postprocess.rerank.Reranker`); same name and scores."""

    def __init__(self, inner: _Reranker, cache: TieredCache, *, ttl_s: float = 1800.0, namespace: str = "rw") -> None:
        self.inner, self.cache, self.ttl_s, self.namespace = inner, cache, ttl_s, namespace
        self._codec = ScoresCodec()
        self.scope: CacheScope | None = None

    def scoped(self, scope: CacheScope | None, *, fresh: bool = False) -> CachedReranker:
        """A copy serving one retrieval call, keyed under *scope* (*fresh* concerns embeddings only)."""
        bound = copy.copy(self)
        bound.scope = scope
        return bound

    @property
    def name(self) -> str:
        return self.inner.name

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        scope = self.scope
        key = make_key(
            "rerank",
            namespace=self.namespace,
            index_version=scope.index_version if scope else None,
            identity=scope.identity if scope else None,
            parts={
                "model": self.inner.name,
                "query": query,
                "passages": [hashlib.sha256(p.encode("utf-8")).hexdigest() for p in passages],
                "prompt_version": scope.prompt_version if scope else "",
                "filters": scope.filters if scope else "",
            },
        )

        def valid(scores: list[float]) -> bool:
            return len(scores) == len(passages) and all(
                isinstance(s, int | float) and math.isfinite(float(s)) for s in scores
            )

        value, _ = self.cache.get_or_create_sync(
            key, lambda: list(self.inner.score(query, passages)), ttl_s=self.ttl_s, codec=self._codec, cacheable=valid
        )
        return list(value)
