"""Query routing on the facade: ``route_ask(rag, question)`` answers by the route the router chooses.

>>> route_ask(rag, "hello!").route                                            # doctest: +SKIP
'none'
>>> route_ask(rag, "What are the main themes across the documents?").route_reason   # doctest: +SKIP
'rules: corpus_scope cue "main themes" → graph_global; graph_global unavailable (no entity graph …); …'

The routes are reached through the facade's own entry points, always as the caller (*identity*, else
the Rag's): ``hybrid`` → ``rag.aask``; ``graph_local`` / ``graph_global`` → ``enable_graph(rag).aask(mode=…)``;
``hierarchical`` → ``ragwright.rag_hierarchy.enable_hierarchy(rag)``; ``agentic`` →
``ragwright.rag_agent.enable_agent(rag)``; ``none`` → a reply without retrieval
(:mod:`ragwright.route.direct`).

Before deciding, each route's availability is read: the graph routes need an entity graph (``Rag(graph=…)``
or a store that holds one), ``hierarchical`` document summaries (``Rag(hierarchy=…)`` or a store that holds
them), ``agentic`` a chat model, ``hierarchical`` / ``agentic`` their modules; a
per-call ``answer_options`` with a ``metadata_filter`` leaves only ``hybrid`` (and ``none``), the one route
that applies it. A route that raises is logged (``route_failed``) and the hybrid answer returned. The
answer carries ``route`` (the route that answered) and ``route_reason`` (every step of the decision).
"""

from __future__ import annotations

import importlib
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragwright._sync import run_sync, to_thread
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse
from ragwright.options import RagOptions
from ragwright.route import Decision, Router, RouterOptions
from ragwright.route.direct import direct_answer

if TYPE_CHECKING:
    from ragwright.rag import Rag

log = logging.getLogger(__name__)

#: The modules (and their entry points) the hierarchical and agentic routes go through.
ENTRY_POINTS = {
    "hierarchical": ("ragwright.rag_hierarchy", "enable_hierarchy"),
    "agentic": ("ragwright.rag_agent", "enable_agent"),
}


def _entry(route: str) -> Any:
    module, name = ENTRY_POINTS[route]
    return getattr(importlib.import_module(module), name)


def unavailable_routes(rag: Rag, answer_options: RagOptions | None = None) -> dict[str, str]:
    """Route → why it cannot run on *rag* now (absent: it can)."""
    from ragwright.rag_graph import store_has_graph

    out: dict[str, str] = {}
    if rag.graph is None and not store_has_graph(rag.store):
        for route in ("graph_local", "graph_global"):
            out[route] = "no entity graph in this store: ingest with --graph"
    for route in ENTRY_POINTS:
        try:
            _entry(route)
        except ImportError:
            out[route] = f"{ENTRY_POINTS[route][0]} is not installed"
        except AttributeError:
            out[route] = f"{ENTRY_POINTS[route][0]} has no {ENTRY_POINTS[route][1]}"
    if "hierarchical" not in out and not _has_hierarchy(rag):
        out["hierarchical"] = "no document summaries in this store: ingest with --hierarchy"
    if rag.llm is None:
        out.setdefault("agentic", "no chat model: configure --llm")
    if answer_options is not None and answer_options.metadata_filter is not None:
        why = "a per-call metadata filter: only hybrid applies it"
        for route in ("hierarchical", "graph_local", "graph_global", "agentic"):
            out.setdefault(route, why)
    return out


def _has_hierarchy(rag: Rag) -> bool:
    """Whether *rag* has a hierarchy switched on or its store holds document summaries (a first
    hierarchical question on a store without them would summarise every document inside the query)."""
    if getattr(rag, "hierarchy", None) is not None:
        return True
    try:
        from ragwright.rag_hierarchy import store_has_hierarchy
    except ImportError:  # pragma: no cover - the module is checked before
        return False
    return bool(store_has_hierarchy(rag.store))


async def _call(target: Any, question: str, who: Identity) -> RagResponse:
    """``target.aask(question, identity=who)``, or its ``ask`` off the event loop."""
    if hasattr(target, "aask"):
        response: RagResponse = await target.aask(question, identity=who)
    else:
        response = await to_thread(target.ask, question, identity=who)
    return response


async def _run(
    rag: Rag, decision: Decision, question: str, who: Identity, answer_options: RagOptions | None
) -> RagResponse:
    route = decision.route
    if route == "hybrid":
        return await rag.aask(question, answer_options, identity=who)
    if route == "none":
        kind = decision.features.chitchat if decision.features is not None else None
        return await to_thread(direct_answer, question, kind, rag.llm)
    if route in ("graph_local", "graph_global"):
        from ragwright.rag_graph import enable_graph

        graph = enable_graph(rag)
        return await graph.aask(question, mode=route.removeprefix("graph_"), identity=who)
    return await _call(_entry(route)(rag), question, who)


async def aroute_ask(
    rag: Rag,
    question: str,
    *,
    identity: Identity | None = None,
    options: RouterOptions | None = None,
    answer_options: RagOptions | None = None,
) -> RagResponse:
    """Answer *question* by the route :class:`~ragwright.route.Router` chooses (see the module docstring).

    *options*: the router's (default: rules); *answer_options*: the hybrid route's :class:`RagOptions`
    (the other routes use their own)."""
    who = identity or rag.identity
    started = time.perf_counter()
    router = Router(options or RouterOptions(), llm=rag.llm)
    decision = await router.adecide(question, unavailable_routes(rag, answer_options))
    route, reason = decision.route, decision.reason
    try:
        response = await _run(rag, decision, question, who, answer_options)
    except Exception as exc:
        if route == "hybrid":
            raise
        log.warning("route_failed: %s raised %s: %s; hybrid answer", route, type(exc).__name__, exc, exc_info=True)
        reason = f"{reason}; {route} failed ({type(exc).__name__}: {str(exc)[:160]}) → hybrid"
        route = "hybrid"
        response = await rag.aask(question, answer_options, identity=who)
    usage = dict(response.usage)
    if decision.llm_calls:
        usage["llm_calls"] = usage.get("llm_calls", 0) + decision.llm_calls
        usage["route_llm_calls"] = decision.llm_calls
    timings = {**response.timings, "route": time.perf_counter() - started}
    return replace(response, route=route, route_reason=reason, usage=usage, timings=timings)


def route_ask(
    rag: Rag,
    question: str,
    *,
    identity: Identity | None = None,
    options: RouterOptions | None = None,
    answer_options: RagOptions | None = None,
) -> RagResponse:
    """:func:`aroute_ask`, blocking."""
    return run_sync(aroute_ask(rag, question, identity=identity, options=options, answer_options=answer_options))
