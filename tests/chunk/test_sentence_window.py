"""Sentence-window chunking: one sentence per chunk, its neighbours in the window, swapped in at retrieval."""

import pytest

from ragwright.chunk import make_chunker
from ragwright.errors import ConfigError
from ragwright.model.document import Document, Element, ElementKind
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

SENTENCES = [f"Sentence number {w} talks about topic {w}." for w in ("one", "two", "three", "four", "five")]


def doc() -> Document:
    return Document(
        id="d",
        elements=(
            Element(ElementKind.HEADING, "Intro", level=1),
            Element(ElementKind.PARAGRAPH, " ".join(SENTENCES)),
            Element(ElementKind.TABLE, "| a | b |\n| --- | --- |\n| 1 | 2 |"),
            Element(ElementKind.HEADING, "Other", level=1),
            Element(ElementKind.PARAGRAPH, "A separate section sentence stands alone here."),
        ),
    )


def test_one_chunk_per_sentence_with_a_window_inside_the_section() -> None:
    chunker = make_chunker(HashingEmbedder(), ChunkingOptions(strategy="sentence_window", window_sentences=1))
    chunks = chunker.chunk(doc())
    texts = [c.text for c in chunks]
    assert texts[:5] == SENTENCES
    assert any(t.startswith("| a | b |") for t in texts)  # the table stays whole
    assert chunks[0].metadata["window"] == f"{SENTENCES[0]} {SENTENCES[1]}"
    assert chunks[2].metadata["window"] == " ".join(SENTENCES[1:4])
    other = next(c for c in chunks if c.text.startswith("A separate"))
    assert other.metadata["window"] == other.text  # never crosses into another section
    assert chunker.fingerprint.startswith("sentence_window/")


def test_window_size_is_validated() -> None:
    with pytest.raises(ConfigError, match="window_sentences"):
        ChunkingOptions(strategy="sentence_window", window_sentences=0)


def test_retrieval_returns_the_window_and_keeps_the_matched_sentence() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder(), chunking=ChunkingOptions(strategy="sentence_window"))
    text = "# Intro\n\n" + " ".join(SENTENCES)
    rag.ingest(BytesSource({"d.md": text.encode()}))
    top = rag.search("topic three", top_k=1, use_hybrid_search=False)[0]
    assert top.chunk.metadata["matched_sentence"] == SENTENCES[2]
    assert top.chunk.text == " ".join(SENTENCES[0:5])
    plain = rag.search("topic three", top_k=1, use_hybrid_search=False, use_sentence_window=False)[0]
    assert plain.chunk.text == SENTENCES[2]
