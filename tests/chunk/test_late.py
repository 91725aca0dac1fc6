"""Late chunking: chunk vectors pooled from token embeddings computed over the whole document."""

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ragwright.chunk import make_chunker
from ragwright.chunk.late import LateChunkEmbedder, windows
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.models.embedders import OnnxEmbedder
from ragwright.options import ChunkingOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

_WORD = re.compile(r"\w+")


class TokenHashingEmbedder(HashingEmbedder):
    """A token embedder double: a word is a token, its embedding a one-hot row of its hash."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.windows: list[list[int]] = []

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        found = list(_WORD.finditer(text))
        return [hash(m.group().lower()) % self.dimension for m in found], [m.span() for m in found]

    def token_embeddings(self, ids: Sequence[int]) -> Any:
        assert len(ids) <= self.max_tokens
        self.windows.append(list(ids))
        rows = np.zeros((len(ids), self.dimension), dtype=np.float32)
        rows[np.arange(len(ids)), list(ids)] = 1.0
        return rows


def test_windows_tile_the_tokens_and_share_the_overlap() -> None:
    for n in (1, 10, 100, 101, 250, 1000):
        for size, overlap in ((100, 0), (100, 20), (100, 50), (7, 3)):
            ws = windows(n, size, overlap)
            kept = [i for _, _, a, b in ws for i in range(a, b)]
            assert kept == list(range(n))  # every token exactly once, in order
            for (s, e, a, b), nxt in zip(ws, [*ws[1:], None], strict=True):
                assert e - s <= size and s <= a <= b <= e
                if nxt is not None:
                    assert e - nxt[0] == overlap  # neighbours share exactly the overlap
            assert ws[0][0] == 0 and ws[-1][1] == n


def test_a_chunk_vector_is_the_mean_of_its_tokens_across_windows() -> None:
    embedder = TokenHashingEmbedder(dimension=64, max_tokens=16)
    texts = [f"alpha beta gamma delta {i} " * 3 for i in range(5)]  # 5 chunks of 15 words: 5 windows or more
    chunks = [Chunk.create("d", t.strip(), i) for i, t in enumerate(texts)]
    vectors = LateChunkEmbedder(embedder, overlap=4).embed(chunks)
    assert len(embedder.windows) > 4 and all(len(w) <= 16 for w in embedder.windows)
    for chunk, vector in zip(chunks, vectors, strict=True):
        ids, _ = embedder.tokenize(chunk.text)
        expected = np.bincount(ids, minlength=64).astype(np.float32)
        assert vector == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)


def test_late_chunking_carries_document_context_into_each_chunk() -> None:
    """The classic case: a chunk that says "its" about Berlin is found by "Berlin" once it is late-chunked."""
    embedder = OnnxEmbedder.default()
    texts = [
        "Berlin is the capital and largest city of Germany, both by area and by population.",
        "Its more than 3.85 million inhabitants make it the European Union's most populous city.",
    ]
    chunks = [Chunk.create("d", t, i) for i, t in enumerate(texts)]
    late = LateChunkEmbedder(embedder).embed(chunks)
    alone = embedder.embed_documents(texts)
    query = embedder.embed_query("Berlin")
    assert float(late[1] @ query) > float(alone[1] @ query) + 0.15  # measured 0.49 against 0.22
    single = LateChunkEmbedder(embedder).embed(chunks[:1])[0]
    assert float(single @ alone[0]) > 0.98  # one chunk alone: its own embedding, but for CLS/SEP in the mean


def test_late_chunking_needs_token_embeddings() -> None:
    with pytest.raises(ConfigError, match="late chunking needs token embeddings"):
        make_chunker(HashingEmbedder(), ChunkingOptions(late_chunking=True))
    with pytest.raises(ConfigError, match="late_overlap_tokens"):
        make_chunker(TokenHashingEmbedder(max_tokens=32), ChunkingOptions(late_chunking=True, late_overlap_tokens=17))
    chunker = make_chunker(TokenHashingEmbedder(max_tokens=32), ChunkingOptions(late_chunking=True))
    assert "+late/1:32/" in chunker.fingerprint


def test_ingestion_stores_late_vectors_and_never_reuses_them_for_plain_ones() -> None:
    md = b"# Pump\n\nThe pump moves water.\n\n## Care\n\nOil it every year.\n"
    store, embedder = MemoryStore(), TokenHashingEmbedder(max_tokens=32)
    options = ChunkingOptions(late_chunking=True, late_overlap_tokens=8)
    with Rag(store, embedder, chunking=options) as rag:
        report = rag.ingest(BytesSource({"a.md": md}))
        assert report.chunks == 2
        chunks = store.document_chunks("a.md")
        expected = rag.chunker.late.embed(chunks)  # type: ignore[attr-defined]
        stored = store.get_vectors([c.id for c in chunks])
        for c, v in zip(chunks, expected, strict=True):
            assert stored[c.id] == pytest.approx(v, abs=1e-6)
    with Rag(store, embedder) as rag:  # late chunking off: same embedded texts, but no vector is reused
        report = rag.ingest(BytesSource({"a.md": md}))
    assert report.updated == 1 and report.embeddings_reused == 0
    stored = store.get_vectors([c.id for c in store.document_chunks("a.md")])
    for c in store.document_chunks("a.md"):
        assert stored[c.id] == pytest.approx(embedder.embed_documents([c.text_for_embedding])[0], abs=1e-6)
