"""Agentic RAG on the facade: ``enable_agent(rag).ask(question)``.

>>> rag = Rag.open("store.db", llm=load_chat("local"))                 # doctest: +SKIP
>>> response = enable_agent(rag, AgentOptions(max_rounds=3)).ask("Where does the director of X live?")  # doctest: +SKIP
>>> response.trajectory                                                 # doctest: +SKIP

The agent's tools run as the caller's identity (the ``identity`` given to the call, else the Rag's),
bound here, outside the model: search is the Rag's own search, fetch reads through the store's filtered
lookup, graph lookup is the Rag's graph search when it has one (:mod:`ragwright.rag_graph`).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ragwright._sync import run_sync
from ragwright.agent import AgentLoop, AgentOptions, AgentTools
from ragwright.errors import ConfigError
from ragwright.generate.options import RagOptions
from ragwright.graph.local import GraphResult
from ragwright.model.identity import Identity
from ragwright.model.results import RagResponse, SearchResult
from ragwright.models.llms.base import ChatModel

if TYPE_CHECKING:
    from ragwright.rag import Rag

_AGENTS: weakref.WeakKeyDictionary[Rag, RagAgent] = weakref.WeakKeyDictionary()

NEEDS_LLM = (
    "the agent needs a chat model to choose its tools: give --llm local (pip install 'ragwright[llm]') or "
    '--llm openai:MODEL@URL on the command line, llm = "local" in ragwright.toml, '
    "or Rag(..., llm=load_chat('local')) in Python"
)


def enable_agent(rag: Rag, options: AgentOptions | None = None, *, llm: ChatModel | None = None) -> RagAgent:
    """The agent of *rag* (made on the first call; *options* / *llm* given later replace the earlier ones).
    *llm* defaults to the Rag's chat model; without either, :meth:`RagAgent.ask` refuses with a
    :class:`~ragwright.errors.ConfigError` (the tools alone still work, e.g. for a leak audit)."""
    agent = _AGENTS.get(rag)
    if agent is None:
        agent = _AGENTS[rag] = RagAgent(rag, options or AgentOptions(), llm=llm)
    else:
        agent.options = options or agent.options
        agent.llm = llm or agent.llm
    return agent


def agent_of(rag: Rag) -> RagAgent | None:
    """The agent :func:`enable_agent` made for *rag*, if any."""
    return _AGENTS.get(rag)


class RagAgent:
    """The agent of a :class:`~ragwright.rag.Rag`: its tools per caller and its loop."""

    def __init__(self, rag: Rag, options: AgentOptions, *, llm: ChatModel | None = None) -> None:
        self.rag, self.options, self.llm = rag, options, llm

    def tools_for(self, identity: Identity | None = None) -> AgentTools:
        """The read-only tools bound to *identity* (else the Rag's)."""
        rag = self.rag
        who = identity or rag.identity

        async def search(query: str, bound: Identity, top_k: int) -> Sequence[SearchResult]:
            return await rag.asearch(query, identity=bound, top_k=top_k)

        graph = None
        if rag.graph is not None:
            rag_graph = rag.graph

            async def graph_search(query: str, bound: Identity, top_k: int) -> GraphResult:
                return await rag_graph.asearch(query, identity=bound, top_k=top_k)

            graph = graph_search
        return AgentTools(who, search, rag.store, graph, self.options)

    async def aask(
        self,
        question: str,
        *,
        identity: Identity | None = None,
        options: AgentOptions | None = None,
        rag_options: RagOptions | None = None,
    ) -> RagResponse:
        """Answer *question* with the agent loop as *identity*; the response carries the trajectory.
        *options* replace the agent's caps for this call; *rag_options* (else the Rag's) give the answer
        contract's settings (``verify_answer`` …)."""
        llm = self.llm or self.rag.llm
        if llm is None:
            raise ConfigError(NEEDS_LLM, field="llm")
        opts = options or self.options
        started = time.perf_counter()
        loop = AgentLoop(
            llm,
            self.tools_for(identity),
            opts,
            embedder=self.rag.embedder,
            rag_options=rag_options or self.rag.rag_options,
        )
        response = await loop.run(question)
        return replace(response, timings={**response.timings, "total_s": time.perf_counter() - started})

    def ask(
        self,
        question: str,
        *,
        identity: Identity | None = None,
        options: AgentOptions | None = None,
        rag_options: RagOptions | None = None,
    ) -> RagResponse:
        return run_sync(self.aask(question, identity=identity, options=options, rag_options=rag_options))
