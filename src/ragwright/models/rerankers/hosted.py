"""A hosted reranker over HTTP, Cohere-style (Cohere, Jina, Voyage, vLLM's ``/rerank``, TEI's route).

Opt-in: nothing is contacted unless configured (``load_reranker("hosted:MODEL@URL")``). The request
is ``{model, query, documents, top_n}``; the answer ``{"results": [{"index", "relevance_score"}]}``
(a bare list of ``{"index", "score"}``, as Hugging Face TEI answers, is accepted too). The URL is the
endpoint itself or a base URL to which ``/rerank`` is appended. The key comes from the argument or
``RAGWRIGHT_RERANK_API_KEY``. Retries with backoff on 429/5xx/connection errors; any failure raises,
so :func:`ragwright.postprocess.rerank.rerank` keeps the retrieval order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragwright.errors import ConfigError, RetrievalError
from ragwright.models._http import HttpClient, first_env, normalise_base_url

__all__ = ["HostedReranker"]

UNSCORED = -1.0


class HostedReranker:
    """Scores (query, passage) pairs with a hosted rerank endpoint; satisfies the ``Reranker`` protocol."""

    def __init__(
        self,
        model: str,
        url: str,
        *,
        api_key: str | None = None,
        max_candidates: int = 100,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError.invalid("model", model, "a non-empty rerank model name such as 'rerank-v3.5'")
        if max_candidates < 1:
            raise ConfigError.invalid("max_candidates", max_candidates, "a positive integer")
        endpoint = normalise_base_url(url, "url")
        if not endpoint.endswith("/rerank"):
            endpoint += "/rerank"
        self.model, self.max_candidates = model.strip(), max_candidates
        self.http = HttpClient(
            endpoint,
            api_key or first_env("RAGWRIGHT_RERANK_API_KEY"),
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            error=RetrievalError,
            what="the rerank server",
        )

    @property
    def name(self) -> str:
        return f"hosted:{self.model}"

    @property
    def url(self) -> str:
        return self.http.base_url

    def load(self) -> HostedReranker:
        """Nothing to load (no request is made before the first query); returns ``self``."""
        return self

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        head = list(passages[: self.max_candidates])
        if not head:
            return []
        payload = {"model": self.model, "query": query, "documents": head, "top_n": len(head)}
        data = self.http.post_json("", payload)
        scores = _parse(data, len(head))
        return scores + [UNSCORED] * (len(passages) - len(head))


def _parse(data: Any, count: int) -> list[float]:
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise RetrievalError(f"unexpected rerank answer: {str(data)[:300]}")
    scores = [UNSCORED] * count
    for item in results:
        try:
            index = int(item["index"])
            value = float(item["relevance_score"] if "relevance_score" in item else item["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RetrievalError(f"unexpected rerank result: {str(item)[:200]}") from exc
        if not 0 <= index < count:
            raise RetrievalError(f"the rerank server returned index {index} for {count} documents")
        scores[index] = value
    return scores
