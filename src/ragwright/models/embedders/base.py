"""The embedder seam: what every dense embedding model offers the rest of ragwright."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]
    FloatVector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """A dense text embedder.

    ``name`` identifies the model *and* everything that changes its vectors (weights, quantization,
    pooling); it is recorded in the registry so a model change re-embeds exactly what it affects.
    Vectors are float32 and L2-normalised, so a dot product is the cosine similarity.
    Implementations load weights lazily (first use or ``load()``), never at import.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """The model's window in its own tokens; chunkers never produce longer chunks."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens *text* takes in the model's own tokenizer, special tokens excluded."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed passages; returns an ``(n, dimension)`` float32 array of unit vectors."""
        ...

    def embed_query(self, text: str) -> FloatVector:
        """Embed one query; returns a ``(dimension,)`` float32 unit vector."""
        ...


@runtime_checkable
class Respecifiable(Protocol):
    """An embedder that can say how to build it again: the ``spec`` :func:`~ragwright.models.embedders.load_embedder`
    takes (``"default"``, ``"wordllama"``, a model folder). A store records it when the embedder is bound
    (``bind_embedder(..., spec=)``), so whoever reopens the store loads the same model without guessing
    it from its name."""

    @property
    def spec(self) -> str | None:
        """The spec that rebuilds this embedder, or ``None`` when no spec can."""
        ...


def embedder_spec(embedder: object) -> str | None:
    """*embedder*'s :class:`Respecifiable` spec; ``None`` when it has none (e.g. a remote or test embedder)."""
    return embedder.spec if isinstance(embedder, Respecifiable) else None


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that also gives token-level outputs (late chunking, :mod:`ragwright.chunk.late`):
    the local BERT-style ONNX embedders."""

    @property
    def max_tokens(self) -> int: ...

    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids of *text* (no special tokens, never truncated) and each token's character span."""
        ...

    def token_embeddings(self, ids: Sequence[int]) -> FloatMatrix:
        """One row per id (at most ``max_tokens`` ids, encoded as one sequence with the special tokens)."""
        ...
