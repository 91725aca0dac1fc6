"""Contextual compression: relevant sentences kept in order, verbatim-checked LLM extraction, safe fallbacks."""

import logging
from collections.abc import Sequence

import pytest

from ragwright.model.chunk import Chunk
from ragwright.model.results import SearchResult
from ragwright.postprocess.compress import EmbeddingCompressor, LlmCompressor, apply_windows
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

PASSAGE = (
    "The warranty covers manufacturing defects for two years. "
    "Our office dog is named Biscuit and loves walks. "
    "Warranty claims need the original receipt and the serial number. "
    "The cafeteria serves soup on Fridays."
)


def result(text: str = PASSAGE, **meta: object) -> SearchResult:
    return SearchResult(Chunk(id="c1", document_id="d", text=text, position=0, metadata=dict(meta)), 1.0)


def test_embedding_compression_keeps_relevant_sentences_in_original_order() -> None:
    (out,) = EmbeddingCompressor(HashingEmbedder(), min_similarity=0.15).compress("warranty claims receipt", [result()])
    assert out.compressed_text is not None
    assert "Biscuit" not in out.compressed_text and "soup" not in out.compressed_text
    assert out.compressed_text.index("two years") < out.compressed_text.index("receipt")
    assert out.chunk.text == PASSAGE  # the original stays beside the compressed text


def test_embedding_compression_keeps_at_least_the_best_sentence_and_caps_the_count() -> None:
    (out,) = EmbeddingCompressor(HashingEmbedder(), min_similarity=0.99).compress("office dog walks", [result()])
    assert out.compressed_text == "Our office dog is named Biscuit and loves walks."
    (capped,) = EmbeddingCompressor(HashingEmbedder(), min_similarity=-1.0, max_sentences=2).compress(
        "warranty", [result()]
    )
    assert capped.compressed_text is not None and capped.compressed_text.count(".") == 2


class Broken(HashingEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> object:  # type: ignore[override]
        raise RuntimeError("model crashed")


def test_embedding_compression_failure_keeps_the_full_passage(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        (out,) = EmbeddingCompressor(Broken()).compress("warranty", [result()])
    assert out.compressed_text is None and "compression_failed" in caplog.text


def test_llm_compression_keeps_only_sentences_that_occur_in_the_passage() -> None:
    chat = ScriptedChat(
        [
            "Warranty claims need the original receipt and the serial number.\n"
            "Warranties last forever.",  # invented: dropped
        ]
    )
    (out,) = LlmCompressor(chat).compress("what do claims need", [result()])
    assert out.compressed_text == "Warranty claims need the original receipt and the serial number."


@pytest.mark.parametrize("reply", ["NONE", "Everything is covered by the warranty, always.", RuntimeError("down")])
def test_llm_compression_falls_back_to_the_full_passage(reply: object) -> None:
    (out,) = LlmCompressor(ScriptedChat([reply])).compress("q", [result()])
    assert out.compressed_text is None


def test_windows_replace_the_sentence_text() -> None:
    (out,) = apply_windows([result("one.", window="zero. one. two.")])
    assert out.chunk.text == "zero. one. two." and out.chunk.metadata["matched_sentence"] == "one."
    assert "window" not in out.chunk.metadata


def test_compression_in_the_pipeline_feeds_the_token_budget() -> None:
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(BytesSource({"w.md": f"# Warranty\n\n{PASSAGE}".encode()}))
    full = rag.search("warranty receipt serial", top_k=1)
    (short,) = rag.search("warranty receipt serial", top_k=1, use_compression=True, compression_min_similarity=0.3)
    assert full[0].compressed_text is None
    assert short.compressed_text is not None and len(short.compressed_text) < len(short.chunk.text)
    assert "Biscuit" not in short.compressed_text
