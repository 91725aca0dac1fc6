from __future__ import annotations

from ragwright.chunk import RecursiveChunker, StructuralChunker
from ragwright.chunk.tokens import count_tokens as cl100k
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind
count = HashingEmbedder().count_tokens


def doc(*elements: Element) -> Document:
    return Document("doc", tuple(elements))


def words(text: str) -> list[str]:
    return text.split()


def test_a_section_that_fits_is_one_chunk() -> None:
    d = doc(
        Element(E.HEADING, "Guide", level=1),
        Element(E.PARAGRAPH, "One paragraph."),
        Element(E.PARAGRAPH, "Another paragraph."),
        Element(E.HEADING, "Next", level=1),
        Element(E.PARAGRAPH, "Third."),
    )
    chunks = RecursiveChunker(count, 100).chunk(d)
    assert [c.text for c in chunks] == ["One paragraph.\n\nAnother paragraph.", "Third."]
    assert [c.section_path for c in chunks] == [("Guide",), ("Next",)]
    assert chunks[0].embed_text == "Guide\n\nOne paragraph.\n\nAnother paragraph."
    assert chunks[0].next_id == chunks[1].id and chunks[1].prev_id == chunks[0].id
    assert RecursiveChunker.version == "recursive/2"


def test_unstructured_text_splits_at_lines_then_sentences_then_words() -> None:
    lines = [" ".join(f"l{i}w{j}." for j in range(8)) for i in range(10)]  # 10 lines of 8 one-word sentences
    text = "\n".join(lines)
    chunks = RecursiveChunker(count, 20, ChunkingOptions(min_tokens=0)).chunk(doc(Element(E.PARAGRAPH, text)))
    assert all(count(c.text) <= 20 for c in chunks)
    assert words(" ".join(c.text for c in chunks)) == words(text)
    # whole lines are kept together (16 words) rather than filling each chunk to 20 words
    assert all(c.text.count("\n") <= 1 for c in chunks)
    assert any("\n" in c.text for c in chunks)


def test_even_sizes_no_tiny_tail() -> None:
    text = " ".join(f"sentence{i} here." for i in range(41))  # 82 words, budget 40: greedy gives 40/40/2
    chunks = RecursiveChunker(count, 40).chunk(doc(Element(E.PARAGRAPH, text)))
    sizes = [count(c.text) for c in chunks]
    assert len(chunks) == 3 and max(sizes) <= 40 and min(sizes) >= 20
    greedy = StructuralChunker(count, 40).chunk(doc(Element(E.PARAGRAPH, text)))
    assert min(count(c.text) for c in greedy) < 10


def test_small_pieces_are_merged_into_a_neighbour() -> None:
    big = " ".join(f"w{i}." for i in range(30))
    d = doc(Element(E.PARAGRAPH, big), Element(E.PARAGRAPH, "tiny bit"), Element(E.PARAGRAPH, big))
    chunks = RecursiveChunker(count, 40, ChunkingOptions(min_tokens=16)).chunk(d)
    assert all(cl100k(c.text) >= 16 for c in chunks)
    assert any("tiny bit" in c.text and len(c.text) > len("tiny bit") for c in chunks)


def test_tables_split_by_row_groups_with_header() -> None:
    rows = [f"| r{i} | value {i} |" for i in range(60)]
    table = "| name | value |\n| --- | --- |\n" + "\n".join(rows)
    chunks = RecursiveChunker(count, 40).chunk(doc(Element(E.PARAGRAPH, "Intro."), Element(E.TABLE, table)))
    table_chunks = [c for c in chunks if "| name | value |" in c.text]
    assert len(table_chunks) > 2
    for c in table_chunks:
        body = c.text[c.text.index("| name | value |") :]
        assert body.startswith("| name | value |\n| --- | --- |\n")
        assert all(line in rows for line in body.split("\n")[2:])


def test_code_keeps_indentation_when_split_by_lines() -> None:
    code = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(40))
    chunks = RecursiveChunker(count, 30).chunk(doc(Element(E.CODE, code)))
    assert len(chunks) > 1
    assert "\n".join(c.text for c in chunks) == code


def test_enormous_word_is_cut_by_characters() -> None:
    word = "x" * 5000
    chunks = RecursiveChunker(count, 50, ChunkingOptions(max_tokens=64)).chunk(doc(Element(E.PARAGRAPH, word)))
    assert "".join(c.text for c in chunks) == word
    assert all(cl100k(c.text) <= 64 for c in chunks)


def test_deterministic_ids() -> None:
    d = doc(Element(E.HEADING, "H", level=1), Element(E.PARAGRAPH, "text. " * 300))
    a = RecursiveChunker(count, 60).chunk(d)
    b = RecursiveChunker(count, 60).chunk(d)
    assert [c.id for c in a] == [c.id for c in b] and len(a) > 1


def test_sentences_of_lower_cased_text() -> None:
    from ragwright.chunk.split import sentences

    assert sentences("wing in a slipstream . an experimental study was made . the results") == [
        "wing in a slipstream .",
        "an experimental study was made .",
        "the results",
    ]
    assert sentences("Dr. Smith went home. He slept. e.g. this stays") == [
        "Dr.",
        "Smith went home.",
        "He slept. e.g. this stays",
    ]
    assert sentences("pi is 3.14 here. ok") == ["pi is 3.14 here.", "ok"]


def test_fingerprint_follows_options_and_window() -> None:
    a = RecursiveChunker(count, 100).fingerprint
    assert a.startswith("recursive/2+") and a == RecursiveChunker(count, 100).fingerprint
    assert RecursiveChunker(count, 120).fingerprint != a
    assert RecursiveChunker(count, 100, ChunkingOptions(overlap="sentences")).fingerprint != a
