"""One retrieval call as a value: what is asked, by whom, with what, and the stage seam it travels.

A :class:`RetrievalRequest` is built once at the top (``Rag.search``/``ask``, or a caller of a
stage) and passed down the strategy stack unchanged except where a stage says so
(``with_query`` for a sub-query or a rewrite, ``with_options`` for a narrowed filter or an adaptive
plan). It carries everything a stage below may need that is not a retrieval option: the
conversation history (query condensing), the trace the transforms write into, and the cache scope a
result cache opened (so cached embedders and rerankers below key by the caller's permissions).
Nothing travels beside it: no module-level context.

Every stage offers ``async run(request) -> RetrievalOutcome`` (:class:`RetrievalStage`). The older
shape, ``async retrieve(query, options, identity) -> list[SearchResult]``, remains on every stage
(:class:`StageBase`) and is accepted as an inner retriever (:func:`as_stage` adapts it: such a
retriever sees no history, trace or cache scope).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragwright.cache.keys import CacheScope
from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.model.outcome import RetrievalOutcome
from ragwright.model.results import SearchResult
from ragwright.models.llms.base import Message
from ragwright.retrieve.options import RetrievalOptions

if TYPE_CHECKING:
    from ragwright.retrieve.transforms.plan import RetrievalTrace

__all__ = ["LegacyRetriever", "RetrievalRequest", "RetrievalStage", "RetrieverLike", "StageBase", "as_stage"]


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """A retrieval call: *query* under *identity* with *options*.

    ``history``: earlier conversation turns (query condensing); ``trace``: a
    :class:`~ragwright.retrieve.transforms.plan.RetrievalTrace` the transforms record into (the one
    mutable thing a request points at, by design: it is the caller's to read afterwards); ``cache``:
    the scope a result cache above opened; ``fresh_embeddings``: cached embedders below embed afresh
    and store nothing (HyDE hypotheses, ``use_cache_embedding=False``).
    """

    query: str
    options: RetrievalOptions
    identity: Identity
    history: tuple[Message | Mapping[str, Any], ...] = ()
    trace: RetrievalTrace | None = None
    cache: CacheScope | None = None
    fresh_embeddings: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.options, RetrievalOptions):
            raise ConfigError.invalid("options", self.options, "a RetrievalOptions")
        if not isinstance(self.identity, Identity):
            raise ConfigError.invalid("identity", self.identity, "an Identity")
        if not isinstance(self.history, tuple):
            object.__setattr__(self, "history", tuple(self.history))

    @classmethod
    def of(
        cls,
        query: str,
        options: RetrievalOptions,
        identity: Identity,
        *,
        history: Sequence[Message | Mapping[str, Any]] = (),
        trace: RetrievalTrace | None = None,
    ) -> RetrievalRequest:
        return cls(query, options, identity, tuple(history), trace)

    def with_query(self, query: str) -> RetrievalRequest:
        """The same call for another query text (a sub-query, a rewrite)."""
        return replace(self, query=query)

    def with_options(self, options: RetrievalOptions) -> RetrievalRequest:
        """The same call with other options (a narrowed filter, an adaptive plan)."""
        return replace(self, options=options)


@runtime_checkable
class RetrievalStage(Protocol):
    """The seam every strategy wraps and offers, and the pipeline at the bottom implements."""

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome: ...


@runtime_checkable
class RetrieverLike(Protocol):
    """The older retrieval shape (a plain list back; decisions ride on a :class:`RetrievalResults`)."""

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]: ...


class StageBase:
    """Gives a stage the older ``retrieve(query, options, identity)`` on top of its ``run``."""

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        raise NotImplementedError

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]:
        """``run`` for a request of these three, the outcome as a list (:class:`RetrievalResults`)."""
        return (await self.run(RetrievalRequest(query, options, identity))).as_results()


class LegacyRetriever(StageBase):
    """A :class:`RetrieverLike` as a stage; it sees the query, options and identity, nothing else."""

    def __init__(self, inner: RetrieverLike) -> None:
        self.inner = inner

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        return RetrievalOutcome.of(await self.inner.retrieve(request.query, request.options, request.identity))

    def __getattr__(self, name: str) -> Any:  # store, embedder, reranker … of the wrapped retriever
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def as_stage(retriever: RetrievalStage | RetrieverLike) -> RetrievalStage:
    """*retriever* as a stage (adapted when it offers only ``retrieve``)."""
    if isinstance(retriever, RetrievalStage):
        return retriever
    if isinstance(retriever, RetrieverLike):
        return LegacyRetriever(retriever)
    raise ConfigError.invalid("retriever", retriever, "an object with async run(request) or retrieve(q, o, identity)")
