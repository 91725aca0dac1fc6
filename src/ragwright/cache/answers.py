"""The answer cache (exact match): a final answer with its citations, for the same
question, options, models, prompt version, index version and ACL signature.

Only answers that passed their checks are stored: never a decline, an answer the groundedness check
rejected (``verified is False``), one with invalid or missing citations, one built on web content,
or one to a time-sensitive question ("today", "latest" …), which must be answered fresh.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ragwright._sync import to_thread
from ragwright.cache.codec import AnswerCodec
from ragwright.cache.keys import Uncacheable, canonical, make_key, normalize_query
from ragwright.cache.options import CacheOptions
from ragwright.cache.tiered import TieredCache
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse

log = logging.getLogger(__name__)

_TIME_SENSITIVE = re.compile(
    r"\b(today|tonight|now|current(ly)?|latest|recent(ly)?|yesterday|tomorrow|this (week|month|year))\b", re.I
)


def answer_cacheable(response: RagResponse) -> bool:
    """A verified, cited answer from the indexed documents (never a decline or a failed check)."""
    return (
        bool(response.answer.strip())
        and not response.declined
        and getattr(response, "verified", None) is not False
        and not getattr(response, "invalid_citations", ())
        and not getattr(response, "uncited", False)
        and not any(s.chunk.metadata.get("origin") == "web" for s in response.sources)
    )


class AnswerCache:
    """Exact-match answer cache; call :meth:`get_or_create` around the answer step of ``ask``."""

    def __init__(
        self,
        cache: TieredCache,
        *,
        index_version: Callable[[], int],
        models: Mapping[str, str],
        options: CacheOptions | None = None,
    ) -> None:
        self.cache, self.index_version = cache, index_version
        self.models = dict(sorted(models.items()))
        self.options = options or CacheOptions()
        self._codec = AnswerCodec()

    async def get_or_create(
        self,
        question: str,
        options: Any,
        identity: Identity,
        compute: Callable[[], Awaitable[RagResponse]],
    ) -> RagResponse:
        if _TIME_SENSITIVE.search(question):
            return await compute()
        version = await to_thread(self.index_version)
        try:
            key = make_key(
                "answer",
                namespace=self.options.namespace,
                index_version=version,
                identity=identity,
                parts={
                    "question": normalize_query(question),
                    "options": canonical(options),
                    "models": self.models,
                    "prompt_version": self.options.prompt_version,
                },
            )
        except Uncacheable as exc:
            log.debug("cache_bypass: %s", exc)
            return await compute()
        value, _ = await self.cache.get_or_create(
            key, compute, ttl_s=self.options.answer_ttl_s, codec=self._codec, cacheable=answer_cacheable
        )
        return value
