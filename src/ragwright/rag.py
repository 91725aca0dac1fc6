"""The facade: a store, an embedder and options wired together, nothing global.

>>> rag = Rag.open(".ragwright/store.db")          # doctest: +SKIP
>>> rag.ingest(["docs/"])                            # doctest: +SKIP
>>> rag.ask("What is the refund policy?").answer     # doctest: +SKIP

Every method has an async twin (``aingest``, ``asearch``, ``aask``, ``aask_stream``); the sync ones run
the same coroutine. Security filters come from the caller's :class:`Identity` (the ``identity`` given to the
call, else the one the ``Rag`` was built with) and are applied inside every search.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from ragwright import rag_telemetry, telemetry
from ragwright._sync import run_sync, to_thread
from ragwright.chunk import make_chunker
from ragwright.generate import ExtractiveAnswerer, LlmAnswerer, PromptObserver
from ragwright.ingest import IngestPipeline, IngestReport
from ragwright.ingest.pipeline import ProgressCallback
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.models.embedders.base import Embedder, embedder_spec
from ragwright.models.llms.base import ChatModel
from ragwright.models.sparse import SparseEncoder, load_sparse_encoder
from ragwright.options import (
    PRESETS,
    ChunkingOptions,
    IngestOptions,
    ParentOptions,
    RagOptions,
    RetrievalOptions,
    RetrievalOverrides,
)
from ragwright.postprocess.rerank import Reranker
from ragwright.rag_admin import IngestArgs, RagAdmin
from ragwright.rag_answers import RagAnswers
from ragwright.retrieve import Retriever
from ragwright.retrieve.request import RetrievalRequest
from ragwright.sources import Source, open_sources
from ragwright.stores.base import Store

if TYPE_CHECKING:
    from ragwright.cache import CacheOptions, TieredCache
    from ragwright.graph.options import GraphOptions
    from ragwright.hierarchy.options import HierarchyOptions
    from ragwright.rag_graph import RagGraph
    from ragwright.rag_hierarchy import RagHierarchy
    from ragwright.rag_memory import Conversation, RagMemory
    from ragwright.retrieve.strategies.options import StrategyOptions
    from ragwright.retrieve.strategies.web import WebSearch
    from ragwright.retrieve.transforms.options import TransformOptions

log = logging.getLogger(__name__)


class Rag(RagAnswers, RagAdmin):
    """Ingest, search and ask over one store."""

    def __init__(
        self,
        store: Store | None = None,
        embedder: Embedder | None = None,
        *,
        retrieval_options: RetrievalOptions | None = None,
        rag_options: RagOptions | None = None,
        chunking: ChunkingOptions | None = None,
        ingest_options: IngestOptions | None = None,
        identity: Identity | None = None,
        reranker: Reranker | None = None,
        parents: ParentOptions | None = None,
        llm: ChatModel | None = None,
        prompt_observer: PromptObserver | Any | None = None,
        sparse_encoder: SparseEncoder | str | None = None,
        strategies: StrategyOptions | None = None,
        cache: TieredCache | bool | None = None,
        cache_options: CacheOptions | None = None,
        web_search: WebSearch | None = None,
        transforms: TransformOptions | None = None,
        graph: GraphOptions | None = None,
        hierarchy: HierarchyOptions | None = None,
    ) -> None:
        """*llm* (a :class:`ChatModel`, e.g. ``load_chat("local")``) writes the answers and serves the
        query transforms; without one, answers are extractive. *prompt_observer* sees every message list
        sent to it (a callable or an object with ``on_prompt_assembled``)."""
        if store is None:
            from ragwright.stores.memory import MemoryStore

            store = MemoryStore()
        if embedder is None:
            from ragwright.models.embedders import default_embedder

            embedder = default_embedder()
        spec = embedder_spec(embedder)  # recorded with the binding, before a cache wraps the embedder
        # Caches: one tiered cache behind the embedding, rerank, result and answer layers; every
        # retrieval-derived key holds the index version and the caller's ACL signature. cache=True:
        # in-process only; a TieredCache(l2=RedisCache(url)) shares it.
        from ragwright.cache import CachedEmbedder, CachedReranker, CacheOptions, TieredCache

        self.cache_options = cache_options or CacheOptions()
        self.cache = TieredCache(max_entries=self.cache_options.max_entries) if cache is True else (cache or None)
        if self.cache is not None:
            ns = self.cache_options.namespace
            embedder = CachedEmbedder(embedder, self.cache, ttl_s=self.cache_options.embedding_ttl_s, namespace=ns)
            if reranker is not None:
                reranker = CachedReranker(reranker, self.cache, ttl_s=self.cache_options.rerank_ttl_s, namespace=ns)
        self.store, self.embedder = store, embedder
        self._retired: dict[str, Store] = {}  # store objects a reindex replaced, by collection (until dropped)
        # Hybrid (dense + BM25, convex fusion, Rocchio feedback: PRESETS["hybrid"]) is the default here,
        # each part chosen by measurement (benchmarks/RESULTS.md). A bare RetrievalOptions() stays pure dense.
        self.retrieval_options = retrieval_options or RetrievalOptions(**PRESETS["hybrid"])
        self.rag_options = rag_options or RagOptions(**PRESETS["hybrid"])
        self.identity = identity or Identity()
        self.chunker = make_chunker(embedder, chunking, llm=llm)  # llm: contextual enrichment, propositions
        # *sparse_encoder* ("splade", a BertForMaskedLM folder, or a SparseEncoder) adds the SPLADE arm to
        # hybrid search; ingestion then stores a sparse vector per chunk.
        self.sparse_encoder = load_sparse_encoder(sparse_encoder)
        self.ingestion = IngestPipeline(store, embedder, self.chunker, ingest_options, parents)
        self.ingestion.sparse_encoder = self.sparse_encoder
        self.retriever = Retriever(
            store, embedder, reranker, llm=llm, transforms=transforms, sparse_encoder=self.sparse_encoder
        )
        from ragwright.retrieve.strategies.options import StrategyOptions

        self.llm, self._web_search, self._prompt_observer = llm, web_search, prompt_observer
        self._plan = strategies or StrategyOptions()
        self._tag_hook: Any = None
        self.graph: RagGraph | None = None  # GraphRAG (graph=GraphOptions(...)): extraction, graph search
        if graph is not None:
            from ragwright.rag_graph import RagGraph

            self.graph = RagGraph(self, graph)
        self.hierarchy: RagHierarchy | None = None  # summaries, two-stage, tree (hierarchy=HierarchyOptions())
        if hierarchy is not None:
            from ragwright.rag_hierarchy import RagHierarchy

            self.hierarchy = RagHierarchy(self, hierarchy)
        self.memory: RagMemory | None = None  # conversation memory: rag_memory.enable_memory, rag.conversation()
        self._wire()
        store.bind_embedder(embedder.name, embedder.dimension, spec=spec)

    def _wire(self) -> None:
        """Strategies (tag → time-weighted → deep research → adaptive → corrective, the result cache
        outermost; with none configured, the retriever itself), tag indexing, the answer cache and the
        answerers, over the current store, embedder and retriever. A blue/green reindex calls it again
        after swapping those."""
        from ragwright.cache import AnswerCache
        from ragwright.retrieve.strategies.compose import build_retriever, model_names, tag_indexer

        plan, llm, web = self._plan, self.llm, self._web_search
        if self._tag_hook is not None and self._tag_hook in self.ingestion.hooks:
            self.ingestion.hooks.remove(self._tag_hook)
        self._tag_hook = None
        if plan.tags is not None:
            self._tag_hook = tag_indexer(self.store, self.embedder, plan.tags)
            self.ingestion.hooks.append(self._tag_hook)
        self.strategies = build_retriever(
            self.retriever,
            tags=plan.tags,
            time=plan.time_weighting,
            deep=plan.deep_research,
            adaptive=plan.adaptive,
            crag=plan.crag,
            web=web,
            llm=llm,
            cache=self.cache,
            cache_options=self.cache_options,
        )
        self.answer_cache = (
            AnswerCache(
                self.cache,
                index_version=self.store.index_version,
                models=model_names(self.retriever, llm, web, self.embedder),
                options=self.cache_options,
            )
            if self.cache is not None
            else None
        )
        self.answerer = ExtractiveAnswerer(self.embedder)
        self.llm_answerer = (
            LlmAnswerer(llm, observer=self._prompt_observer, embedder=self.embedder) if llm is not None else None
        )

    def _adopt(self, store: Store, embedder: Embedder, chunker: Any, *, retired: str | None) -> None:
        """Serve from *store* with *embedder* and *chunker* from now on (a blue/green reindex switched):
        a new ingestion pipeline and retriever over them, then strategies, caches and answerers re-wired.
        The previous store object is kept (a query started before this finishes on it) and closed when
        the collection *retired* is dropped, or with the Rag."""
        old = self.ingestion
        ingestion = IngestPipeline(store, embedder, chunker, old.options, old.parents)
        ingestion.hooks = list(old.hooks)
        ingestion.sparse_encoder = old.sparse_encoder
        retriever = copy.copy(self.retriever)
        retriever.store, retriever.embedder = store, embedder
        store.bind_embedder(embedder.name, embedder.dimension, spec=embedder_spec(embedder))
        if store is not self.store:
            self._retired[retired or "previous"] = self.store
        self.ingestion, self.chunker, self.embedder, self.store = ingestion, chunker, embedder, store
        self.retriever = retriever  # a query started before this runs on the old pair
        self._wire()
        if self.graph is not None:  # the entity graph follows the new store (rag_graph.follow_store)
            from ragwright.rag_graph import follow_store

            follow_store(self)
        if self.hierarchy is not None:  # so do the summaries and the tree (rag_hierarchy.follow_store)
            from ragwright.rag_hierarchy import follow_store as follow_hierarchy

            follow_hierarchy(self)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        collection: str | None = None,
        embedder: Embedder | None = None,
        keyword_analyzer: str = "auto",
        **kwargs: Any,
    ) -> Rag:
        """Open (or create) the SQLite store at *path*, or the PostgreSQL store a ``postgresql://`` URI names
        (:func:`ragwright.stores.open.open_store` has the schemes). Without *embedder*, the model the
        store records it was built with is loaded (the default model for a new store)."""
        from ragwright.models.embedders import load_embedder
        from ragwright.stores.open import embedder_spec_of, open_store

        store = open_store(path, collection=collection, keyword_analyzer=keyword_analyzer)
        try:
            return cls(store, embedder if embedder is not None else load_embedder(embedder_spec_of(store)), **kwargs)
        except BaseException:
            store.close()
            raise

    # -- ingestion -------------------------------------------------------------------------------------
    async def aingest(
        self,
        sources: Source | str | Path | Iterable[Source | str | Path],
        *,
        tenant: str | None = None,
        acl: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
        sync: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestReport:
        """Ingest files, folders, JSONL corpora or :class:`Source` objects; returns the run's report.

        Unchanged documents are skipped without parsing or embedding. ``sync=True`` also removes the
        documents once ingested from a listed folder/corpus that are no longer in it. Setting *cancel*
        stops the run early with what was written committed (``report.interrupted``); so does Ctrl-C
        (the task cancelled), which then waits for the document in hand and re-raises.
        """
        resolved = open_sources(sources)
        tenant = tenant if tenant is not None else self.identity.tenant
        cancel = cancel if cancel is not None else threading.Event()
        total = IngestReport()
        started = telemetry.now_ns()
        for source in resolved:
            if cancel.is_set():
                total.interrupted = True
                break
            run = asyncio.ensure_future(
                to_thread(
                    self.ingestion.run,
                    source,
                    tenant=tenant,
                    acl=acl,
                    metadata=metadata,
                    progress=progress,
                    sync=sync,
                    cancel=cancel,
                )
            )
            try:
                report = await asyncio.shield(run)
            except asyncio.CancelledError:
                cancel.set()  # the thread stops after the document in hand: nothing runs on after we return
                await asyncio.wait([run])
                raise
            total.add(report)
        if self.graph is not None:  # removals, access changes and documents the graph lacks
            await to_thread(self.graph.index.sync)
        if self.hierarchy is not None:  # summaries follow removals and access changes too
            await to_thread(self.hierarchy.sync)
        rag_telemetry.ingest_finished(started, total)
        return total

    def ingest(
        self, sources: Source | str | Path | Iterable[Source | str | Path], **kwargs: Unpack[IngestArgs]
    ) -> IngestReport:
        """:meth:`aingest`, run to its end (the same keywords, typed)."""
        return run_sync(self.aingest(sources, **kwargs))

    # -- retrieval -------------------------------------------------------------------------------------
    async def asearch(
        self,
        query: str,
        options: RetrievalOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RetrievalOverrides],
    ) -> list[SearchResult]:
        """Retrieve the best chunks for *query*; per-call *overrides* (any :class:`RetrievalOptions` name,
        typed by :class:`~ragwright.options.RetrievalOverrides`) are validated like options."""
        opts = (
            (options or self.retrieval_options).merged(**overrides)
            if overrides
            else (options or self.retrieval_options)
        )
        outcome = await self.strategies.run(RetrievalRequest(query, opts, identity or self.identity))
        return outcome.as_results()  # a list carrying the typed outcome (.outcome) and its flat view

    def search(
        self,
        query: str,
        options: RetrievalOptions | None = None,
        *,
        identity: Identity | None = None,
        **overrides: Unpack[RetrievalOverrides],
    ) -> list[SearchResult]:
        return run_sync(self.asearch(query, options, identity=identity, **overrides))

    aretrieve = asearch
    retrieve = search

    def conversation(self, *, identity: Identity | None = None, session: str | None = None) -> Conversation:
        """A conversation (:mod:`ragwright.rag_memory`): follow-ups condensed, history kept to a token budget,
        a named *session* stored per identity in the store."""
        from ragwright.rag_memory import memory_of

        return memory_of(self).conversation(identity=identity, session=session)

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
        for retired in self._retired.values():
            retired.close()
        self._retired.clear()
        self.store.close()

    def __enter__(self) -> Rag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
