"""Citation checking and refusal detection."""

import pytest

from ragwright.generate.citations import check_citations, cited_numbers, has_claims, is_refusal
from ragwright.generate.prompt import DECLINE_SENTENCE
from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult

SOURCES = [SearchResult(Chunk.create(f"doc{i}.md", f"text number {i}", 0), 1.0 - i / 10) for i in range(1, 4)]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("A [Source 1]. B [Source 3].", [1, 3]),
        ("A [source 2]", [2]),
        ("A [Source 1, 2].", [1, 2]),
        ("A [Sources 1 and 3].", [1, 3]),
        ("A [Sources 1, 2 and 3]", [1, 2, 3]),
        ("A [Source 1; Source 3]", [1, 3]),
        ("A [Source 1, Source 2]", [1, 2]),
        ("A [Sources: 2, 3]", [2, 3]),
        ("A [Source 1-3]", [1, 2, 3]),
        ("A [Source 1][Source 2]", [1, 2]),
        ("No markers (Source 1) or [1] here", []),
    ],
)
def test_cited_numbers_forms(text: str, numbers: list[int]) -> None:
    assert cited_numbers(text) == numbers


def test_valid_citations_resolve_to_chunks_in_order_once() -> None:
    report = check_citations("Late fees apply [Source 2]. Also [Source 1, 2].", SOURCES)
    assert [(c.source, c.source_number, c.document_id) for c in report.citations] == [
        (2, 2, "doc2.md"),
        (1, 1, "doc1.md"),
    ]
    assert report.citations[0].chunk_id == SOURCES[1].chunk.id
    assert report.invalid == () and not report.uncited


def test_out_of_range_citations_are_reported_invalid() -> None:
    report = check_citations("Claim one [Source 2]. Claim two [Source 7]. Claim three [Source 0, 7].", SOURCES)
    assert [c.source for c in report.citations] == [2]
    assert report.invalid == (7, 0)
    assert not report.uncited


def test_claims_without_a_valid_citation_are_flagged() -> None:
    assert check_citations("The warranty lasts two years.", SOURCES).uncited
    only_invalid = check_citations("The warranty lasts two years [Source 9].", SOURCES)
    assert only_invalid.uncited and only_invalid.invalid == (9,) and only_invalid.citations == ()
    assert not check_citations("", SOURCES).uncited
    assert not has_claims("Yes.")


@pytest.mark.parametrize(
    "answer",
    [
        DECLINE_SENTENCE,
        "i cannot find the answer in the provided documents",
        "The provided context does not contain information about the boiling point on Mars.",
        "The context doesn't mention Mars at all.",
        "I'm sorry, but there is not enough information in the sources to answer this.",
        "The sources do not specify the price [Source 1].",
        "This is not mentioned in the provided context.",
        "I don't know based on the given sources.",
        "Unfortunately, I could not find that in the documents.",
        "",
    ],
)
def test_refusals_are_recognised(answer: str) -> None:
    assert is_refusal(answer, SOURCES)


@pytest.mark.parametrize(
    "answer",
    [
        "The warranty lasts two years [Source 1].",
        "The sources don't say when it ships. However, returns take 30 days [Source 2].",
        "Gift cards cannot be refunded [Source 2].",
        "The office does not open on Sundays [Source 1].",
    ],
)
def test_answers_are_not_refusals(answer: str) -> None:
    assert not is_refusal(answer, SOURCES)
