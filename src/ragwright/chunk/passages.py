"""Merge adjacent hits of one document into passages.

Two retrieved chunks of one document are adjacent when they are linked (``next_id``/``prev_id``)
or, for chunks without links, when their positions are consecutive. A run of adjacent chunks becomes
one passage whose text repeats nothing: the leading ``metadata["overlap_chars"]`` characters of each
chunk after the first (the overlap repeated from the chunk before it) are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult


@dataclass(frozen=True, slots=True)
class Passage:
    """Consecutive chunks of one document joined into one text.

    ``score`` is the best member's score (0.0 when plain chunks were merged); ``rank`` is the best
    (lowest, 0-based) position a member had in the input; ``chunk_ids`` are in document order.
    """

    document_id: str
    text: str
    score: float
    rank: int
    chunk_ids: tuple[str, ...]
    section_path: tuple[str, ...]
    page: int | None
    page_end: int | None
    results: tuple[SearchResult, ...]

    @property
    def section(self) -> str:
        return " > ".join(self.section_path)


def overlap_chars(chunk: Chunk) -> int:
    """How many leading characters of *chunk* repeat the chunk before it (0 when unknown)."""
    value = chunk.metadata.get("overlap_chars")
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, min(value, len(chunk.text)))


def adjacent(a: Chunk, b: Chunk) -> bool:
    """Whether *b* directly follows *a* in their document."""
    if a.document_id != b.document_id:
        return False
    if a.next_id is not None or b.prev_id is not None:
        return a.next_id == b.id or b.prev_id == a.id
    return b.position == a.position + 1


def merge_adjacent(hits: Sequence[SearchResult | Chunk], *, joiner: str = "\n\n") -> list[Passage]:
    """Join adjacent hits of the same document into passages, best first.

    *hits* are search results (or plain chunks) in rank order; a chunk given twice counts once, with
    its best score. Passages are ordered by best score, then by best rank.
    """
    best: dict[str, tuple[SearchResult, int]] = {}
    for rank, hit in enumerate(hits):
        result = hit if isinstance(hit, SearchResult) else SearchResult(chunk=hit, score=0.0)
        seen = best.get(result.chunk.id)
        if seen is None:
            best[result.chunk.id] = (result, rank)
        elif result.score > seen[0].score:
            best[result.chunk.id] = (result, seen[1])
    by_document: dict[str, list[tuple[SearchResult, int]]] = {}
    for result, rank in best.values():
        by_document.setdefault(result.chunk.document_id, []).append((result, rank))
    passages: list[Passage] = []
    for members in by_document.values():
        members.sort(key=lambda m: m[0].chunk.position)
        run = [members[0]]
        for member in members[1:]:
            if adjacent(run[-1][0].chunk, member[0].chunk):
                run.append(member)
            else:
                passages.append(_passage(run, joiner))
                run = [member]
        passages.append(_passage(run, joiner))
    passages.sort(key=lambda p: (-p.score, p.rank))
    return passages


def _passage(run: list[tuple[SearchResult, int]], joiner: str) -> Passage:
    chunks = [r.chunk for r, _ in run]
    text = chunks[0].text + "".join(joiner + c.text[overlap_chars(c) :].lstrip() for c in chunks[1:])
    pages = [p for c in chunks for p in (c.page, c.page_end) if p is not None]
    return Passage(
        document_id=chunks[0].document_id,
        text=text,
        score=max(r.score for r, _ in run),
        rank=min(rank for _, rank in run),
        chunk_ids=tuple(c.id for c in chunks),
        section_path=chunks[0].section_path,
        page=min(pages) if pages else None,
        page_end=max(pages) if pages else None,
        results=tuple(r for r, _ in run),
    )
