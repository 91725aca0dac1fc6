"""Test doubles. These are for *unit tests* only and are never used by the product itself.

:class:`HashingEmbedder` maps words to hashed dimensions (a bag of words), which makes similarity
predictable in tests without loading a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """A deterministic bag-of-words embedder for tests (not a product feature)."""

    def __init__(self, dimension: int = 256, max_tokens: int = 128, name: str = "test/hashing") -> None:
        self._dimension, self._max_tokens, self._name = dimension, max_tokens, name
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        import numpy as np

        vec = np.zeros(self._dimension, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vec[h % self._dimension] += 1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        self.calls += 1
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)
