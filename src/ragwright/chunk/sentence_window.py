"""Sentence-window chunking: embed single sentences, hand the model their surroundings.

Each prose sentence is its own chunk — a precise embedding target — and carries in
``metadata["window"]`` the text of up to ``window_sentences`` chunks before and after it in the same
section. Tables, code and list items stay whole units (a sentence split would break them). At
retrieval the window replaces the matched sentence (``RetrievalOptions.use_sentence_window``, on by
default), so the answer sees context while ranking used the sentence; the sentence itself stays in
``metadata["matched_sentence"]``.
"""

from __future__ import annotations

import dataclasses

from ragwright.chunk.overlap import PROSE
from ragwright.chunk.split import Budget, Cost, sentences
from ragwright.chunk.structural import BaseChunker, Section, Unit
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document

VERSION = "sentence_window/3"


class SentenceWindowChunker(BaseChunker):
    """One chunk per sentence (non-prose blocks whole), each with its window in metadata."""

    version = VERSION

    def _plan(self, section: Section, room: Cost, budget: Budget) -> list[list[Unit]]:
        groups: list[list[Unit]] = []
        for unit in self._units(section, room, budget):
            if unit.kind in PROSE:
                groups.extend([Unit(s, unit.kind, unit.pages, " ")] for s in sentences(unit.text) if s.strip())
            else:
                groups.append([unit])
        return groups

    def chunk(self, document: Document) -> list[Chunk]:
        chunks = super().chunk(document)
        n = self.options.window_sentences
        out: list[Chunk] = []
        for i, chunk in enumerate(chunks):
            lo, hi = i, i
            while lo > 0 and i - lo < n and chunks[lo - 1].section_path == chunk.section_path:
                lo -= 1
            while hi + 1 < len(chunks) and hi - i < n and chunks[hi + 1].section_path == chunk.section_path:
                hi += 1
            window = " ".join(c.text for c in chunks[lo : hi + 1])
            out.append(dataclasses.replace(chunk, metadata={**chunk.metadata, "window": window}))
        return out
