"""A table-of-contents chunk answers nothing: an answer's sources skip it and are filled from deeper in the
ranking (ask fetches three times deeper only when a contents page took a place)."""

from ragwright import Rag
from ragwright.generate.lines import is_contents_chunk
from ragwright.rag_answers import answer_sources
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

LEADERS = " ." * 20
TOC = "\n\n".join(f"3.{i} Row and Column Access Control topic {i}{LEADERS} {10 + i}" for i in range(6))


def test_contents_pages_are_told_from_prose_and_reference_lists() -> None:
    assert is_contents_chunk(TOC)
    assert is_contents_chunk("| Notices | . . . . . . . . . . . . . . . . . . vii |\n| --- | --- |\n| Preface | ix |")
    prose = "Row and Column Access Control restricts rows.\n\n3.1 Overview . . . . . . . . . 14\n\n" + (
        "It lets a security officer define row permissions and column masks for every table. " * 3
    )
    assert not is_contents_chunk(prose)  # one contents line in a page of prose
    refs = '^ Kear 2005, p. 448.\n^ Young, Emma. "Funniest joke". New Scientist. The duck joke won.'
    assert not is_contents_chunk(refs)  # a reference list can quote the answer
    assert not is_contents_chunk("")


def test_answer_sources_skip_contents_pages_and_keep_the_order() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder())
    note = "Access control note {}: row permissions are checked by the database."
    docs = {f"d{i}.md": note.format(i).encode() for i in range(3)}
    rag.ingest(BytesSource({"toc.md": TOC.encode(), **docs}))
    results = rag.search("Row and Column Access Control topic", top_k=4)
    assert results[0].document_id == "toc.md"
    kept = answer_sources(results, 2)
    assert [r.document_id for r in kept] == [r.document_id for r in results if r.document_id != "toc.md"][:2]


def test_ask_fills_a_contents_page_place_from_deeper_results() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(
        BytesSource(
            {
                "toc.md": TOC.encode(),
                "rcac.md": b"Row and Column Access Control (RCAC) topic: the feature that limits rows and columns.",
            }
        )
    )
    assert rag.search("Row and Column Access Control topic", top_k=1)[0].document_id == "toc.md"
    response = rag.ask("Row and Column Access Control topic", top_k=1)
    assert [s.document_id for s in response.sources] == ["rcac.md"]
