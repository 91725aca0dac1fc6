"""GraphRAG on the facade: ``rag.graph`` when ``Rag(graph=GraphOptions(...))``.

>>> rag = Rag.open("store.db", graph=GraphOptions())             # doctest: +SKIP
>>> rag.ingest("docs/")                                           # doctest: +SKIP
>>> rag.graph.search("who directed Big Stone Gap?").results       # doctest: +SKIP
>>> rag.graph.ask("what are the main themes?", mode="global")     # doctest: +SKIP

Every call takes the caller's identity (else the Rag's) and passes it to the graph's one filter
(:class:`~ragwright.graph.visibility.Visibility`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragwright._sync import run_sync, to_thread
from ragwright.errors import ConfigError
from ragwright.generate import AnswerStream
from ragwright.graph.global_search import Theme, global_search
from ragwright.graph.index import GraphIndex
from ragwright.graph.local import EntityView, GraphResult, RelationView, local_search, query_keys
from ragwright.graph.model import entity_key
from ragwright.graph.options import MODES, GraphOptions
from ragwright.graph.visibility import Visibility
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.stores.side_tables import file_has_rows

if TYPE_CHECKING:
    from ragwright.rag import Rag


def enable_graph(rag: Rag, options: GraphOptions | None = None) -> RagGraph:
    """Switch GraphRAG on for an already built *rag* (the CLI does, for ``--graph`` or a store that has a
    graph); the graph it has is kept."""
    if rag.graph is None:
        rag.graph = RagGraph(rag, options or GraphOptions())
    return rag.graph


def follow_store(rag: Rag) -> None:
    """After a blue/green reindex swapped *rag*'s store and pipeline: the graph moves to the new store
    (its annotator and hook onto the new pipeline) and every document is extracted again against the new
    store's chunks (a new chunker gives new chunk ids; the rows would point at chunks no longer served)."""
    old = rag.graph
    if old is None:
        return
    annotators, hooks = rag.ingestion.annotators, rag.ingestion.hooks
    annotators[:] = [a for a in annotators if a != old.index.annotate]
    hooks[:] = [h for h in hooks if h != old.index.on_written]
    rag.graph = RagGraph(rag, old.options)
    rag.graph.index.tables.forget_extractions()
    rag.graph.index.sync()


def store_has_graph(store: object) -> bool:
    """Whether *store*'s file already holds an entity graph (so every ingestion keeps it in step)."""
    return file_has_rows(store, "graph_documents")


class RagGraph:
    """The graph of a :class:`~ragwright.rag.Rag`: its index (wired into ingestion) and its searches."""

    def __init__(self, rag: Rag, options: GraphOptions) -> None:
        self.rag, self.options = rag, options
        self.index = GraphIndex(rag.store, rag.embedder, options, llm=rag.llm)
        rag.ingestion.annotators.append(self.index.annotate)
        rag.ingestion.hooks.append(self.index.on_written)
        self.themes: list[Theme] = []

    def _view(self, identity: Identity | None) -> Visibility:
        return Visibility(self.rag.store, identity or self.rag.identity)

    async def asearch(self, query: str, *, identity: Identity | None = None, top_k: int | None = None) -> GraphResult:
        """Local search fused with the Rag's hybrid search, as *identity*; with a reranker configured (and
        ``use_reranking``), the fused candidates are reranked last, as the hybrid search's are."""
        who = identity or self.rag.identity
        k = top_k or self.rag.retrieval_options.top_k
        options = self.rag.retrieval_options
        reranker = self.rag.retriever.reranker if options.use_reranking else None
        depth = max(k, options.effective_candidate_count) if reranker is not None else k
        hybrid = await self.rag.asearch(query, identity=who, top_k=max(depth, self.options.top_k))
        found = await to_thread(
            local_search,
            self.index.tables,
            self._view(who),
            query,
            self.index.extractor,
            self.options,
            hybrid,
            top_k=depth,
        )
        if reranker is None or not found.results:
            return found
        from ragwright.cache.keys import CacheScope, bind_scope
        from ragwright.postprocess.rerank import rerank

        bound = bind_scope(reranker, CacheScope(self.rag.store.index_version(), who))  # keys hold the caller
        reranked = await to_thread(rerank, bound, query, found.results, min_score=options.rerank_min_score)
        return replace(found, results=reranked[:k])

    def search(self, query: str, *, identity: Identity | None = None, top_k: int | None = None) -> GraphResult:
        return run_sync(self.asearch(query, identity=identity, top_k=top_k))

    def refresh_communities(self) -> int:
        """Rebuild communities and summaries of every tenant whose graph changed; returns how many tenants."""
        from ragwright.graph.communities import build_communities

        dirty = self.index.tables.dirty_tenants()
        for tenant in dirty:
            if self.index.embedder is not None and self.options.merge_similarity is not None:
                self.index.resolve(tenant)
            build_communities(self.index.tables, self.rag.store, tenant, self.options, self.rag.embedder)
        return len(dirty)

    async def aask(
        self, question: str, *, mode: str = "local", identity: Identity | None = None, **overrides: Any
    ) -> RagResponse:
        """Answer from graph search: ``local`` (graph + hybrid evidence, the Rag's answerer) or ``global``
        (map-reduce over the community summaries the caller may fully see, extractive and cited)."""
        if mode not in MODES:
            raise ConfigError.invalid("graph mode", mode, " | ".join(MODES))
        who = identity or self.rag.identity
        if mode == "global":
            await to_thread(self.refresh_communities)
            response, self.themes = await to_thread(
                global_search, self.index.tables, self._view(who), question, self.rag.embedder
            )
            return response
        opts = self.rag._rag_options(None, overrides)
        found = await self.asearch(question, identity=who, top_k=opts.top_k)
        answerer = self.rag._answerer(opts)
        response = await to_thread(AnswerStream(answerer.run(question, found.results, opts, streaming=False)).collect)
        return replace(response, retrieval_path=f"hybrid+graph → {self.options.fusion}")

    def ask(
        self, question: str, *, mode: str = "local", identity: Identity | None = None, **overrides: Any
    ) -> RagResponse:
        return run_sync(self.aask(question, mode=mode, identity=identity, **overrides))

    def show(self, name: str, *, identity: Identity | None = None) -> tuple[EntityView | None, list[RelationView]]:
        """An entity as *identity* may see it (its name, type, the chunks mentioning it) and its relations;
        ``(None, [])`` when the caller may see no mention of it (never saying whether it exists)."""
        view = self._view(identity)
        options = replace(self.options, hops=1, max_seeds=1)
        key = entity_key(name)
        found = local_search(self.index.tables, view, name, self.index.extractor, options, top_k=options.top_k)
        match = next(
            (
                e
                for e in found.entities
                if e.hop == 0 and entity_key(e.name) in {key, *query_keys(name, self.index.extractor)}
            ),
            None,
        )
        if match is None:
            return None, []
        mine = [r for r in found.relations if match.name in (r.source, r.target)]
        return match, mine
