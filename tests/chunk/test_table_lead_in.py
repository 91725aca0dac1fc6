"""A table split into row groups keeps its lead-in (the short line just before it: a title, a caption,
"Here are the results:") over every group, so a row read in a later chunk still says what it belongs to."""

from ragwright.chunk import StructuralChunker
from ragwright.generate.lines import pieces_in_context
from ragwright.model.document import Document, Element, ElementKind
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind
count = HashingEmbedder().count_tokens
LEAD = "Firearm Background Checks November - 2015"
HEADER = "| State | Permit | Totals |\n| --- | --- | --- |"
ROWS = [f"| State{i} | {i * 7} | {i * 11} |" for i in range(60)]
TABLE = HEADER + "\n" + "\n".join(ROWS)


def chunks(*elements: Element, window: int = 60) -> list[str]:
    return [c.text for c in StructuralChunker(count, window).chunk(Document("doc", tuple(elements)))]


def rows_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("| State") and not line.startswith("| State |")]


def test_every_row_group_opens_with_the_lead_in_once() -> None:
    out = chunks(Element(E.PARAGRAPH, LEAD), Element(E.TABLE, TABLE))
    assert len(out) > 3
    assert all(count(c) <= 60 for c in out)  # groups are sized to leave room for the lead-in
    assert all(c.startswith(f"{LEAD}\n\n{HEADER}\n") for c in out)
    assert all(c.count(LEAD) == 1 for c in out)  # the first group follows the lead-in itself
    assert [r for c in out for r in rows_of(c)] == ROWS  # every row once, in order


def test_a_row_in_a_later_chunk_is_read_under_the_lead_in() -> None:
    later = chunks(Element(E.PARAGRAPH, LEAD), Element(E.TABLE, TABLE))[2]
    rows = [(text, context) for kind, text, context in pieces_in_context(later) if kind == "row"]
    assert rows and all(context == LEAD for _, context in rows)


def test_no_lead_in_from_a_long_paragraph_a_list_or_a_heading() -> None:
    long_text = " ".join(["words"] * 30) + "."
    for before in (
        Element(E.PARAGRAPH, long_text),
        Element(E.LIST_ITEM, "an item"),
        Element(E.PARAGRAPH, "first line\nsecond line"),
    ):
        out = chunks(before, Element(E.TABLE, TABLE))
        assert all(c.startswith(HEADER) for c in out[1:]), before.kind
    # a heading is the section path (the chunk's prefix), not a lead-in
    out = chunks(Element(E.HEADING, LEAD, level=1), Element(E.TABLE, TABLE))
    assert all(c.startswith(HEADER) for c in out)


def test_a_table_that_fits_is_left_alone() -> None:
    small = HEADER + "\n" + "\n".join(ROWS[:3])
    assert chunks(Element(E.PARAGRAPH, LEAD), Element(E.TABLE, small), window=200) == [f"{LEAD}\n\n{small}"]
