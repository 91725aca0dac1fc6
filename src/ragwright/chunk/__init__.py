"""Chunkers: a Document in, linked Chunks out.

* :class:`StructuralChunker` (default) — headings start chunks; tables, code and lists kept whole;
* :class:`RecursiveChunker` — the largest boundary that fits, for weakly structured text;
* :class:`SemanticChunker` — splits where the embedding distance between sentence windows spikes.

All of them bound every chunk by ``cl100k_base`` tokens (``ChunkingOptions.max_tokens``) *and* by
the embedder's window, link chunks prev/next and record ``page``/``page_end`` and headings.
:func:`merge_adjacent` joins neighbouring hits of one document into passages without repeating overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragwright.chunk.passages import Passage, merge_adjacent
from ragwright.chunk.recursive import RecursiveChunker
from ragwright.chunk.semantic import SemanticChunker
from ragwright.chunk.structural import BaseChunker, StructuralChunker
from ragwright.options import ChunkingOptions

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder

__all__ = [
    "BaseChunker",
    "Passage",
    "RecursiveChunker",
    "SemanticChunker",
    "StructuralChunker",
    "make_chunker",
    "merge_adjacent",
]


def make_chunker(embedder: Embedder, options: ChunkingOptions | None = None) -> BaseChunker:
    """The chunker ``options.strategy`` names, bounded by *embedder*'s window and token counter."""
    options = options or ChunkingOptions()
    if options.strategy == "semantic":
        return SemanticChunker(embedder, options)
    if options.strategy == "sentence_window":
        from ragwright.chunk.sentence_window import SentenceWindowChunker

        return SentenceWindowChunker.for_embedder(embedder, options)
    if options.strategy == "recursive":
        return RecursiveChunker.for_embedder(embedder, options)
    return StructuralChunker.for_embedder(embedder, options)
