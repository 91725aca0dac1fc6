"""Embedding-based semantic chunking.

Each section's prose is cut into sentences; tables, code blocks and lists stay whole as atomic units
(split by row groups, lines or items only when one alone exceeds the budget). Every unit is embedded
together with ``sentence_buffer`` neighbours on each side (single sentences give noisy similarities),
in batches; the cosine distance between the adjacent windows meeting at each boundary is computed,
and the section is split where the distance is above the ``breakpoint_percentile`` (default 90th) of all the document's
distances — once the current chunk has ``min_tokens``. Size bounds always hold: a chunk that would
overflow the budget is closed regardless of similarity, and chunks under ``min_tokens`` are merged
into the neighbour they are most similar to when the result fits. Headings stay hard boundaries.

It costs one embedding per sentence at ingestion, so the seed's advice stands: use it only where
a benchmark on your data shows a gain over the structural chunker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from ragwright.chunk.options import ChunkingOptions
from ragwright.chunk.overlap import PROSE
from ragwright.chunk.split import Budget, Cost, sentences
from ragwright.chunk.structural import BaseChunker, Section, Unit, merge_small, pack_units, split_unit
from ragwright.errors import ConfigError

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder

VERSION = "semantic/3"


class SemanticChunker(BaseChunker):
    """Split where the topic shifts, within the same bounds as every chunker.

    ``embedder`` both bounds the chunks (its window and token counter) and embeds the sentence
    windows, ``batch_size`` windows per call.
    """

    version = VERSION

    def __init__(self, embedder: Embedder, options: ChunkingOptions | None = None, *, batch_size: int = 64) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError.invalid("batch_size", batch_size, "an integer >= 1")
        super().__init__(embedder.count_tokens, embedder.max_tokens, options)
        self.embedder = embedder
        self.batch_size = batch_size

    @classmethod
    def for_embedder(cls, embedder: Embedder, options: ChunkingOptions | None = None) -> Self:
        """The same as ``SemanticChunker(embedder, options)``."""
        return cls(embedder, options)

    def units(self, section: Section, room: Cost, budget: Budget) -> list[Unit]:
        """Sentences of prose blocks, and the other blocks whole (each within its room)."""
        prose_room = self._pack_room(section, room, budget)
        out: list[Unit] = []
        for block in section.blocks:
            if block.kind not in PROSE:
                out.extend(split_unit(block, room, budget))
                continue
            for j, sentence in enumerate(sentences(block.text) or [block.text]):
                unit = Unit(sentence, block.kind, block.pages, block.joiner if j == 0 else " ")
                out.extend(split_unit(unit, prose_room, budget))
        return out

    def distances(self, sections_texts: list[list[str]]) -> list[list[float]]:
        """Per section, the cosine distance at each boundary between consecutive units.

        Unit ``i`` is embedded as the window ``i - b … i + b`` (``b = sentence_buffer``). The distance at
        the boundary after unit ``i`` compares the two adjacent windows that meet there without sharing
        a unit — centred on ``i - b`` and on ``i + 1 + b`` (clamped at the section's ends) — so a topic
        change peaks exactly at its boundary instead of being smeared over ``2b + 1`` neighbours.
        Windows of all sections are embedded together, ``batch_size`` per call; a section with one
        unit has no distance and costs no embedding.
        """
        import numpy as np

        b = self.options.sentence_buffer
        windows: list[str] = []
        spans: list[tuple[int, int]] = []
        for texts in sections_texts:
            first = len(windows)
            if len(texts) > 1:
                windows.extend(" ".join(texts[max(0, i - b) : i + b + 1]) for i in range(len(texts)))
            spans.append((first, len(windows)))
        if not windows:
            return [[] for _ in sections_texts]
        step = self.batch_size
        parts = [self.embedder.embed_documents(windows[i : i + step]) for i in range(0, len(windows), step)]
        vectors = np.asarray(np.concatenate(parts), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0.0, 1.0, norms)
        out: list[list[float]] = []
        for lo, hi in spans:
            n = hi - lo
            left = [lo + max(0, i - b) for i in range(n - 1)]
            right = [lo + min(n - 1, i + 1 + b) for i in range(n - 1)]
            sims = np.einsum("ij,ij->i", vectors[left], vectors[right]) if n > 1 else np.zeros(0)
            out.append([float(1.0 - x) for x in sims])
        return out

    def _plan_document(self, parts: list[Section], budget: Budget) -> list[tuple[Section, list[list[Unit]]]]:
        import numpy as np

        rooms = [self._room(s, budget) for s in parts]
        units = [self.units(s, r, budget) for s, r in zip(parts, rooms, strict=True)]
        gaps = self.distances([[u.text for u in us] for us in units])
        every = [d for ds in gaps for d in ds]
        threshold = float(np.percentile(every, self.options.breakpoint_percentile)) if every else float("inf")
        plans: list[tuple[Section, list[list[Unit]]]] = []
        for section, room, us, ds in zip(parts, rooms, units, gaps, strict=True):
            breaks = frozenset(i + 1 for i, d in enumerate(ds) if d > threshold)
            pack_room = self._pack_room(section, room, budget)
            groups = pack_units(us, pack_room, budget, breaks=breaks, min_tokens=self.options.min_tokens)
            plans.append((section, merge_small(groups, pack_room, budget, self.options.min_tokens, ds)))
        return plans
