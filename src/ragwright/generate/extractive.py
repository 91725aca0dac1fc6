"""Extractive answers: quote the sentences that best support the question, each cited.

A real answer mode, not a placeholder: it never states anything the sources do not say, cites every
sentence with ``[Source N]`` (N = the source's position in ``RagResponse.sources``), and declines when
no sentence is similar enough to the question (``RagOptions.extractive_min_similarity``).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Final

from ragwright.chunk.split import sentences
from ragwright.model.results import Citation, RagResponse, SearchResult
from ragwright.models.embedders.base import Embedder
from ragwright.options import RagOptions

NO_SOURCES: Final = "I could not find any relevant information in the indexed documents."
NOT_SUPPORTED: Final = (
    "I could not find an answer to this in the indexed documents. The closest passages are listed as sources."
)
_MIN_WORDS = 4
_MAX_UNITS_PER_SOURCE = 40
_TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")


@dataclass(frozen=True, slots=True)
class _Unit:
    source: int  # 1-based
    order: int
    text: str


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _pieces(text: str) -> list[str]:
    """Sentences of prose; each table row as a self-describing record ("Header: value; …")."""
    lines = text.split("\n")
    pieces: list[str] = []
    header: list[str] | None = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line.startswith("|"):
            header = None
            if line:
                pieces.extend(sentences(line))
            continue
        if _TABLE_RULE.match(line):
            continue
        if header is None:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _TABLE_RULE.match(nxt):
                header = _cells(line)
                continue
            header = []
        cells = _cells(line)
        if header and len(header) == len(cells):
            pieces.append("; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=True)))
        else:
            pieces.append(" | ".join(cells))
    return pieces


def _units(results: tuple[SearchResult, ...]) -> list[_Unit]:
    units: list[_Unit] = []
    for n, result in enumerate(results, start=1):
        pieces = _pieces(result.chunk.text)
        kept = [p for p in pieces if len(p.split()) >= _MIN_WORDS][:_MAX_UNITS_PER_SOURCE]
        units.extend(_Unit(n, i, p) for i, p in enumerate(kept))
    return units


class ExtractiveAnswerer:
    """Selects supporting sentences by embedding similarity to the question."""

    mode = "extractive"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def run(
        self, question: str, results: Sequence[SearchResult], options: RagOptions, *, streaming: bool = False
    ) -> Generator[str, None, RagResponse]:
        """The answer as one delta, then the response (the streaming interface of every answerer)."""
        response = self.answer(question, list(results), options)
        if response.answer:
            yield response.answer
        return response

    def _not_supported(self, sources: tuple[SearchResult, ...]) -> RagResponse:
        return RagResponse(
            NOT_SUPPORTED, sources, declined=True, mode=self.mode, decline_reason="no_supporting_sentence"
        )

    def answer(self, question: str, results: list[SearchResult], options: RagOptions) -> RagResponse:
        sources = tuple(results)
        if not sources:
            return RagResponse(NO_SOURCES, sources, declined=True, mode=self.mode, decline_reason="no_sources")
        units = _units(sources)
        if not units:
            return self._not_supported(sources)
        import numpy as np

        query = self.embedder.embed_query(question)
        matrix = self.embedder.embed_documents([u.text for u in units])
        scores = matrix @ query
        ranked = sorted(range(len(units)), key=lambda i: -float(scores[i]))
        chosen: list[int] = []
        floor = max(options.extractive_min_similarity, float(scores[ranked[0]]) * options.extractive_relative_floor)
        for i in ranked:
            if float(scores[i]) < floor or len(chosen) >= options.max_answer_sentences:
                break
            if any(float(np.dot(matrix[i], matrix[j])) > 0.95 for j in chosen):
                continue  # near-duplicate of a sentence already quoted
            chosen.append(i)
        if not chosen:
            return self._not_supported(sources)
        parts, citations = [], []
        for i in chosen:
            unit = units[i]
            text = unit.text if unit.text.endswith((".", "!", "?", "。")) else unit.text + "."
            parts.append(f"{text} [Source {unit.source}]")
            chunk = sources[unit.source - 1].chunk
            citations.append(Citation(unit.source, chunk.id, chunk.document_id, unit.text))
        return RagResponse(" ".join(parts), sources, tuple(citations), declined=False, mode=self.mode)
