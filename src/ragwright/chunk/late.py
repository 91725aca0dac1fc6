"""Late chunking (Günther et al. 2024, "Late Chunking: Contextual Chunk Embeddings Using Long-Context
Embedding Models"): a chunk's vector pooled
from token embeddings computed over its document, not over the chunk alone.

The document's chunks (their embedded text: section path and context prefix included) are joined
and encoded in *macro-windows* of the embedder's window, neighbouring windows sharing ``overlap``
tokens (the "long late chunking" variant, for documents longer than the window). Each token's
embedding is taken from the window where it sits farthest from a cut: a window contributes its
tokens from ``overlap // 2`` after its start to ``overlap - overlap // 2`` before its end (the first
from the document's start, the last to its end). A chunk's vector is the mean of its tokens'
embeddings, L2-normalised. Sums are kept per chunk, so memory does not grow with the document.

Works with any embedder that exposes token outputs (:class:`~ragwright.models.embedders.base.TokenEmbedder`:
the local BERT-style ONNX embedders); queries are embedded as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder, TokenEmbedder

VERSION = "late/1"
_SEP = "\n\n"


def token_embedder_of(embedder: Embedder) -> TokenEmbedder:
    """*embedder* (or the embedder a cache wraps) as a token embedder, or a :class:`ConfigError`."""
    from ragwright.models.embedders.base import TokenEmbedder

    inner: Any = embedder
    while not isinstance(inner, TokenEmbedder) and hasattr(inner, "inner"):
        inner = inner.inner
    if not isinstance(inner, TokenEmbedder):
        raise ConfigError(
            f"late chunking needs token embeddings from a local BERT-style ONNX embedder (the default "
            f"MiniLM, or --embedder PATH to a model folder); {getattr(embedder, 'name', embedder)!r} gives none",
            field="late_chunking",
        )
    check = getattr(inner, "token_outputs", None)
    if callable(check) and not check():
        raise ConfigError(
            f"late chunking needs token embeddings, but {getattr(embedder, 'name', embedder)!r}'s ONNX graph pools "
            "its own output; export the encoder with last_hidden_state (a BERT-style export) or turn late chunking off",
            field="late_chunking",
        )
    return inner


def windows(n: int, size: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """Macro-windows over *n* tokens: ``(start, end, keep_from, keep_to)`` — the window encodes
    ``[start, end)`` and contributes the embeddings of ``[keep_from, keep_to)``; the kept ranges tile
    ``[0, n)`` exactly."""
    if n <= size:
        return [(0, n, 0, n)]
    out: list[tuple[int, int, int, int]] = []
    start = 0
    while True:
        end = min(start + size, n)
        keep_from = 0 if start == 0 else start + overlap // 2
        if end == n:
            out.append((start, end, keep_from, n))
            return out
        nxt = end - overlap
        out.append((start, end, keep_from, nxt + overlap // 2))
        start = nxt


class LateChunkEmbedder:
    """Vectors for a document's chunks by late chunking. *overlap* is in the embedder's tokens (default:
    a quarter of its window)."""

    def __init__(self, embedder: Embedder, overlap: int | None = None) -> None:
        self.embedder = embedder
        self.tokens = token_embedder_of(embedder)
        self.window = int(self.tokens.max_tokens)
        overlap = self.window // 4 if overlap is None else overlap
        if not 0 <= overlap <= self.window // 2:
            raise ConfigError.invalid("late_overlap_tokens", overlap, f"an integer from 0 to {self.window // 2}")
        self.overlap = overlap

    @property
    def signature(self) -> str:
        return f"{VERSION}:{self.window}/{self.overlap}"

    def embed(self, chunks: Sequence[Chunk]) -> Any:
        """One unit vector per chunk, in order: ``(len(chunks), dimension)`` float32."""
        import numpy as np

        dim = int(self.embedder.dimension)
        if not chunks:
            return np.zeros((0, dim), dtype=np.float32)
        texts = [c.text_for_embedding for c in chunks]
        spans: list[tuple[int, int]] = []
        at = 0
        for text in texts:
            spans.append((at, at + len(text)))
            at += len(text) + len(_SEP)
        ids, offsets = self.tokens.tokenize(_SEP.join(texts))
        # the chunk each token belongs to (-1: a separator): tokens and spans are both in text order
        owner = np.full(len(ids), -1, dtype=np.int64)
        k = 0
        for t, (a, b) in enumerate(offsets):
            while k < len(spans) and a >= spans[k][1]:
                k += 1
            if k < len(spans) and b > spans[k][0]:
                owner[t] = k
        sums = np.zeros((len(chunks), dim), dtype=np.float64)
        counts = np.zeros(len(chunks), dtype=np.int64)
        for start, end, keep_from, keep_to in windows(len(ids), self.window, self.overlap):
            hidden = self.tokens.token_embeddings(ids[start:end])[keep_from - start : keep_to - start]
            who = owner[keep_from:keep_to]
            inside = who >= 0
            np.add.at(sums, who[inside], hidden[inside])
            np.add.at(counts, who[inside], 1)
        out = np.empty((len(chunks), dim), dtype=np.float32)
        empty = [i for i in range(len(chunks)) if counts[i] == 0]
        if empty:  # no token (whitespace only): embedded alone
            out[empty] = self.embedder.embed_documents([texts[i] for i in empty])
        full = counts > 0
        pooled = sums[full] / counts[full, None]
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        out[full] = (pooled / norms).astype(np.float32)
        return out
