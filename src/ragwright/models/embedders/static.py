"""A fast static embedder: WordLlama token vectors, averaged (numpy only, thousands of passages/s).

Good for tests, previews and very large corpora; retrieval quality is well below MiniLM.
Needs the ``fast`` extra (``pip install 'ragwright[fast]'``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ragwright._deps import require
from ragwright.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix = npt.NDArray[np.float32]
    FloatVector = npt.NDArray[np.float32]

__all__ = ["WordLlamaEmbedder"]

logger = logging.getLogger(__name__)

_DEFAULT_MAX_TOKENS = 512


def _import_wordllama() -> ModuleType:
    """Import wordllama without letting it configure logging.

    ``wordllama.inference`` calls ``logging.basicConfig(level=INFO)`` at import; a NullHandler
    on the root logger for the duration makes that call a no-op.
    """
    root = logging.getLogger()
    guard = logging.NullHandler() if not root.handlers else None
    if guard is not None:
        root.addHandler(guard)
    try:
        return require("wordllama", "fast", "the WordLlama static embedder")
    finally:
        if guard is not None:
            root.removeHandler(guard)


class WordLlamaEmbedder:
    """WordLlama (``l2_supercat``, 256-d by default): mean of static token vectors, L2-normalised.

    Loads the weights and tokenizer shipped inside the ``wordllama`` wheel with downloads
    disabled, so it works offline.  A static model has no context window; ``max_tokens`` is a
    chunking bound (512 by default), not a truncation point.  An empty text embeds to zeros.
    """

    def __init__(
        self,
        *,
        config: str = "l2_supercat",
        dim: int = 256,
        max_tokens: int = _DEFAULT_MAX_TOKENS,
        batch_size: int = 64,
    ) -> None:
        for field, value in (("dim", dim), ("max_tokens", max_tokens), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError.invalid(field, value, "a positive integer")
        self.config = config
        self._dim = dim
        self._max_tokens = max_tokens
        self.batch_size = batch_size
        self._model: Any = None
        self._table: Any = None  # the (vocab, dim) float32 token vectors
        self._tokenizer: Any = None  # a copy without padding or truncation
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"wordllama/{self.config}-{self._dim}"

    @property
    def spec(self) -> str | None:
        """``"wordllama"`` for the configuration ``load_embedder("wordllama")`` builds; else ``None``."""
        return "wordllama" if (self.config, self._dim) == ("l2_supercat", 256) else None

    @property
    def dimension(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def load(self) -> WordLlamaEmbedder:
        """Load weights and tokenizer now (otherwise done on first use)."""
        if self._model is not None:
            return self
        with self._lock:
            if self._model is None:
                wordllama = _import_wordllama()
                package_dir = Path(wordllama.__file__ or ".").resolve().parent
                try:
                    # cache_dir=<package dir>: weights are found in <package>/weights and the
                    # tokenizer in <package>/tokenizers (its default lookup uses a wrong folder).
                    model = wordllama.WordLlama.load(
                        config=self.config,
                        dim=self._dim,
                        cache_dir=package_dir,
                        disable_download=True,
                    )
                except (FileNotFoundError, ValueError, AttributeError) as exc:
                    raise ConfigError(
                        f"WordLlama config={self.config!r} dim={self._dim} is not available "
                        f"offline in {package_dir} ({exc}); the wheel ships l2_supercat at 256"
                    ) from exc
                tokenizers = require("tokenizers", "fast")
                tokenizer = tokenizers.Tokenizer.from_str(model.tokenizer.to_str())
                tokenizer.no_padding()
                tokenizer.no_truncation()
                self._table = model.embedding
                self._tokenizer = tokenizer
                self._model = model
                logger.debug("loaded WordLlama %s", self.name)
        return self

    def count_tokens(self, text: str) -> int:
        """Tokens of *text* in WordLlama's tokenizer, special tokens excluded."""
        self.load()
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        np = require("numpy", "fast")
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of strings; use embed_query for one")
        items = list(texts)
        if not items:
            empty: FloatMatrix = np.zeros((0, self._dim), dtype=np.float32)
            return empty
        self.load()
        table = self._table
        out: FloatMatrix = np.zeros((len(items), self._dim), dtype=np.float32)
        for begin in range(0, len(items), self.batch_size):
            # Mean of the token vectors per text, without padding: gather all ids of the batch,
            # then sum each text's run of rows (the same result as wordllama's masked mean).
            batch = items[begin : begin + self.batch_size]
            ids = [self._tokenizer.encode(t, add_special_tokens=False).ids for t in batch]
            counts = np.array([len(i) for i in ids], dtype=np.int64)
            rows = np.flatnonzero(counts)
            if rows.size == 0:
                continue
            flat = np.clip(np.fromiter((t for i in ids for t in i), dtype=np.int64), 0, len(table) - 1)
            starts = np.concatenate(([0], np.cumsum(counts[rows])[:-1]))
            sums = np.add.reduceat(table[flat], starts, axis=0)
            out[begin + rows] = sums / counts[rows, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        result: FloatMatrix = (out / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
        return result

    def embed_query(self, text: str) -> FloatVector:
        vector: FloatVector = self.embed_documents([text])[0]
        return vector

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder(name={self.name!r})"
