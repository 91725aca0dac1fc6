"""Web search for corrective RAG: the :class:`WebSearch` seam and an opt-in HTTP JSON client.

Nothing here is contacted unless configured. Web results are untrusted text: they become
:class:`SearchResult` objects whose chunks say so (``metadata["origin"] == "web"``,
``metadata["untrusted"] is True``), are never stored in the index and never cached.

:class:`HttpJsonWebSearch` speaks the common shape of hosted search APIs (Tavily and compatible):
``POST {"query": …, "max_results": n}`` with a bearer key, reply ``{"results": [{"url", "title",
"content" | "snippet", "score"?}, …]}``.
"""

from __future__ import annotations

import hashlib
import json
import math
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ragwright.errors import ConfigError, RetrievalError
from ragwright.model.chunk import Chunk
from ragwright.model.identity import PUBLIC, Identity
from ragwright.model.results import ArmHit, SearchResult


@dataclass(frozen=True, slots=True)
class WebResult:
    """One web hit."""

    url: str
    title: str
    content: str
    score: float | None = None


@runtime_checkable
class WebSearch(Protocol):
    """A web search provider (blocking; called off the event loop)."""

    @property
    def name(self) -> str: ...

    def search(self, query: str, max_results: int) -> list[WebResult]: ...


def web_search_results(hits: list[WebResult], identity: Identity) -> list[SearchResult]:
    """Web hits as search results, labelled untrusted, visible only to this call's caller."""
    out = []
    for rank, hit in enumerate(hits, start=1):
        score = float(hit.score) if hit.score is not None and math.isfinite(hit.score) else 1.0 / rank
        digest = hashlib.sha256(hit.url.encode("utf-8")).hexdigest()[:24]
        chunk = Chunk(
            id=f"web:{digest}",
            document_id=f"web:{hit.url}",
            text=hit.content,
            position=0,
            metadata={"origin": "web", "untrusted": True, "url": hit.url, "title": hit.title},
            tenant=identity.tenant,
            acl=(PUBLIC,),
        )
        out.append(SearchResult(chunk, score, arms={"web": ArmHit(rank, score)}))
    return out


def parse_results(payload: Any, results_field: str = "results") -> list[WebResult]:
    """Validate a provider reply into :class:`WebResult` objects (entries without text are dropped)."""
    items = payload.get(results_field) if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise RetrievalError(f"web search reply has no {results_field!r} list")
    out = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        url, text = item.get("url"), item.get("content") or item.get("snippet") or ""
        if not isinstance(url, str) or not isinstance(text, str) or not text.strip():
            continue
        raw = item.get("score")
        score = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
        out.append(WebResult(url, str(item.get("title") or url), text.strip(), score))
    return out


class HttpJsonWebSearch:
    """A generic JSON-over-HTTP search client (opt-in; e.g. ``https://api.tavily.com/search``)."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        results_field: str = "results",
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError.invalid("url", url, "an http:// or https:// address")
        if not timeout_s > 0:
            raise ConfigError.invalid("timeout_s", timeout_s, "a number of seconds > 0")
        self.url, self.api_key, self.timeout_s = url, api_key, timeout_s
        self.results_field, self.extra = results_field, dict(extra or {})

    @property
    def name(self) -> str:
        return f"http-json:{self.url}"

    def search(self, query: str, max_results: int) -> list[WebResult]:
        body = json.dumps({**self.extra, "query": query, "max_results": max_results}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise RetrievalError(f"web search at {self.url} failed: {exc}") from exc
        return parse_results(payload, self.results_field)[:max_results]
