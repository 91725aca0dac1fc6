"""The embedding cache: an :class:`~ragwright.models.embedders.base.Embedder` that remembers vectors.

Passage vectors are keyed by the model and the text's content hash (an unchanged passage is never
embedded twice, whoever ingests it). Query vectors are keyed by the model, the text's hash and the
caller's ACL signature when a retrieval scope is active, so a hit never tells one user what another
asked (the timing of a hit is an observable). A vector is a pure function of (text, model): index
version, prompt and filters do not change it, so they are not in these keys.

A retrieval call binds the embedder to its scope (:meth:`CachedEmbedder.scoped`, through
:func:`~ragwright.cache.keys.bind_scope`): the bound copy keys query vectors by the caller, and with
``fresh=True`` (``RetrievalOptions.use_cache_embedding=False``, HyDE mode: hypotheses are sampled anew
each call) embeds afresh and stores nothing. Unbound, it caches unscoped.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.cache.codec import VectorCodec
from ragwright.cache.keys import CacheScope, make_key
from ragwright.cache.memory import MISS
from ragwright.cache.tiered import TieredCache
from ragwright.models.embedders.base import Embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]


def _finite(vector: Any) -> bool:
    import numpy as np

    return bool(np.isfinite(vector).all())


class CachedEmbedder:
    """Wraps *inner*; same name, dimension and vectors, served from *cache* when possible."""

    def __init__(self, inner: Embedder, cache: TieredCache, *, ttl_s: float = 1800.0, namespace: str = "rw") -> None:
        self.inner, self.cache, self.ttl_s, self.namespace = inner, cache, ttl_s, namespace
        self._codec = VectorCodec()
        self.scope: CacheScope | None = None
        self.fresh = False

    def scoped(self, scope: CacheScope | None, *, fresh: bool = False) -> CachedEmbedder:
        """A copy serving one retrieval call: query keys under *scope*; with *fresh*, no cache at all."""
        bound = copy.copy(self)
        bound.scope, bound.fresh = scope, fresh
        return bound

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _key(self, kind: str, text: str, scoped: bool) -> str:
        scope = self.scope if scoped else None
        text_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return make_key(
            f"emb{kind}",
            namespace=self.namespace,
            index_version=None,
            identity=scope.identity if scope else None,
            parts={"model": self.inner.name, "text": text_hash},
        )

    def embed_query(self, text: str) -> Vector:
        if self.fresh:
            return self.inner.embed_query(text)
        value, _ = self.cache.get_or_create_sync(
            self._key("q", text, scoped=True),
            lambda: self.inner.embed_query(text),
            ttl_s=self.ttl_s,
            codec=self._codec,
            cacheable=_finite,
        )
        return value

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        if self.fresh or not texts:
            return self.inner.embed_documents(texts)
        keys = [self._key("d", t, scoped=False) for t in texts]
        looked = [self.cache.lookup(k, self._codec) for k in keys]
        found: list[Any] = [value for value, _ in looked]
        missing = [i for i, v in enumerate(found) if v is MISS]
        self.cache.stats.l1 += sum(1 for _, source in looked if source == "l1")
        self.cache.stats.l2 += sum(1 for _, source in looked if source == "l2")
        if missing:
            self.cache.stats.miss += len(missing)
            fresh = self.inner.embed_documents([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                found[i] = vector
                if _finite(vector):
                    self.cache.store(keys[i], vector, self.ttl_s, self._codec)
        return np.stack([np.asarray(v, dtype=np.float32) for v in found])
