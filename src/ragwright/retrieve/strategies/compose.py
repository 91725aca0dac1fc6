"""Stack the strategies around a retriever, in a fixed order.

Outermost first::

    result cache → tag → time-weighted → deep research → adaptive → corrective → pipeline

Tag filtering narrows the candidates before anything runs; time weighting re-scores the final set,
after deep research has fused its pages; the result cache wraps the whole chain, so a hit skips all
of it. Each layer honours its per-call switch in :class:`~ragwright.options.RetrievalOptions` and is
installed only when configured.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ragwright.cache.options import CacheOptions
from ragwright.cache.tiered import TieredCache
from ragwright.errors import ConfigError
from ragwright.models.embedders.base import Embedder
from ragwright.models.llms.base import ChatModel
from ragwright.retrieve.options import RetrievalOptions
from ragwright.retrieve.strategies.adaptive import AdaptiveRetriever
from ragwright.retrieve.strategies.base import RetrievalStage, RetrieverLike, as_stage
from ragwright.retrieve.strategies.cached import CachedRetriever
from ragwright.retrieve.strategies.crag import CorrectiveRetriever
from ragwright.retrieve.strategies.deep_research import DeepResearchRetriever
from ragwright.retrieve.strategies.options import (
    AdaptiveOptions,
    CragOptions,
    DeepResearchOptions,
    TagRetrievalOptions,
    TimeWeightedOptions,
)
from ragwright.retrieve.strategies.tags import TagIndexer, TagRetriever
from ragwright.retrieve.strategies.time_weighted import TimeWeightedRetriever
from ragwright.retrieve.strategies.web import WebSearch


def _resolve(value: Any, kind: type[Any]) -> Any:
    if value is None or value is False:
        return None
    if value is True:
        return kind()
    if not isinstance(value, kind):
        raise ConfigError(f"expected a {kind.__name__}, True or None, got {value!r}")
    return value


def _tag_table(store: Any) -> Any:
    table = getattr(store, "tag_table", None)
    if table is None:
        raise ConfigError(
            "tag-based retrieval needs a store with a tag table (MemoryStore, SqliteStore, PostgresStore); "
            f"got {type(store).__name__}"
        )
    return table()


def tag_indexer(store: Any, embedder: Embedder, options: TagRetrievalOptions | None = None) -> TagIndexer:
    """The ingestion hook that embeds each unique tag once (append it to ``IngestPipeline.hooks``)."""
    return TagIndexer(_tag_table(store), embedder, options)


def _hyde_configured(base: Any) -> Callable[[RetrievalOptions], bool]:
    def active(options: RetrievalOptions) -> bool:
        return options.use_hyde and any(getattr(base, n, None) is not None for n in ("hyde", "llm"))

    return active


def model_names(base: Any, llm: ChatModel | None, web: WebSearch | None, embedder: Embedder | None) -> dict[str, str]:
    """The models whose change must change every cache key."""
    names: dict[str, str] = {}
    for label, model in (
        ("embedder", embedder or getattr(base, "embedder", None)),
        ("reranker", getattr(base, "reranker", None)),
        ("llm", getattr(base, "llm", None)),
        ("strategy_llm", llm),
        ("web", web),
    ):
        if model is not None:
            names[label] = str(getattr(model, "name", type(model).__name__))
    return names


def build_retriever(
    base: RetrievalStage | RetrieverLike,
    *,
    tags: TagRetrievalOptions | bool | None = None,
    time: TimeWeightedOptions | bool | None = None,
    deep: DeepResearchOptions | bool | None = None,
    adaptive: AdaptiveOptions | bool | None = None,
    crag: CragOptions | bool | None = None,
    web: WebSearch | None = None,
    llm: ChatModel | None = None,
    cache: TieredCache | bool | None = None,
    cache_options: CacheOptions | None = None,
    store: Any = None,
    embedder: Embedder | None = None,
    clock: Callable[[], datetime] | None = None,
) -> RetrievalStage:
    """*base* wrapped in the configured strategies (``True`` = default options, ``None`` = off).

    *store* and *embedder* default to ``base.store`` / ``base.embedder`` (the pipeline's). Deep
    research needs *llm*; adaptive retrieval and corrective RAG use it when given. *cache* (a
    :class:`TieredCache`, or ``True`` for an in-process one) adds the permission-aware result cache.
    """
    store = store if store is not None else getattr(base, "store", None)
    embedder = embedder if embedder is not None else getattr(base, "embedder", None)
    tag_opts = _resolve(tags, TagRetrievalOptions)
    time_opts = _resolve(time, TimeWeightedOptions)
    deep_opts = _resolve(deep, DeepResearchOptions)
    adaptive_opts = _resolve(adaptive, AdaptiveOptions)
    crag_opts = _resolve(crag, CragOptions)
    if deep_opts is not None and llm is None:
        raise ConfigError("deep research needs a chat model: build_retriever(..., deep=..., llm=<ChatModel>)")
    if tag_opts is not None and (store is None or embedder is None):
        raise ConfigError("tag-based retrieval needs the store and the embedder (store=..., embedder=...)")

    retriever: RetrievalStage = as_stage(base)
    if crag_opts is not None:
        retriever = CorrectiveRetriever(retriever, web=web, llm=llm, options=crag_opts)
    if adaptive_opts is not None:
        retriever = AdaptiveRetriever(retriever, llm, adaptive_opts)
    if deep_opts is not None and llm is not None:
        retriever = DeepResearchRetriever(retriever, llm, deep_opts)
    if time_opts is not None:
        retriever = TimeWeightedRetriever(retriever, time_opts, clock=clock)
    if tag_opts is not None and embedder is not None:
        retriever = TagRetriever(retriever, _tag_table(store), embedder, tag_opts)
    if cache is not None and cache is not False:
        version = getattr(store, "index_version", None)
        if version is None:
            raise ConfigError(
                "the result cache needs a store with index_version() (MemoryStore, SqliteStore, PostgresStore)"
            )
        opts = cache_options or CacheOptions()
        tiered = TieredCache(max_entries=opts.max_entries) if cache is True else cache
        retriever = CachedRetriever(
            retriever,
            tiered,
            index_version=version,
            models=model_names(base, llm, web, embedder),
            options=opts,
            hyde_active=_hyde_configured(base),
        )
    return retriever


def layers(retriever: Any) -> list[str]:
    """The class names of a stack, outermost first (each layer keeps its ``inner``)."""
    names = []
    while retriever is not None:
        names.append(type(retriever).__name__)
        retriever = getattr(retriever, "inner", None)
    return names
