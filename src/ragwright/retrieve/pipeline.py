"""The retrieval chain. Today: dense search with the security and metadata filters inside the
store's search (before top-k), the ``min_score`` floor, then specification filters in-process.

Every result carries its evidence: the dense arm's rank and score.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.model.results import ArmHit, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.options import RetrievalOptions
from ragwright.stores.base import VectorSearch

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
    """Dense retrieval over a store, under the caller's identity."""

    def __init__(self, store: VectorSearch, embedder: Embedder) -> None:
        self.store, self.embedder = store, embedder

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]:
        if not isinstance(query, str) or not query.strip():
            raise ConfigError.invalid("query", query, "a non-empty question or search text")
        warn_inactive(options.inactive_requests())
        vector = await asyncio.to_thread(self.embedder.embed_query, query)
        hits = await asyncio.to_thread(
            self.store.search_dense,
            vector,
            options.top_k,
            identity=identity,
            metadata_filter=options.metadata_filter,  # type: ignore[arg-type]  # normalised by options
            min_score=options.min_score,
        )
        results = [
            SearchResult(h.chunk, h.score, arms={"dense": ArmHit(rank, h.score)})
            for rank, h in enumerate(hits, start=1)
        ]
        if options.filter is not None:
            results = [r for r in results if options.filter.is_satisfied_by(r)]
        return results[: options.top_k]
