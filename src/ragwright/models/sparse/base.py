"""The learned-sparse seam: a :class:`SparseVector` and the :class:`SparseEncoder` protocol.

A sparse vector maps vocabulary term ids to positive weights (SPLADE's expanded terms: Formal,
Piwowarski & Clinchant 2021, "SPLADE: Sparse Lexical and Expansion Model for First Stage Ranking"); a
query and a passage score by their dot product over an inverted index (:mod:`ragwright.index.sparse`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["SparseEncoder", "SparseVector"]


@dataclass(frozen=True, eq=False)
class SparseVector:
    """Term ids (``int32``, strictly increasing) and their weights (``float32``, > 0), aligned."""

    indices: npt.NDArray[np.int32]
    values: npt.NDArray[np.float32]

    @classmethod
    def from_dict(cls, weights: dict[int, float]) -> SparseVector:
        """A vector from ``{term id: weight}``; zero and negative weights are dropped."""
        import numpy as np

        items = sorted((int(t), float(w)) for t, w in weights.items() if w > 0)
        return cls(np.array([t for t, _ in items], dtype=np.int32), np.array([w for _, w in items], dtype=np.float32))

    def to_dict(self) -> dict[int, float]:
        return dict(zip(self.indices.tolist(), self.values.tolist(), strict=True))

    def dot(self, other: SparseVector) -> float:
        """The dot product with *other* (the score of one passage for one query)."""
        import numpy as np

        common, a, b = np.intersect1d(self.indices, other.indices, assume_unique=True, return_indices=True)
        return (
            float(np.dot(self.values[a].astype(np.float64), other.values[b].astype(np.float64))) if common.size else 0.0
        )

    def __len__(self) -> int:
        return int(self.indices.size)

    def __eq__(self, other: object) -> bool:
        import numpy as np

        return (
            isinstance(other, SparseVector)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.values, other.values)
        )

    __hash__ = None  # type: ignore[assignment]


@runtime_checkable
class SparseEncoder(Protocol):
    """A learned sparse encoder (SPLADE and the like).

    ``name`` identifies the model and everything that changes its vectors; stores record it and drop
    vectors another encoder made. Implementations load weights lazily (first use or ``load()``).
    """

    @property
    def name(self) -> str: ...

    @property
    def vocab_size(self) -> int: ...

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """One sparse vector per passage."""
        ...

    def encode_query(self, text: str) -> SparseVector:
        """The sparse vector of one query (always the raw query text, never a rewrite or a hypothesis)."""
        ...
