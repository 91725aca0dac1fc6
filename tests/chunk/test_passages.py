from __future__ import annotations

from dataclasses import replace

from ragwright.chunk import StructuralChunker, merge_adjacent
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, Element, ElementKind
from ragwright.model.results import SearchResult
from ragwright.options import ChunkingOptions
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind
count = HashingEmbedder().count_tokens
SENTENCES = [f"Sentence number {i} says something." for i in range(40)]


def chunks_of(options: ChunkingOptions) -> list[Chunk]:
    d = Document("doc", (Element(E.HEADING, "H", level=1), Element(E.PARAGRAPH, " ".join(SENTENCES))))
    return StructuralChunker(count, 30, options).chunk(d)


def test_consecutive_hits_merge_without_repeating_the_overlap() -> None:
    chunks = chunks_of(ChunkingOptions(overlap="sentences", overlap_sentences=1))
    assert len(chunks) >= 4
    assert chunks[1].metadata["overlap_chars"] > 0
    hits = [SearchResult(chunks[2], 0.9), SearchResult(chunks[1], 0.5), SearchResult(chunks[0], 0.4)]
    (passage,) = merge_adjacent(hits)
    assert passage.chunk_ids == (chunks[0].id, chunks[1].id, chunks[2].id)
    assert passage.score == 0.9 and passage.rank == 0
    assert passage.section_path == ("H",)
    body = " ".join(passage.text.split())
    for sentence in SENTENCES:
        assert body.count(sentence) <= 1
    expected = " ".join(" ".join(c.text[c.metadata["overlap_chars"] :].split()) for c in chunks[:3])
    assert body == expected


def test_gaps_and_documents_make_separate_passages_ordered_by_score() -> None:
    chunks = chunks_of(ChunkingOptions())
    other = Chunk.create("other", "Another document.", 0)
    hits = [
        SearchResult(chunks[3], 0.8),
        SearchResult(other, 0.85),
        SearchResult(chunks[0], 0.7),
        SearchResult(chunks[1], 0.6),
    ]
    passages = merge_adjacent(hits)
    assert [p.chunk_ids for p in passages] == [(other.id,), (chunks[3].id,), (chunks[0].id, chunks[1].id)]
    assert [p.score for p in passages] == [0.85, 0.8, 0.7]
    assert passages[2].text == chunks[0].text + "\n\n" + chunks[1].text


def test_plain_chunks_keep_rank_order_and_duplicates_count_once() -> None:
    chunks = chunks_of(ChunkingOptions())
    passages = merge_adjacent([chunks[4], chunks[0], chunks[5], chunks[0]])
    assert [p.chunk_ids for p in passages] == [(chunks[4].id, chunks[5].id), (chunks[0].id,)]
    assert [p.rank for p in passages] == [0, 1]


def test_unlinked_chunks_use_positions_and_links_win_over_positions() -> None:
    a = Chunk.create("d", "first", 0)
    b = Chunk.create("d", "second", 1)
    c = Chunk.create("d", "fourth", 3)
    assert [p.chunk_ids for p in merge_adjacent([a, b, c])] == [(a.id, b.id), (c.id,)]
    linked_elsewhere = replace(a, next_id="somewhere-else")
    assert len(merge_adjacent([linked_elsewhere, b])) == 2


def test_empty_input() -> None:
    assert merge_adjacent([]) == []
