"""Properties every chunker keeps, on generated documents (hypothesis).

* no text lost: the chunk texts, each without its overlap prefix, concatenate to the element texts
  (whitespace ignored; a table header repeated in each row group, and the lead-in before it, count once);
* bounds: every chunk, with its section prefix and overlap, is within ``max_tokens`` cl100k tokens
  and within the embedder's window;
* ids are deterministic and unique, links and positions consistent;
* overlap repeats the end of the previous chunk and never crosses a heading.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.chunk import BaseChunker, RecursiveChunker, SemanticChunker, StructuralChunker
from ragwright.chunk.structural import lead_in, sections
from ragwright.chunk.tokens import count_tokens as cl100k
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind
HEADER = "| HEADCOLA | HEADCOLB |\n| --- | --- |"
_HEADER_FLAT = re.sub(r"\s+", "", HEADER)

plain_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)
odd_word = st.sampled_from(
    ["42", "3.14", "naïve", "東京タワー", "🙂", "x" * 120, "https://e.com/" + "a" * 80, "(note)"]
)
word = st.one_of(plain_word, plain_word, plain_word, plain_word, odd_word)
sentence = st.builds(
    lambda ws, end: " ".join(ws).capitalize() + end,
    st.lists(word, min_size=1, max_size=18),
    st.sampled_from([".", "!", "?", ""]),
)
prose = st.builds(
    lambda ss, sep: sep.join(ss), st.lists(sentence, min_size=1, max_size=12), st.sampled_from([" ", "\n", "  "])
)
code_line = st.builds(
    lambda indent, ws: "    " * indent + " ".join(ws), st.integers(0, 2), st.lists(plain_word, max_size=8)
)
code = st.builds(lambda lines: "\n".join(lines), st.lists(code_line, min_size=1, max_size=25)).filter(str.strip)
row = st.builds(
    lambda a, b: f"| {' '.join(a)} | {' '.join(b)} |", st.lists(word, max_size=4), st.lists(word, max_size=6)
)
table = st.builds(lambda rows: HEADER + "\n" + "\n".join(rows), st.lists(row, min_size=1, max_size=40))

content = st.one_of(
    st.builds(lambda t: Element(E.PARAGRAPH, t), prose),
    st.builds(lambda t: Element(E.PARAGRAPH, t), prose),
    st.builds(lambda t: Element(E.QUOTE, t), prose),
    st.builds(lambda t, lvl: Element(E.LIST_ITEM, t, level=lvl), sentence.filter(str.strip), st.integers(1, 2)),
    st.builds(lambda t: Element(E.CODE, t), code),
    st.builds(lambda t: Element(E.TABLE, t), table),
    st.just(Element(E.FOOTER, "page footer")),
)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    elements: list[Element] = []
    page = 1
    for i in range(draw(st.integers(1, 14))):
        if draw(st.integers(0, 4)) == 0:
            elements.append(Element(E.HEADING, f"Heading {i} {draw(plain_word)}", level=draw(st.integers(1, 3))))
            continue
        element = draw(content)
        page += draw(st.integers(0, 1))
        elements.append(Element(element.kind, element.text, level=element.level, page=page))
    return Document("doc-" + draw(plain_word), tuple(elements))


@st.composite
def setups(draw: st.DrawFn) -> tuple[BaseChunker, HashingEmbedder, ChunkingOptions]:
    window = draw(st.integers(12, 120))
    embedder = HashingEmbedder(max_tokens=window)
    max_tokens = draw(st.integers(16, 200))
    mode = draw(st.sampled_from(["none", "sentences", "tokens"]))
    options = ChunkingOptions(
        max_tokens=max_tokens,
        min_tokens=draw(st.integers(0, 15)),
        prefix_section_path=draw(st.booleans()),
        overlap=mode,
        overlap_sentences=draw(st.integers(1, 2)),
        overlap_tokens=draw(st.integers(1, max_tokens // 2)),
        breakpoint_percentile=draw(st.sampled_from([50.0, 90.0, 100.0])),
    )
    kind = draw(st.sampled_from(["structural", "recursive", "semantic"]))
    chunker: BaseChunker
    if kind == "semantic":
        chunker = SemanticChunker(embedder, options, batch_size=draw(st.integers(1, 8)))
    elif kind == "recursive":
        chunker = RecursiveChunker.for_embedder(embedder, options)
    else:
        chunker = StructuralChunker.for_embedder(embedder, options)
    return chunker, embedder, options


def flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def expected_text(document: Document) -> str:
    kept = [e.text for e in document.elements if e.kind not in (E.HEADING, E.TITLE, E.FOOTER, E.HEADER, E.IMAGE)]
    kept = [t for t in kept if t.strip()]
    if not kept:
        kept = [e.text for e in document.elements if e.kind is E.HEADING]
    text = flat("".join(kept))
    for lead in lead_ins(document):
        text = text.replace(flat(lead) + _HEADER_FLAT, _HEADER_FLAT)
    return text.replace(_HEADER_FLAT, "")


def lead_ins(document: Document) -> set[str]:
    """The lead-ins the structural chunker repeats over a table's row groups."""
    return {lead for s in sections(document) for i in range(len(s.blocks)) if (lead := lead_in(s.blocks, i))}


def own_text(chunk: Chunk) -> str:
    shared = chunk.metadata.get("overlap_chars", 0)
    assert isinstance(shared, int)
    return chunk.text[shared:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents(), setup=setups())
def test_chunker_properties(document: Document, setup: tuple[BaseChunker, HashingEmbedder, ChunkingOptions]) -> None:
    chunker, embedder, options = setup
    chunks = chunker.chunk(document)

    # no text lost, nothing repeated but overlap, table headers and a table's lead-in before its header
    got = flat("".join(own_text(c) for c in chunks))
    for lead in lead_ins(document):
        got = got.replace(flat(lead) + _HEADER_FLAT, _HEADER_FLAT)
    assert got.replace(_HEADER_FLAT, "") == expected_text(document)

    for c in chunks:
        # bounds, prefix and overlap included
        for text in (c.text, c.text_for_embedding):
            assert cl100k(text) <= options.max_tokens
            assert embedder.count_tokens(text) <= embedder.max_tokens
        assert c.text.strip()
        assert c.page is None or (c.page_end is not None and c.page <= c.page_end)

    # deterministic, unique ids; consistent links and positions
    again = chunker.chunk(document)
    assert [c.id for c in again] == [c.id for c in chunks]
    assert len({c.id for c in chunks}) == len(chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for a, b in itertools.pairwise(chunks):
        assert a.next_id == b.id and b.prev_id == a.id
    if chunks:
        assert chunks[0].prev_id is None and chunks[-1].next_id is None

    # overlap: the end of the previous chunk, within one section, recorded length
    for a, b in itertools.pairwise(chunks):
        shared = b.metadata.get("overlap_chars", 0)
        assert isinstance(shared, int)
        if options.overlap == "none":
            assert "overlap_chars" not in b.metadata
        if shared:
            assert a.section_path == b.section_path
            assert flat(a.text).endswith(flat(b.text[:shared]))
    if chunks and options.overlap != "none":
        assert chunks[0].metadata["overlap_chars"] == 0


# -- examples every chunker shares ---------------------------------------------------------------------
CHUNKERS = {
    "structural": lambda emb, opt: StructuralChunker.for_embedder(emb, opt),
    "recursive": lambda emb, opt: RecursiveChunker.for_embedder(emb, opt),
    "semantic": lambda emb, opt: SemanticChunker(emb, opt),
}


@pytest.mark.parametrize("kind", CHUNKERS)
def test_cl100k_budget_binds_when_smaller_than_the_window(kind: str) -> None:
    embedder = HashingEmbedder(max_tokens=10_000)
    text = " ".join(f"Word{i} is here, naïvely 東京." for i in range(200))
    chunks = CHUNKERS[kind](embedder, ChunkingOptions(max_tokens=50)).chunk(
        Document("d", (Element(E.HEADING, "Title", level=1), Element(E.PARAGRAPH, text)))
    )
    assert len(chunks) > 10
    assert all(cl100k(c.text_for_embedding) <= 50 for c in chunks)
    assert max(cl100k(c.text_for_embedding) for c in chunks) >= 40  # chunks are filled, not tiny


@pytest.mark.parametrize("kind", CHUNKERS)
def test_lists_stay_whole_when_they_fit(kind: str) -> None:
    items = [Element(E.LIST_ITEM, f"item {i} of the list", level=1) for i in range(6)]
    filler = Element(E.PARAGRAPH, " ".join(f"filler{i}." for i in range(35)))
    chunks = CHUNKERS[kind](HashingEmbedder(max_tokens=40), ChunkingOptions(min_tokens=0)).chunk(
        Document("d", (filler, *items, filler))
    )
    listing = "\n".join(e.text for e in items)
    assert sum(listing in c.text for c in chunks) == 1


@pytest.mark.parametrize("kind", CHUNKERS)
@pytest.mark.parametrize("mode", ["sentences", "tokens"])
def test_overlap_repeats_the_previous_end_and_stops_at_headings(kind: str, mode: str) -> None:
    text = " ".join(f"Sentence {i} has words." for i in range(30))
    d = Document(
        "d",
        (
            Element(E.HEADING, "A", level=1),
            Element(E.PARAGRAPH, text),
            Element(E.HEADING, "B", level=1),
            Element(E.PARAGRAPH, text),
        ),
    )
    options = ChunkingOptions(overlap=mode, overlap_tokens=8, min_tokens=0)
    chunks = CHUNKERS[kind](HashingEmbedder(max_tokens=40), options).chunk(d)
    firsts = {c.section_path: c for c in reversed(chunks)}
    assert all(c.metadata["overlap_chars"] == 0 for c in firsts.values())
    others = [c for c in chunks if c not in firsts.values()]
    assert others and all(c.metadata["overlap_chars"] > 0 for c in others)
    for a, b in itertools.pairwise(chunks):
        shared = b.metadata["overlap_chars"]
        assert isinstance(shared, int)
        if shared:
            repeated = b.text[:shared].strip()
            assert a.text.endswith(repeated)
            if mode == "sentences":
                assert repeated.startswith("Sentence ")


def test_overlap_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="overlap"):
        ChunkingOptions(overlap="lots")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="overlap_sentences"):
        ChunkingOptions(overlap_sentences=3)
    with pytest.raises(ConfigError, match="overlap_tokens"):
        ChunkingOptions(overlap="tokens", overlap_tokens=300)
    with pytest.raises(ConfigError, match="strategy"):
        ChunkingOptions(strategy="fixed")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="sentence_buffer"):
        ChunkingOptions(sentence_buffer=5)
    assert ChunkingOptions(max_tokens=20).overlap_tokens == 40  # unused default is not checked against max
