"""The post-retrieval chain, in this order: redundancy → MMR → rerank → trim to ``top_k`` →
parents / auto-merge → neighbours → sentence windows → compression → token budget →
lost-in-the-middle.

One function over the ranked results, the call's :class:`~ragwright.postprocess.options.PostprocessOptions`
and what it reads with (:class:`Tools`: the embedder and reranker bound to the call, the chat model
for LLM compression, the chunk lookup for stored vectors, parents and neighbours — every lookup under
the caller's identity). Blocking (vectors, models): the pipeline runs it off the event loop. Each
optional stage degrades as its module says (``rerank_failed``, ``parent_lookup_failed``,
``expansion_unavailable``, ``compression_fallback``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel
from ragwright.postprocess.budget import apply_budget
from ragwright.postprocess.compress import EmbeddingCompressor, LlmCompressor, apply_windows
from ragwright.postprocess.diversity import mmr, redundancy_filter
from ragwright.postprocess.expand import expand
from ragwright.postprocess.options import PostprocessOptions
from ragwright.postprocess.reorder import lost_in_the_middle
from ragwright.postprocess.rerank import Reranker, rerank
from ragwright.stores.base import ChunkLookup

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

__all__ = ["Tools", "postprocess"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Tools:
    """What the chain reads with, for one call."""

    embedder: Embedder
    reranker: Reranker | None = None
    llm: ChatModel | None = None
    lookup: ChunkLookup | None = None
    source: str = "the store"  # named in expansion_unavailable


def postprocess(
    query: str,
    results: list[SearchResult],
    options: PostprocessOptions,
    *,
    top_k: int,
    identity: Identity,
    tools: Tools,
    query_vector: Vector | None = None,
) -> list[SearchResult]:
    """*results* (ranked, visible to *identity*) through the configured stages; *query_vector* is the
    dense arm's (embedded afresh for MMR when there is none)."""
    reranking = tools.reranker is not None and options.use_reranking
    if (options.use_redundancy_filter or options.use_mmr) and results:
        vectors = _vectors(tools, results)
        if options.use_redundancy_filter:
            keep = redundancy_filter(vectors, options.redundancy_threshold)
            results, vectors = [results[i] for i in keep], vectors[keep]
        if options.use_mmr:
            qv = query_vector if query_vector is not None else tools.embedder.embed_query(query)
            picked = mmr(qv, vectors, len(results) if reranking else top_k, options.mmr_lambda)
            results = [results[i] for i in picked]
    if reranking and tools.reranker is not None:
        results = rerank(tools.reranker, query, results, min_score=options.rerank_min_score)
    results = _expand(tools, results[:top_k], options, identity)
    if options.use_sentence_window:
        results = apply_windows(results)
    if options.use_compression and results:
        results = _compress(tools, query, results, options, query_vector)
    results = apply_budget(results, lambda r: r.compressed_text or r.chunk.text, options.max_context_tokens)
    if options.use_lost_in_the_middle_reordering:
        results = lost_in_the_middle(results)
    return results


def _expand(
    tools: Tools, results: list[SearchResult], options: PostprocessOptions, identity: Identity
) -> list[SearchResult]:
    """Parents / auto-merge and neighbours (:mod:`ragwright.postprocess.expand`) through the lookup."""
    parents = options.parent_mode if options.use_parent_document else "off"
    wanted = (parents != "off" and any(r.chunk.parent_id for r in results)) or (
        options.neighbour_window > 0 and bool(results)
    )
    if not wanted:
        return results
    if tools.lookup is None:
        log.warning(
            "expansion_unavailable: %s offers no chunk lookup (get_chunks/get_parents); returning the matched chunks",
            tools.source,
        )
        return results
    return expand(
        tools.lookup,
        results,
        identity,
        parents=parents,
        auto_merge_ratio=options.auto_merge_ratio,
        neighbour_window=options.neighbour_window,
    )


def _compress(
    tools: Tools, query: str, results: list[SearchResult], options: PostprocessOptions, query_vector: Vector | None
) -> list[SearchResult]:
    """Contextual compression: an LLM's verbatim extraction when asked for and configured, else by
    embedding similarity; the full passage whenever compression cannot help."""
    if options.compression == "llm" and tools.llm is not None:
        return LlmCompressor(tools.llm).compress(query, results)
    if options.compression == "llm":
        log.warning("compression_fallback: compression='llm' needs a chat model; using embedding similarity")
    compressor = EmbeddingCompressor(
        tools.embedder,
        min_similarity=options.compression_min_similarity,
        max_sentences=options.compression_max_sentences,
    )
    return compressor.compress(query, results, query_vector)


def _vectors(tools: Tools, results: Sequence[SearchResult]) -> Matrix:
    """Stored vectors of the results (ids the caller already retrieved), embedded afresh where missing."""
    import numpy as np

    stored = tools.lookup.get_vectors([r.chunk_id for r in results]) if tools.lookup is not None else {}
    missing = [r.chunk.text_for_embedding for r in results if r.chunk_id not in stored]
    fresh = iter(tools.embedder.embed_documents(missing)) if missing else iter(())
    return np.stack([stored[r.chunk_id] if r.chunk_id in stored else next(fresh) for r in results])
