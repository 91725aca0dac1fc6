"""Global search's themes on made-up text (issue 24): a summary quotes prose, never a reference list,
navigation or contents line; themes are ranked by relevance and by how much of the corpus they cover,
with at most two per document; a summary's embedding is computed once, with the summary; a citation
quotes its chunk's own text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragwright.graph import GraphOptions
from ragwright.graph.communities import build_communities, is_prose, is_reference_line, summary_text
from ragwright.graph.global_search import coverage, global_search, summary_vectors
from ragwright.graph.visibility import Visibility
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

ACME = Identity("acme")
DUCKS = (
    b"# Ducks\n\nThe Mallard Duck lives on lakes across Europe and feeds in shallow water.\n"
    b"The Mallard Duck nests near Lake Geneva every spring.\n\n"
    b"## References\n\n"
    b"- ^ Smith, John; Jones, Mary (2001). Ducks of Britain. Oxford: Oxford University Press.\n"
    b"- ^ Smith, John; Jones, Mary (2003). Ducks of Europe. Oxford: Oxford University Press.\n"
    b"- Oxford: Oxford University Press.\n"
    b"- Collingwood, VIC: Csiro Publishing.\n"
    b"- Collingwood, VIC: Csiro Publishing.\n"
    b"- Wordsworth Editions, Limited. Wordsworth Editions, Limited.\n"
    b"- ISBN 978-1-4615-6789-9. Retrieved September 9, 2021. Young, Emma; Brown, Craig.\n"
)
REFERENCES = (
    "Oxford: Oxford University Press.",
    "Collingwood, VIC: Csiro Publishing.",
    "Wordsworth Editions, Limited.",
    "^ Smith, John; Jones, Mary (2001). Ducks of Britain.",
    "ISBN 978-1-4615-6789-9. Retrieved September 9, 2021. Young, Emma; Brown, Craig.",
    "^ Young, Emma.",
    "The Sibley Guide to Bird Life and Behaviour.",
    "Christidis, Les; Boles, Walter E., eds.",
    "Ducks, Geese and Swans: Species Accounts (CairinatoMergus).",
    "Zejiang Shen1 ( ), Ruochen Zhang2, Melissa Dell3, Benjamin Charles Germain Lee4",
    "Ducks on postage stamps Archived 2013-05-13 at the Wayback Machine.",
    '"Female-Biased Philopatry, Monogamy, and the Timing of Pair Formation in Migratory Waterfowl".',
    "Introduction . . . . . . . . 4",
    "See also: Geese.",
)


def _rag(path: Path) -> Rag:
    return Rag(
        SqliteStore(str(path / "s.db")), HashingEmbedder(max_tokens=64), graph=GraphOptions(merge_similarity=None)
    )


def _global_answer(path: Path, name: str, text: bytes, question: str) -> RagResponse:
    """Global search's answer to *question* over one document."""
    rag = _rag(path)
    rag.ingest(BytesSource({name: text}), tenant="acme")
    assert rag.graph is not None
    return rag.graph.ask(question, mode="global", identity=ACME)


@pytest.mark.parametrize("line", REFERENCES)
def test_reference_navigation_and_contents_lines_are_no_theme_sentences(line: str) -> None:
    assert is_reference_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "The Mallard Duck lives on lakes across Europe and feeds in shallow water.",
        "Big Stone Gap is a 2014 American romantic comedy film directed by Adriana Trigiani.",
        "Ducks are studied at Oxford University Press events every year.",  # a publisher named in prose
    ],
)
def test_prose_sentences_are_theme_sentences(line: str) -> None:
    assert is_prose(line) and not is_reference_line(line)


def test_a_table_row_or_a_header_line_is_no_reference_line() -> None:
    assert not is_reference_line("Team: Boston Bruins; Year: 1970; Coach: Harry Sinden.")
    assert not is_reference_line("From: Matthew Robinson <mrobinson@example.com> To: Jane Doe")


def test_a_bibliography_gives_no_theme_sentence_and_prose_comes_first(tmp_path: Path) -> None:
    rag = _rag(tmp_path)
    rag.ingest(BytesSource({"ducks.md": DUCKS}), tenant="acme")
    graph = rag.graph
    assert graph is not None
    assert graph.refresh_communities() == 1
    payloads = [p for _, _, p, _ in graph.index.tables.summaries("acme")]
    quoted = [s["text"] for p in payloads for s in p["sentences"]]
    assert quoted, payloads
    for sentence in quoted:
        assert not any(marker in sentence for marker in ("Press", "Publishing", "Editions", "ISBN", "^", "(2001)"))
    assert "The Mallard Duck nests near Lake Geneva every spring." in quoted
    for p in payloads:  # within a summary, prose sentences come before any other line
        prose = [is_prose(s["text"]) for s in p["sentences"]]
        assert prose == sorted(prose, reverse=True), p["sentences"]
    response = graph.ask("What are the main themes?", mode="global", identity=ACME)
    assert not response.declined
    assert not any(marker in response.answer for marker in ("Press.", "Publishing.", "Limited.", "ISBN"))


LAKES = b"""# Lakes

The Mallard Duck feeds on Lake Geneva in the winter months.

The Tufted Duck dives in Lake Constance for mussels and snails.

The Mandarin Duck rests by Loch Lomond near the old bridge.

The Wood Duck nests beside Lake Huron in hollow trees.
"""
CARS = b"# Cars\n\nThe Ford Motor Company builds its trucks in Dearborn for the American market.\n"
MUSIC = b"# Music\n\nThe Berlin Philharmonic plays the symphonies of Ludwig Beethoven every season.\n"


def test_themes_are_spread_over_documents_at_most_two_each(tmp_path: Path) -> None:
    rag = _rag(tmp_path)
    rag.ingest(BytesSource({"lakes.md": LAKES, "cars.md": CARS, "music.md": MUSIC}), tenant="acme")
    graph = rag.graph
    assert graph is not None
    graph.refresh_communities()
    homes = [p["sentences"][0]["document_id"] for _, _, p, _ in graph.index.tables.summaries("acme", 0)]
    assert homes.count("lakes.md") >= 4  # four themes of lakes.md alone could fill the answer
    response = graph.ask("Which ducks feed and nest on lakes?", mode="global", identity=ACME)
    cited = [c.document_id for c in response.citations]
    assert set(cited) == {"lakes.md", "cars.md", "music.md"}, response.answer
    document_of = {c.chunk_id: c.document_id for c in response.citations}
    homes_shown = [document_of[t.sentences[0][1]] for t in graph.themes]
    assert sorted(homes_shown) == ["cars.md", "lakes.md", "lakes.md", "music.md"]  # at most two per document
    assert "Duck" in graph.themes[0].sentences[0][0]  # the most relevant theme still leads


def test_coverage_grows_with_documents_and_chunks_and_prefers_prose() -> None:
    one = coverage({"documents": 1, "chunks": 1})
    assert one == 1.0
    assert coverage({"documents": 1, "chunks": 8}) > one
    assert coverage({"documents": 3, "chunks": 8}) > coverage({"documents": 1, "chunks": 8})
    assert coverage({"documents": 3, "chunks": 3}) > coverage({"documents": 1, "chunks": 16})  # spread > bulk
    assert coverage({"documents": 3, "chunks": 8, "prose": False}) == coverage({"documents": 3, "chunks": 8}) / 2


def test_a_quoted_sentence_ends_before_its_reference_markers(tmp_path: Path) -> None:
    text = b"# Arms\n\nThe Latvian Duck appears on the coat of arms of Lubana and the arms of Foglo in Aland.[50][51]\n"
    response = _global_answer(tmp_path, "arms.md", text, "Which coats of arms show a duck?")
    assert response.citations and all(c.quote.endswith("in Aland.") for c in response.citations), response.answer
    assert "in Aland. [Source 1]" in response.answer


class CountingEmbedder(HashingEmbedder):
    """The hashing double, counting the texts it embeds as documents after ingestion (``counting``)."""

    def __init__(self) -> None:
        super().__init__(max_tokens=64, name=f"test/counting-{id(self)}")  # its own name: no shared cache
        self.counting, self.documents, self.queries = False, 0, 0

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.documents += len(texts) if self.counting else 0
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        self.queries += 1 if self.counting else 0
        return super().embed_query(text)


def test_a_question_embeds_only_itself(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    rag = Rag(SqliteStore(str(tmp_path / "s.db")), embedder, graph=GraphOptions(merge_similarity=None))
    rag.ingest(BytesSource({"lakes.md": LAKES, "cars.md": CARS}), tenant="acme")
    graph = rag.graph
    assert graph is not None
    embedder.counting = True
    graph.ask("Which ducks live on lakes?", mode="global", identity=ACME)  # builds the summaries
    built = embedder.documents
    texts = {summary_text(p) for _, _, p, _ in graph.index.tables.summaries("acme")}
    assert built == len(texts) > 1  # each summary embedded once, when it is built (every level)
    for question in ("Which ducks live on lakes?", "Where are trucks built?", "What nests in trees?"):
        graph.ask(question, mode="global", identity=ACME)
    assert (embedder.documents, embedder.queries) == (built, 4)  # later questions embed only themselves
    rag.ingest(BytesSource({"music.md": MUSIC}), tenant="acme")  # the summaries are rebuilt
    before = embedder.documents
    response = graph.ask("Who plays Beethoven?", mode="global", identity=ACME)
    new = {summary_text(p) for _, _, p, _ in graph.index.tables.summaries("acme")} - texts
    assert new and embedder.documents == before + len(new)  # only the summaries with new text
    assert "music.md" in {c.document_id for c in response.citations}


def test_summaries_written_with_their_embedding_are_not_embedded_again(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    rag = Rag(SqliteStore(str(tmp_path / "s.db")), embedder, graph=GraphOptions(merge_similarity=None))
    rag.ingest(BytesSource({"lakes.md": LAKES, "cars.md": CARS}), tenant="acme")
    graph = rag.graph
    assert graph is not None
    assert build_communities(graph.index.tables, rag.store, "acme", graph.options, embedder) > 0
    payloads = [p for _, _, p, _ in graph.index.tables.summaries("acme")]
    assert all(p["embedder"] == embedder.name and len(p["embedding"]) == embedder.dimension for p in payloads)
    embedder.counting = True
    response, themes = global_search(
        graph.index.tables, Visibility(rag.store, ACME), "Which ducks live on lakes?", embedder
    )
    assert (embedder.documents, embedder.queries) == (0, 1) and themes and not response.declined
    stored = summary_vectors(payloads, embedder)
    assert embedder.documents == 0
    fresh = summary_vectors(
        [{k: v for k, v in p.items() if k != "embedding"} for p in payloads],
        HashingEmbedder(max_tokens=64, name="test/other"),
    )
    assert abs(stored - fresh).max() < 1e-5  # the stored embedding is the summary's own


def test_a_citation_quotes_the_chunks_own_text_not_its_collapsed_sentence(tmp_path: Path) -> None:
    text = b"# Ducks\n\nThe Mallard Duck feeds on Lake Geneva\nin the winter months  and nests by the shore.\n"
    response = _global_answer(tmp_path, "ducks.md", text, "Where does the duck feed?")
    by_number = {i + 1: s.chunk for i, s in enumerate(response.sources)}
    assert response.citations
    for citation in response.citations:
        assert citation.quote in by_number[citation.source].text  # the chunk's own span, line break kept
    assert any("  " in c.quote for c in response.citations)  # not the collapsed sentence
    collapsed = "The Mallard Duck feeds on Lake Geneva in the winter months and nests by the shore. [Source 1]"
    assert collapsed in response.answer.splitlines()[1]  # the answer's line: whitespace collapsed
