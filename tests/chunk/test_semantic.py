from __future__ import annotations

import pytest

from ragwright.chunk import SemanticChunker, make_chunker
from ragwright.chunk.tokens import count_tokens as cl100k
from ragwright.errors import ConfigError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions
from ragwright.testing.doubles import HashingEmbedder

E = ElementKind

CATS = [
    "Cats are small domestic felines that purr and sleep.",
    "Domestic cats purr when felines feel safe and sleep.",
    "Many felines sleep most of the day, and cats purr softly.",
    "A sleeping cat may purr; domestic felines love sleep.",
    "Cats groom their fur and felines purr before sleep.",
    "Young cats play, then the felines purr and sleep.",
]
BONDS = [
    "Bond yields rose as central banks raised interest rates.",
    "Higher interest rates push bond yields and bank rates up.",
    "Central banks set interest rates that move bond markets.",
    "Investors sold bonds when interest rates and yields rose.",
    "Bank rates and bond yields track central bank interest policy.",
    "Rising rates lower bond prices and lift yields for banks.",
]


def doc(*elements: Element) -> Document:
    return Document("doc", tuple(elements))


def test_splits_where_the_topic_changes() -> None:
    d = doc(Element(E.PARAGRAPH, " ".join(CATS + BONDS)))
    chunks = SemanticChunker(HashingEmbedder(max_tokens=200), ChunkingOptions(min_tokens=8)).chunk(d)
    assert [c.text for c in chunks] == [" ".join(CATS), " ".join(BONDS)]
    assert SemanticChunker.version == "semantic/3"
    assert chunks[0].next_id == chunks[1].id


def test_breakpoint_percentile_100_never_splits_on_topic() -> None:
    d = doc(Element(E.PARAGRAPH, " ".join(CATS + BONDS)))
    options = ChunkingOptions(min_tokens=8, breakpoint_percentile=100.0)
    assert len(SemanticChunker(HashingEmbedder(max_tokens=200), options).chunk(d)) == 1


def test_max_bound_always_holds() -> None:
    embedder = HashingEmbedder(max_tokens=30)
    d = doc(Element(E.PARAGRAPH, " ".join(CATS * 5)))
    chunks = SemanticChunker(embedder, ChunkingOptions(max_tokens=40)).chunk(d)
    assert len(chunks) > 3
    assert all(embedder.count_tokens(c.text) <= 30 and cl100k(c.text) <= 40 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == " ".join(CATS * 5).split()


def test_min_bound_merges_tiny_segments() -> None:
    sentences = [CATS[0], "Bonds.", CATS[1], "Rates rose.", CATS[2]]
    d = doc(Element(E.PARAGRAPH, " ".join(sentences)))
    chunks = SemanticChunker(HashingEmbedder(max_tokens=200), ChunkingOptions(min_tokens=30)).chunk(d)
    assert all(cl100k(c.text) >= 30 for c in chunks)


def test_tables_code_and_lists_are_atomic() -> None:
    table = "| animal | sound |\n| --- | --- |\n| cat | purr |\n| bond | yield |"
    code = "def rates():\n    return 'bond yields'"
    d = doc(
        Element(E.PARAGRAPH, " ".join(CATS[:3])),
        Element(E.TABLE, table),
        Element(E.LIST_ITEM, "banks raise rates", level=1),
        Element(E.LIST_ITEM, "cats purr", level=1),
        Element(E.CODE, code),
        Element(E.PARAGRAPH, " ".join(BONDS[:3])),
    )
    chunks = SemanticChunker(HashingEmbedder(max_tokens=200), ChunkingOptions(min_tokens=0)).chunk(d)
    texts = [c.text for c in chunks]
    assert sum(table in t for t in texts) == 1
    assert sum(code in t for t in texts) == 1
    assert sum("banks raise rates\ncats purr" in t for t in texts) == 1


def test_headings_are_hard_boundaries_and_windows_are_batched() -> None:
    embedder = HashingEmbedder(max_tokens=200)
    d = doc(
        Element(E.HEADING, "Cats", level=1),
        Element(E.PARAGRAPH, " ".join(CATS)),
        Element(E.HEADING, "Bonds", level=1),
        Element(E.PARAGRAPH, " ".join(BONDS)),
    )
    options = ChunkingOptions(breakpoint_percentile=100.0)  # no topic split inside a section
    chunks = SemanticChunker(embedder, options, batch_size=5).chunk(d)
    assert [c.section_path for c in chunks] == [("Cats",), ("Bonds",)]
    assert embedder.calls == 3  # 12 windows in batches of 5


def test_make_chunker_and_validation() -> None:
    embedder = HashingEmbedder()
    assert isinstance(make_chunker(embedder, ChunkingOptions(strategy="semantic")), SemanticChunker)
    with pytest.raises(ConfigError, match="batch_size"):
        SemanticChunker(embedder, batch_size=0)
    with pytest.raises(ConfigError, match="breakpoint_percentile"):
        ChunkingOptions(breakpoint_percentile=0)


@pytest.mark.slow
def test_real_embedder_finds_the_topic_change() -> None:
    from ragwright.models.embedders import load_embedder

    embedder = load_embedder("default")
    pets = [
        "My cat sleeps on the sofa all afternoon.",
        "She purrs loudly whenever I scratch behind her ears.",
        "At night the kitten chases a toy mouse around the room.",
        "Our vet says indoor cats live longer and healthier lives.",
        "The cat's favourite spot is the sunny windowsill.",
    ]
    volcano = [
        "Magma rises through the crust and erupts as lava.",
        "The volcano released ash clouds that grounded flights.",
        "Seismologists recorded tremors before the eruption began.",
        "Pyroclastic flows raced down the mountain's slopes.",
        "Lava flows cooled into black basalt fields.",
    ]
    d = doc(Element(E.PARAGRAPH, " ".join(pets + volcano)))
    chunks = SemanticChunker(embedder, ChunkingOptions(min_tokens=20)).chunk(d)
    assert [c.text for c in chunks] == [" ".join(pets), " ".join(volcano)]
    assert all(embedder.count_tokens(c.text_for_embedding) <= embedder.max_tokens for c in chunks)
