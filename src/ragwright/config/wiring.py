"""From :class:`~ragwright.config.settings.Settings` to a working :class:`~ragwright.rag.Rag`: the one place
the CLI, the HTTP server and the MCP server turn a configuration into models, caches and stages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.config.settings import Settings
from ragwright.errors import ConfigError

if TYPE_CHECKING:
    from ragwright.cache import TieredCache
    from ragwright.rag import Rag
    from ragwright.stores.base import EmbeddingInfo

#: Stages that need a chat model: (name for the message, flag, whether *settings* configures it).
_NEEDS_LLM = (
    ("HyDE", "--hyde / [transforms] hyde", lambda s: s.transforms.hyde is not None and s.retrieval.use_hyde),
    (
        "multi-query",
        "--multi-query / [transforms] multi_query",
        lambda s: s.transforms.multi_query is not None and s.retrieval.use_multi_query,
    ),
    (
        "query rewriting",
        "--rewrite / [transforms] rewrite",
        lambda s: s.transforms.rewrite is not None and s.retrieval.use_query_rewrite,
    ),
    (
        "self-query",
        "--self-query / [transforms] self_query",
        lambda s: s.transforms.self_query is not None and s.retrieval.use_self_query,
    ),
    ("deep research", "--deep-research / [strategies] deep_research", lambda s: s.strategies.deep_research is not None),
    ("LLM answers", "--answer-mode llm / [answers] answer_mode", lambda s: s.answers.answer_mode == "llm"),
    ("the agent", "--agent / [agent]", lambda s: s.agent is not None),
    ("contextual enrichment", "--context llm / [chunking] context", lambda s: s.chunking.context == "llm"),
    ("propositional chunking", "--propositions / [chunking] propositions", lambda s: s.chunking.propositions),
)


def check_models(settings: Settings, llm: Any) -> None:
    """A stage that needs a chat model, configured without one, is a configuration error (it would
    otherwise do nothing, silently)."""
    if llm is not None:
        return
    for name, where, configured in _NEEDS_LLM:
        if configured(settings):
            raise ConfigError(
                f"{name} ({where}) needs a chat model: give --llm local (pip install 'ragwright[llm]'), "
                'or llm = "local" / "openai:MODEL@URL" in ragwright.toml',
                field="llm",
            )


def build_cache(settings: Settings) -> TieredCache | None:
    """The tiered cache ``[cache]`` asks for: in process, with Redis as L2 when ``redis_url`` is set."""
    if not settings.cache.enabled:
        return None
    from ragwright.cache import TieredCache

    l2 = None
    if settings.cache.redis_url:
        from ragwright.cache.redis import RedisCache

        l2 = RedisCache(settings.cache.redis_url)
    return TieredCache(max_entries=settings.cache.options.max_entries, l2=l2)


def load_llm(settings: Settings) -> Any:
    from ragwright.models.llms import load_chat

    return load_chat(settings.llm)


def load_reranker(settings: Settings) -> Any:
    """The configured reranker, loaded now so a bad model fails here, not as a silent fallback later."""
    from ragwright.models.rerankers import load_reranker as load

    reranker = load(settings.reranker)
    return reranker.load() if reranker is not None else None


def build_rag(
    settings: Settings,
    store: Any,
    embedder: Any,
    *,
    llm: Any = None,
    reranker: Any = None,
    prompt_observer: Any = None,
    ingest_options: Any = None,
) -> Rag:
    """A Rag over *store* and *embedder* with everything *settings* configures; *llm* and *reranker*
    are the loaded models (see :func:`load_llm`, :func:`load_reranker`)."""
    from ragwright.rag import Rag

    check_models(settings, llm)
    rag = Rag(
        store,
        embedder,
        retrieval_options=settings.retrieval,
        rag_options=settings.answers,
        chunking=settings.chunking,
        ingest_options=ingest_options if ingest_options is not None else settings.ingest,
        identity=settings.identity,
        reranker=reranker,
        parents=settings.parents,
        llm=llm,
        prompt_observer=prompt_observer,
        sparse_encoder=settings.sparse if settings.sparse not in (None, "", "none") else None,
        strategies=settings.strategies,
        cache=build_cache(settings),
        cache_options=settings.cache.options,
        transforms=settings.transforms,
        hierarchy=settings.hierarchy,
        graph=settings.graph,
    )
    from ragwright.rag_memory import enable_memory

    enable_memory(rag, settings.memory)  # [memory]: chat, --session and the server's chat endpoint
    return rag


def embedder_spec(settings: Settings, store: EmbeddingInfo) -> str:
    """The embedder to load: the configured one, else the one the store records it was built with
    (:func:`~ragwright.stores.open.embedder_spec_of`), else the default."""
    from ragwright.stores.open import embedder_spec_of

    return settings.embedder or embedder_spec_of(store)


def open_rag(
    settings: Settings,
    store_uri: Any,
    *,
    must_exist: bool,
    prompt_observer: Any = None,
    ingest_options: Any = None,
    on_upgrade: Any = None,
) -> Rag:
    """Open the store at *store_uri* and build the Rag *settings* describe (the store is closed again
    when anything fails). *on_upgrade* is called with the store when its schema was upgraded."""
    from ragwright.models.embedders import load_embedder
    from ragwright.stores.open import open_store

    store: Any = open_store(store_uri, keyword_analyzer=settings.keyword_analyzer, must_exist=must_exist)
    try:
        if on_upgrade is not None and getattr(store, "upgrade_backup", None) is not None:
            on_upgrade(store)
        embedder = load_embedder(embedder_spec(settings, store))
        llm = load_llm(settings)
        return build_rag(
            settings,
            store,
            embedder,
            llm=llm,
            reranker=load_reranker(settings),
            prompt_observer=prompt_observer,
            ingest_options=ingest_options,
        )
    except BaseException:
        store.close()
        raise
