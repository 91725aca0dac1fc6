"""Chunkers: a Document in, linked Chunks out.

* :class:`StructuralChunker` (default) — headings start chunks; tables, code and lists kept whole;
* :class:`RecursiveChunker` — the largest boundary that fits, for weakly structured text;
* :class:`SemanticChunker` — splits where the embedding distance between sentence windows spikes.

After chunking, optional stages (:class:`~ragwright.chunk.compose.EnrichedChunker`): contextual
enrichment (:mod:`ragwright.chunk.enrich`, ``ChunkingOptions.context``), late chunking (vectors
pooled from document-wide token embeddings, :mod:`ragwright.chunk.late`, ``late_chunking``) and
propositions (:mod:`ragwright.chunk.propositions`, ``propositions``).

All of them bound every chunk by ``cl100k_base`` tokens (``ChunkingOptions.max_tokens``) *and* by
the embedder's window, link chunks prev/next and record ``page``/``page_end`` and headings.
:func:`merge_adjacent` joins neighbouring hits of one document into passages without repeating overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragwright.chunk.options import ChunkingOptions
from ragwright.chunk.passages import Passage, merge_adjacent
from ragwright.chunk.recursive import RecursiveChunker
from ragwright.chunk.semantic import SemanticChunker
from ragwright.chunk.structural import BaseChunker, StructuralChunker
from ragwright.errors import ConfigError

if TYPE_CHECKING:
    from ragwright.chunk.compose import EnrichedChunker
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.llms.base import ChatModel

__all__ = [
    "BaseChunker",
    "Passage",
    "RecursiveChunker",
    "SemanticChunker",
    "StructuralChunker",
    "make_chunker",
    "merge_adjacent",
]


def make_chunker(
    embedder: Embedder, options: ChunkingOptions | None = None, llm: ChatModel | None = None
) -> BaseChunker | EnrichedChunker:
    """The chunker ``options.strategy`` names, bounded by *embedder*'s window and token counter, with
    the stages the options switch on (``context``, ``late_chunking``, ``propositions``); *llm* serves
    those that need a chat model."""
    options = options or ChunkingOptions()
    base = _base_chunker(embedder, options)
    if options.context == "none" and not options.late_chunking and not options.propositions:
        return base
    from ragwright.chunk.compose import EnrichedChunker
    from ragwright.chunk.enrich import ContextEnricher
    from ragwright.chunk.late import LateChunkEmbedder
    from ragwright.chunk.propositions import PropositionSplitter
    from ragwright.models.llms.base import ChatLedger

    if options.context == "llm" and llm is None:
        raise ConfigError(
            "ChunkingOptions.context='llm' needs a chat model: pass llm= to Rag (or set llm in ragwright.toml, "
            "or --llm), or use context='extractive', which needs none"
        )
    if options.propositions and llm is None:
        raise ConfigError(
            "ChunkingOptions.propositions needs a chat model: pass llm= to Rag (or set llm in ragwright.toml, or --llm)"
        )
    ledger = ChatLedger()  # the chat calls of every stage, for the ingest report
    enricher = None
    if options.context != "none":
        enricher = ContextEnricher(
            options.context,
            embedder.count_tokens,
            embedder.max_tokens,
            context_tokens=options.context_tokens,
            llm=llm if options.context == "llm" else None,
            ledger=ledger,
        )
    late = LateChunkEmbedder(embedder, options.late_overlap_tokens) if options.late_chunking else None
    propositions = None
    if options.propositions and llm is not None:
        propositions = PropositionSplitter(llm, embedder.count_tokens, embedder.max_tokens, ledger=ledger)
    return EnrichedChunker(base, enricher=enricher, late=late, propositions=propositions, ledger=ledger)


def _base_chunker(embedder: Embedder, options: ChunkingOptions) -> BaseChunker:
    if options.strategy == "semantic":
        return SemanticChunker(embedder, options)
    if options.strategy == "sentence_window":
        from ragwright.chunk.sentence_window import SentenceWindowChunker

        return SentenceWindowChunker.for_embedder(embedder, options)
    if options.strategy == "recursive":
        return RecursiveChunker.for_embedder(embedder, options)
    return StructuralChunker.for_embedder(embedder, options)
