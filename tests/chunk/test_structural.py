from ragwright.chunk import StructuralChunker
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind
count = HashingEmbedder().count_tokens


def doc(*elements: Element) -> Document:
    return Document("doc", tuple(elements))


def test_headings_start_chunks_and_carry_section_path() -> None:
    d = doc(
        Element(E.HEADING, "Guide", level=1),
        Element(E.PARAGRAPH, "Intro text here."),
        Element(E.HEADING, "Install", level=2),
        Element(E.PARAGRAPH, "Run pip install."),
        Element(E.HEADING, "Usage", level=2),
        Element(E.PARAGRAPH, "Call the API."),
    )
    chunks = StructuralChunker(count, 100).chunk(d)
    assert [c.text for c in chunks] == ["Intro text here.", "Run pip install.", "Call the API."]
    assert [c.section_path for c in chunks] == [("Guide",), ("Guide", "Install"), ("Guide", "Usage")]
    assert chunks[1].embed_text == "Guide > Install\n\nRun pip install."
    assert chunks[1].metadata["heading_breadcrumb"] == "Guide > Install"
    assert chunks[1].metadata["heading_level"] == 2
    assert [c.position for c in chunks] == [0, 1, 2]
    assert chunks[0].next_id == chunks[1].id and chunks[1].prev_id == chunks[0].id
    assert chunks[0].prev_id is None and chunks[-1].next_id is None


def test_budget_respected_including_prefix() -> None:
    words = " ".join(f"word{i}." for i in range(300))
    d = doc(Element(E.HEADING, "Section", level=1), Element(E.PARAGRAPH, words))
    chunker = StructuralChunker(count, 50, ChunkingOptions(max_tokens=400))
    chunks = chunker.chunk(d)
    assert len(chunks) > 5
    assert all(count(c.text_for_embedding) <= 50 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == words.split()


def test_tables_split_by_rows_with_header_repeated() -> None:
    rows = "\n".join(f"| r{i} | value {i} |" for i in range(60))
    table = "| name | value |\n| --- | --- |\n" + rows
    chunks = StructuralChunker(count, 40).chunk(doc(Element(E.TABLE, table)))
    assert len(chunks) > 2
    for c in chunks:
        assert c.text.startswith("| name | value |\n| --- | --- |\n")
        assert count(c.text) <= 40
    body_rows = [line for c in chunks for line in c.text.split("\n")[2:]]
    assert body_rows == rows.split("\n")


def test_small_structures_are_not_split() -> None:
    code = "def f():\n    return 1"
    chunks = StructuralChunker(count, 100).chunk(
        doc(Element(E.PARAGRAPH, "Before."), Element(E.CODE, code), Element(E.LIST_ITEM, "an item"))
    )
    assert len(chunks) == 1 and code in chunks[0].text


def test_pages_attributed() -> None:
    d = doc(Element(E.PARAGRAPH, "one", page=2), Element(E.PARAGRAPH, "two", page=3))
    (c,) = StructuralChunker(count, 100).chunk(d)
    assert (c.page, c.page_end) == (2, 3) and c.metadata["page"] == 2 and c.metadata["page_end"] == 3


def test_deterministic() -> None:
    d = doc(Element(E.HEADING, "H", level=1), Element(E.PARAGRAPH, "text " * 200))
    a = StructuralChunker(count, 60).chunk(d)
    b = StructuralChunker(count, 60).chunk(d)
    assert [c.id for c in a] == [c.id for c in b]


def test_headers_and_footers_are_dropped() -> None:
    d = doc(Element(E.HEADER, "ACME confidential"), Element(E.PARAGRAPH, "body"), Element(E.FOOTER, "page 1"))
    assert [c.text for c in StructuralChunker(count, 100).chunk(d)] == ["body"]
