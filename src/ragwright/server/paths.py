"""The retrieval paths a request may name besides plain hybrid search: hierarchical, graph, federated and
routed (:class:`RetrievalPaths`, a part of :class:`~ragwright.server.service.Service`).

Each runs as the request's caller (its API key's identity), under the server's work limits, counts in
the caller's ledger and returns one JSON answer (never a stream).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright._sync import to_thread
from ragwright.errors import ConfigError
from ragwright.server.auth import Caller

if TYPE_CHECKING:
    from ragwright.model.results import SearchResult
    from ragwright.options import RagOptions, RetrievalOptions
    from ragwright.rag import Rag
    from ragwright.server.limits import WorkLimiter

__all__ = ["RetrievalPaths"]


class RetrievalPaths:
    """The hierarchical, graph, federated and routed searches and answers of the server's service."""

    if TYPE_CHECKING:  # provided by Service
        rag: Rag
        limiter: WorkLimiter

        def retrieval_options(self, raw: Any) -> RetrievalOptions: ...

        def rag_options(self, raw: Any) -> RagOptions: ...

        def ledger(self, caller: Caller) -> Counter[str]: ...

        def titles(self, results: Sequence[SearchResult]) -> dict[str, dict[str, Any]]: ...

    async def search_hierarchical(self, caller: Caller, query: str, raw_options: Any) -> dict[str, Any]:
        """``"hierarchical": true``: documents by their summaries, then chunks inside the best ones
        (:mod:`ragwright.rag_hierarchy`; a store without summaries gets them on first use)."""
        from ragwright.rag_hierarchy import hierarchical_search

        options = self.retrieval_options(raw_options)
        found = await self.limiter.run(
            lambda: to_thread(hierarchical_search, self.rag, query, options, identity=caller.identity),
            owner=caller.identity.tenant,
        )
        self.ledger(caller)["searches"] += 1
        results = {"results": [r.to_dict() for r in found.results], "hierarchy": found.to_dict(results=False)}
        return {**results, "documents": await to_thread(self.titles, found.results)}

    async def ask_hierarchical(self, caller: Caller, question: str, raw_options: Any) -> dict[str, Any]:
        """``"hierarchical": true``: the answer from the two-stage search's evidence."""
        from ragwright.rag_hierarchy import enable_hierarchy

        options = self.rag_options(raw_options)
        hierarchy = enable_hierarchy(self.rag)
        response = await self.limiter.run(
            lambda: hierarchy.aask(question, identity=caller.identity, options=options), owner=caller.identity.tenant
        )
        self.ledger(caller)["answers"] += 1
        return {**response.to_dict(), "documents": await to_thread(self.titles, response.sources)}

    async def search_graph(self, caller: Caller, query: str, raw_options: Any) -> dict[str, Any]:
        """``"graph": "local"``: graph local search fused with hybrid (:mod:`ragwright.rag_graph`), as the
        caller: entities and relations only from chunks the caller may see."""
        from ragwright.rag_graph import enable_graph

        options = self.retrieval_options(raw_options)
        graph = enable_graph(self.rag)
        found = await self.limiter.run(
            lambda: graph.asearch(query, identity=caller.identity, top_k=options.top_k), owner=caller.identity.tenant
        )
        self.ledger(caller)["searches"] += 1
        return {
            "results": [r.to_dict() for r in found.results],
            "entities": [{"name": e.name, "type": e.type, "hop": e.hop} for e in found.entities],
            "relations": [{"source": r.source, "type": r.type, "target": r.target} for r in found.relations],
            "documents": await to_thread(self.titles, found.results),
        }

    async def ask_graph(self, caller: Caller, question: str, raw_options: Any, mode: str) -> dict[str, Any]:
        """``"graph": "local" | "global"``: the answer from graph search (global: community themes)."""
        from ragwright.rag_graph import enable_graph

        options = self.rag_options(raw_options)
        graph = enable_graph(self.rag)
        response = await self.limiter.run(
            lambda: graph.aask(question, mode=mode, identity=caller.identity, top_k=options.top_k),
            owner=caller.identity.tenant,
        )
        self.ledger(caller)["answers"] += 1
        return {**response.to_dict(), "documents": await to_thread(self.titles, response.sources)}

    def federation(self, collections: Any) -> Any:
        """The federated view a request's ``collections`` names (``"live,g2=0.5"`` or a list of such): the
        served store's collections (``live``: its live one) and the stores the server was configured with
        (``federation_stores``, from ``[federation] stores``), by name — never a URI from a request. The
        sources stay open across requests (:class:`~ragwright.rag_federation.SourcePool`)."""
        from ragwright.federation import FederationOptions, parse_weights
        from ragwright.rag_federation import SourcePool, open_federation

        weights = parse_weights(collections)
        if not weights:
            raise ConfigError.invalid("collections", collections, "source names, e.g. 'live,g2=0.5'")
        stores = {n: u for n, u in getattr(self, "federation_stores", {}).items() if n in weights}
        pool = self.__dict__.setdefault("_sources", SourcePool(self.rag))  # atomic: one pool per server
        return open_federation(self.rag, FederationOptions.parse(weights, stores), pool=pool)

    async def search_federated(self, caller: Caller, query: str, raw_options: Any, collections: Any) -> dict[str, Any]:
        """``"collections"``: one search over several sources as the caller, merged by weighted RRF."""
        options = self.retrieval_options(raw_options)
        fed = await to_thread(self.federation, collections)
        found = await self.limiter.run(
            lambda: fed.asearch(query, options, identity=caller.identity), owner=caller.identity.tenant
        )
        self.ledger(caller)["searches"] += 1
        payload = {"results": [r.to_dict() for r in found], "federation": found.summary()}
        return {**payload, "documents": await to_thread(fed.titles, found)}

    async def ask_federated(self, caller: Caller, question: str, raw_options: Any, collections: Any) -> dict[str, Any]:
        """``"collections"``: an answer from the merged evidence of several sources (one JSON answer)."""
        options = self.rag_options(raw_options)
        fed = await to_thread(self.federation, collections)
        response = await self.limiter.run(
            lambda: fed.aask(question, options, identity=caller.identity), owner=caller.identity.tenant
        )
        self.ledger(caller)["answers"] += 1
        return {**response.to_dict(), "documents": await to_thread(fed.titles, response.sources)}

    async def ask_routed(self, caller: Caller, question: str, raw_options: Any, mode: str) -> dict[str, Any]:
        """``"route": "auto" | "llm"``: the answer by the route the router chooses (ragwright.rag_route), with
        ``route`` and ``route_reason``; *raw_options* are the hybrid route's (a metadata filter keeps it there)."""
        from ragwright.rag_route import aroute_ask
        from ragwright.route import RouterOptions

        options = self.rag_options(raw_options)
        router = RouterOptions(mode=mode)
        response = await self.limiter.run(
            lambda: aroute_ask(self.rag, question, identity=caller.identity, options=router, answer_options=options),
            owner=caller.identity.tenant,
        )
        self.ledger(caller)["answers"] += 1
        return {**response.to_dict(), "documents": await to_thread(self.titles, response.sources)}
