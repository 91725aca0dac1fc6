"""An OpenAI-compatible ``/embeddings`` client (OpenAI, vLLM, Ollama, llama.cpp server, TEI's OpenAI route).

Opt-in: nothing is contacted until a client is used. Base URL and key come from the arguments, else
``RAGWRIGHT_EMBED_BASE_URL`` / ``RAGWRIGHT_LLM_BASE_URL`` / ``OPENAI_BASE_URL`` and
``RAGWRIGHT_EMBED_API_KEY`` / ``RAGWRIGHT_LLM_API_KEY`` / ``OPENAI_API_KEY``. Texts are sent in batches
(default 64); vectors come back in input order as float32 and L2-normalised, as the
:class:`~ragwright.models.embedders.base.Embedder` protocol requires. The dimension is given or, when
omitted, learnt from the first answer.

The remote tokenizer is unknown here, so :meth:`count_tokens` is a deliberate over-estimate (a token
per three UTF-8 bytes) unless a counting function is given: chunks never exceed ``max_tokens``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError, RetrievalError
from ragwright.models._http import HttpClient, first_env, normalise_base_url

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["OpenAICompatEmbedder"]

_OPENAI = "https://api.openai.com/v1"


def _estimate_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // 3)


class OpenAICompatEmbedder:
    """Dense embeddings from an OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimension: int | None = None,
        request_dimensions: bool = False,
        max_tokens: int = 8191,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        count_tokens: Callable[[str], int] | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError.invalid("model", model, "a non-empty embedding model name")
        if dimension is not None and dimension < 1:
            raise ConfigError.invalid("dimension", dimension, "a positive integer or None (learnt from the server)")
        if request_dimensions and dimension is None:
            raise ConfigError("request_dimensions=True needs dimension=<the size to ask for>")
        if max_tokens < 1:
            raise ConfigError.invalid("max_tokens", max_tokens, "a positive integer")
        if batch_size < 1:
            raise ConfigError.invalid("batch_size", batch_size, "a positive integer")
        url = base_url or first_env("RAGWRIGHT_EMBED_BASE_URL", "RAGWRIGHT_LLM_BASE_URL", "OPENAI_BASE_URL") or _OPENAI
        url = normalise_base_url(url)
        key = api_key or first_env("RAGWRIGHT_EMBED_API_KEY", "RAGWRIGHT_LLM_API_KEY", "OPENAI_API_KEY")
        if url == _OPENAI and not key:
            raise ConfigError(
                "the OpenAI API needs a key: set RAGWRIGHT_EMBED_API_KEY or OPENAI_API_KEY, or give base_url "
                "(RAGWRIGHT_EMBED_BASE_URL) for a local server"
            )
        self.model = model.strip()
        self._dimension = dimension
        self.request_dimensions = request_dimensions
        self._max_tokens, self.batch_size = max_tokens, batch_size
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        self._count = count_tokens or _estimate_tokens
        self.http = HttpClient(
            url, key, timeout=timeout, max_retries=max_retries, backoff=backoff, error=RetrievalError,
            what="the embedding server",
        )  # fmt: skip
        self._lock = threading.Lock()
        self.requests = 0

    @property
    def name(self) -> str:
        suffix = f":{self._dimension}" if self.request_dimensions else ""
        prefixes = ""
        if self.query_prefix or self.document_prefix:
            prefixes = f"+q={self.query_prefix!r},d={self.document_prefix!r}"
        return f"openai-compat:{self.model}{suffix}{prefixes}"

    @property
    def dimension(self) -> int:
        """The vector size; when not given, learnt from the server (one request if nothing was embedded yet)."""
        if self._dimension is None:
            self.embed_query("dimension probe")  # learns it
        assert self._dimension is not None
        return self._dimension

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        return self._count(text)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed([self.document_prefix + t for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vectors = self._embed([self.query_prefix + text])
        vector: npt.NDArray[np.float32] = vectors[0]
        return vector

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        rows: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(texts), self.batch_size):
            rows.append(self._batch(texts[start : start + self.batch_size]))
        matrix = np.concatenate(rows, axis=0)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        out: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32, copy=False)
        return out

    def _batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self.request_dimensions:
            payload["dimensions"] = self._dimension
        data = self.http.post_json("/embeddings", payload)
        with self._lock:
            self.requests += 1
        try:
            items = sorted(data["data"], key=lambda item: int(item.get("index", 0)))
            matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RetrievalError(f"unexpected /embeddings answer from {self.http.base_url}: {str(data)[:300]}") from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise RetrievalError(
                f"the embedding server returned {matrix.shape[0] if matrix.ndim else 0} vectors for {len(texts)} texts"
            )
        with self._lock:
            if self._dimension is None:
                self._dimension = int(matrix.shape[1])
        if matrix.shape[1] != self._dimension:
            raise RetrievalError(
                f"the embedding server returned {matrix.shape[1]}-d vectors; expected {self._dimension}"
            )
        return matrix
