"""The agent's read-only tools, bound to one caller's identity outside the model.

:class:`AgentTools` is built for one :class:`~ragwright.model.identity.Identity` and never reads an
identity, tenant, group or filter from the model: every tool call runs as :meth:`AgentTools.caller`,
which ignores the arguments (argument names a tool does not take are reported back as ignored, and
recorded in the trajectory). The tools:

* ``search`` — the Rag's own search (security filter inside every arm) as the bound identity;
* ``fetch`` — a passage by its source number, chunk id or document id, with its neighbouring chunks;
  every chunk is read through the store's filtered lookup again (a hidden id reads exactly like a
  missing one);
* ``graph`` — entity-graph local search as the bound identity, when the Rag has a graph;
* ``calculate`` — arithmetic (:mod:`ragwright.agent.calculator`, no ``eval``).

Passages the tools return become the run's :class:`Evidence`, numbered ``[Source N]`` in the order first
seen; the final answer's citations are checked against it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ragwright.agent.calculator import CalculatorError, calculate
from ragwright.agent.options import AgentOptions
from ragwright.chunk.tokens import decode, encode
from ragwright.generate.prompt import source_text
from ragwright.graph.local import GraphResult
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.stores.base import ChunkStore

#: ``search(query, identity, top_k)``: the Rag's search as *identity*.
Searcher = Callable[[str, Identity, int], Awaitable[Sequence[SearchResult]]]
#: ``graph(query, identity, top_k)``: graph local search as *identity*.
GraphSearcher = Callable[[str, Identity, int], Awaitable[GraphResult]]

TOOLS: Final = ("search", "fetch", "graph", "calculate")
#: The argument names each tool reads (``input`` is the JSON action's one field).
ARGUMENTS: Final[dict[str, tuple[str, ...]]] = {
    "search": ("query", "input"),
    "fetch": ("id", "input", "source", "chunk_id", "document_id"),
    "graph": ("entity", "query", "input"),
    "calculate": ("expression", "input"),
}
MAX_QUERY_CHARS: Final = 400
NOT_AVAILABLE: Final = "No passage with that id is available to you."
_SOURCE_NUMBER: Final = re.compile(r"^\s*\[?\s*(?:sources?\s*)?#?(\d{1,4})\s*\]?\s*$", re.IGNORECASE)
_WORD: Final = re.compile(r"\w+", re.UNICODE)


def normalise_query(query: str) -> str:
    """The form repeated searches are compared in: lower-case words, sorted, duplicates dropped."""
    return " ".join(sorted(set(_WORD.findall(query.lower()))))


def cut(text: str, max_tokens: int) -> str:
    """*text* cut to *max_tokens* cl100k tokens (``…`` marks a cut)."""
    ids = encode(text)
    return text if len(ids) <= max_tokens else decode(ids[:max_tokens]).rstrip() + " …"


@dataclass
class Evidence:
    """The passages gathered in one run, numbered ``[Source N]`` (1-based) in the order first seen."""

    results: list[SearchResult] = field(default_factory=list)
    _numbers: dict[str, int] = field(default_factory=dict)

    def add(self, result: SearchResult) -> tuple[int, bool]:
        """(its source number, whether it is new)."""
        known = self._numbers.get(result.chunk.id)
        if known is not None:
            return known, False
        self.results.append(result)
        self._numbers[result.chunk.id] = len(self.results)
        return len(self.results), True

    def number(self, chunk_id: str) -> int | None:
        return self._numbers.get(chunk_id)

    def __len__(self) -> int:
        return len(self.results)


@dataclass
class Observation:
    """What one tool call returned: the text shown to the model, the passages it added (or named),
    the ids of its results, and a note (``refused``, ``not_found``, ``error``, ``repeated``) when it
    did not simply succeed."""

    tool: str
    text: str
    result_ids: list[str] = field(default_factory=list)
    note: str | None = None
    ignored: list[str] = field(default_factory=list)


class AgentTools:
    """The read-only tools of one caller (see the module docstring)."""

    def __init__(
        self,
        identity: Identity,
        search: Searcher,
        lookup: ChunkStore | None = None,
        graph: GraphSearcher | None = None,
        options: AgentOptions | None = None,
    ) -> None:
        self._identity = identity
        self._search, self._lookup, self._graph = search, lookup, graph
        self.options = options or AgentOptions()

    @property
    def identity(self) -> Identity:
        """The identity every tool runs as (fixed at construction)."""
        return self._identity

    @property
    def names(self) -> tuple[str, ...]:
        """The tools available: ``graph`` only with a graph, ``fetch`` only with a chunk lookup."""
        return tuple(
            n for n in TOOLS if (n != "graph" or self._graph is not None) and (n != "fetch" or self._lookup is not None)
        )

    def caller(self, arguments: Mapping[str, Any]) -> Identity:
        """The identity a call runs as: always the bound one. *arguments* (the model's) are not read —
        a ``tenant``, ``groups`` or ``filter`` the model writes cannot widen what the caller sees."""
        del arguments
        return self._identity

    async def run(self, name: str, arguments: Mapping[str, Any], evidence: Evidence) -> Observation:
        """Run tool *name* with the model's *arguments*; unknown tools and bad arguments are reported
        to the model as text (never raised)."""
        if name not in self.names:
            return Observation(
                name, f"There is no tool {name!r}; the tools are: {', '.join(self.names)}.", note="error"
            )
        ignored = sorted(k for k in arguments if k not in ARGUMENTS[name] and k != "action")
        value = next((arguments[k] for k in ARGUMENTS[name] if isinstance(arguments.get(k), str | int)), None)
        if value is None or not str(value).strip():
            obs = Observation(name, f"The {name} tool needs {ARGUMENTS[name][0]!r}.", note="error")
        elif name == "search":
            obs = await self.search(str(value), arguments, evidence)
        elif name == "fetch":
            obs = await self.fetch(str(value), arguments, evidence)
        elif name == "graph":
            obs = await self.graph_lookup(str(value), arguments, evidence)
        else:
            obs = self.calculate(str(value))
        obs.ignored = ignored
        if ignored:
            obs.text += f"\n(Ignored arguments: {', '.join(ignored)}. Access is fixed by who is asking.)"
        return obs

    # -- the tools -----------------------------------------------------------------------------------------
    async def search(self, query: str, arguments: Mapping[str, Any], evidence: Evidence) -> Observation:
        query = query.strip()[:MAX_QUERY_CHARS]
        found = await self._search(query, self.caller(arguments), self.options.search_top_k)
        return self._passages("search", list(found)[: self.options.search_top_k], evidence, "No passage matched.")

    async def fetch(self, ref: str, arguments: Mapping[str, Any], evidence: Evidence) -> Observation:
        assert self._lookup is not None
        who = self.caller(arguments)
        ref = ref.strip()
        match = _SOURCE_NUMBER.match(ref)
        chunk_id = ref
        if match is not None and 1 <= int(match.group(1)) <= len(evidence):
            chunk_id = evidence.results[int(match.group(1)) - 1].chunk.id
        chunks = self._lookup.get_chunks([chunk_id], who)
        if chunks:
            chunks = self._neighbours(chunks[0], who)
        else:  # a document id: its first chunks the caller may see, each read through the filter again
            mine = [c for c in self._lookup.document_chunks(ref) if who.can_see(c.tenant, c.acl)]
            ids = [c.id for c in sorted(mine, key=lambda c: c.position)[: 1 + 2 * self.options.fetch_neighbours]]
            chunks = self._lookup.get_chunks(ids, who) if ids else []
        if not chunks:
            return Observation("fetch", NOT_AVAILABLE, note="not_found")
        results = [SearchResult(c, 0.0) for c in chunks]
        return self._passages("fetch", results, evidence, NOT_AVAILABLE)

    def _neighbours(self, chunk: Chunk, who: Identity) -> list[Chunk]:
        assert self._lookup is not None
        before: list[Chunk] = []
        after: list[Chunk] = []
        for side, link in ((before, "prev_id"), (after, "next_id")):
            current = chunk
            for _ in range(self.options.fetch_neighbours):
                nid = getattr(current, link)
                found = self._lookup.get_chunks([nid], who) if nid else []
                if not found:
                    break
                current = found[0]
                side.append(current)
        return [*reversed(before), chunk, *after]

    async def graph_lookup(self, query: str, arguments: Mapping[str, Any], evidence: Evidence) -> Observation:
        assert self._graph is not None
        found = await self._graph(query.strip()[:MAX_QUERY_CHARS], self.caller(arguments), self.options.search_top_k)
        obs = self._passages("graph", found.results[: self.options.search_top_k], evidence, "No entity matched.")
        lines = []
        for r in found.relations[:8]:
            n = evidence.number(r.chunk_id)
            if n is not None:
                lines.append(f"{r.source} —{r.type}→ {r.target} [Source {n}]")
        if lines:
            obs.text = "Relations:\n" + "\n".join(lines) + "\n\n" + obs.text
        return obs

    def calculate(self, expression: str) -> Observation:
        try:
            value = calculate(expression)
        except CalculatorError as exc:
            return Observation("calculate", f"Calculator error: {exc}.", note="error")
        shown = f"{value:.10g}" if isinstance(value, float) else str(value)
        return Observation("calculate", f"{expression.strip()} = {shown}")

    # -- rendering -----------------------------------------------------------------------------------------
    def _passages(self, tool: str, results: Sequence[SearchResult], evidence: Evidence, empty: str) -> Observation:
        if not results:
            return Observation(tool, empty, note="not_found")
        blocks, ids = [], []
        for r in results:
            n, new = evidence.add(r)
            ids.append(r.chunk.id)
            head = f"[Source {n}] (document: {r.chunk.document_id}" + (
                f", section: {r.chunk.section})" if r.chunk.section else ")"
            )
            body = cut(source_text(r), self.options.passage_tokens) if new else "(already shown above)"
            blocks.append(f"{head}\n{body}")
        return Observation(tool, "\n\n".join(blocks), result_ids=ids)
