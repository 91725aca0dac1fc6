"""What one retrieval returned and what its strategies decided, as typed data.

Every retrieval stage (the pipeline and each strategy around it) returns a :class:`RetrievalOutcome`:
the ranked results plus one typed record per strategy that ran (:class:`AdaptiveDecision`,
:class:`CragDecision`, :class:`DeepResearchDecision`, :class:`TagDecision`), the stages that fell back
(``degraded``: caches never store such an outcome) and where a result cache served it from.

``Rag.search`` still returns a plain ``list`` of :class:`~ragwright.model.results.SearchResult`: a
:class:`RetrievalResults`, whose ``outcome`` is the typed record and whose ``extensions`` mapping is the
seed's flat view of it (``crag_triggered`` ``"true"``/``"false"``, ``adaptive_complexity`` …), kept for
callers and for the cache's stored form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from ragwright.model.results import SearchResult

__all__ = [
    "AdaptiveDecision",
    "CacheSource",
    "CragDecision",
    "DeepResearchDecision",
    "RetrievalOutcome",
    "RetrievalResults",
    "TagDecision",
]

#: Where a result cache served a call from (``bypass``: the call skipped the cache).
CacheSource = Literal["l1", "l2", "miss", "shared", "bypass"]
_CACHE_SOURCES: tuple[str, ...] = ("l1", "l2", "miss", "shared", "bypass")


@dataclass(frozen=True, slots=True)
class AdaptiveDecision:
    """Adaptive retrieval's classification of the query, and how it was reached."""

    complexity: Literal["simple", "complex", "multi_hop"]
    source: Literal["heuristic", "llm", "default"]


@dataclass(frozen=True, slots=True)
class CragDecision:
    """Corrective RAG's grading: the share judged relevant, by which grader, and what it did."""

    triggered: bool
    score: float
    grader: Literal["heuristic", "llm", "heuristic_fallback"]
    action: Literal["none", "web_failed", "replace", "append"]


@dataclass(frozen=True, slots=True)
class DeepResearchDecision:
    """How many sufficiency checks ran, why the loop stopped and the sub-queries it searched."""

    depth: int
    stop: Literal["max_depth", "sufficient", "no_new_queries", "failed", "malformed"]
    queries: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TagDecision:
    """The tags added to the metadata filter (``{key: value}``), and whether they were dropped again
    because they matched nothing."""

    tags: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    relaxed: bool = False


@dataclass(frozen=True, slots=True)
class RetrievalOutcome:
    """Ranked results and the typed decisions that produced them."""

    results: tuple[SearchResult, ...] = ()
    degraded: tuple[str, ...] = ()
    cache: CacheSource | None = None
    adaptive: AdaptiveDecision | None = None
    crag: CragDecision | None = None
    deep_research: DeepResearchDecision | None = None
    tags: TagDecision | None = None
    time_decay_rate: float | None = None

    @classmethod
    def of(cls, results: Iterable[SearchResult]) -> RetrievalOutcome:
        """An outcome carrying only *results* (or the outcome *results* already carry)."""
        carried = getattr(results, "outcome", None)
        if isinstance(carried, RetrievalOutcome):
            return carried
        return cls(tuple(results))

    def with_results(self, results: Iterable[SearchResult]) -> RetrievalOutcome:
        return replace(self, results=tuple(results))

    def degrade(self, stage: str) -> RetrievalOutcome:
        """This outcome with *stage* recorded as having fallen back."""
        return replace(self, degraded=(*self.degraded, stage))

    @property
    def is_degraded(self) -> bool:
        """Whether some stage fell back (such outcomes are never cached)."""
        return bool(self.degraded)

    def as_results(self) -> RetrievalResults:
        """The results as the public list type, carrying this outcome."""
        return RetrievalResults.from_outcome(self)

    def extensions(self) -> dict[str, Any]:
        """The seed's flat names for these decisions (``RetrievalContext.Extensions``)."""
        out: dict[str, Any] = {}
        if self.degraded:
            out["degraded"] = list(self.degraded)
        if self.cache is not None:
            out["cache"] = self.cache
        if self.adaptive is not None:
            out["adaptive_complexity"] = self.adaptive.complexity
            out["adaptive_source"] = self.adaptive.source
        if self.crag is not None:
            out["crag_triggered"] = "true" if self.crag.triggered else "false"
            out["crag_score"] = self.crag.score
            out["crag_grader"] = self.crag.grader
            out["crag_action"] = self.crag.action
        if self.deep_research is not None:
            out["deep_research_depth"] = self.deep_research.depth
            out["deep_research_stop"] = self.deep_research.stop
            out["deep_research_queries"] = list(self.deep_research.queries)
        if self.tags is not None:
            out["tag_filter"] = dict(self.tags.tags)
            if self.tags.relaxed:
                out["tag_filter_relaxed"] = True
        if self.time_decay_rate is not None:
            out["time_weighted"] = self.time_decay_rate
        return out

    @classmethod
    def from_extensions(cls, results: Iterable[SearchResult], ext: Mapping[str, Any]) -> RetrievalOutcome:
        """The outcome the flat view *ext* describes (the inverse of :meth:`extensions`; other keys are
        not decisions of ours and are dropped)."""
        cache = ext.get("cache")
        return cls(
            results=tuple(results),
            degraded=tuple(str(s) for s in ext.get("degraded", ()) or ()),
            cache=cache if cache in _CACHE_SOURCES else None,
            adaptive=(
                AdaptiveDecision(ext["adaptive_complexity"], ext.get("adaptive_source", "default"))
                if "adaptive_complexity" in ext
                else None
            ),
            crag=(
                CragDecision(
                    triggered=str(ext["crag_triggered"]).lower() == "true",
                    score=float(ext.get("crag_score", 0.0)),
                    grader=ext.get("crag_grader", "heuristic"),
                    action=ext.get("crag_action", "none"),
                )
                if "crag_triggered" in ext
                else None
            ),
            deep_research=(
                DeepResearchDecision(
                    int(ext.get("deep_research_depth", 0)),
                    ext["deep_research_stop"],
                    tuple(ext.get("deep_research_queries", ())),
                )
                if "deep_research_stop" in ext
                else None
            ),
            tags=(
                TagDecision(MappingProxyType(dict(ext["tag_filter"])), bool(ext.get("tag_filter_relaxed", False)))
                if "tag_filter" in ext
                else None
            ),
            time_decay_rate=float(ext["time_weighted"]) if "time_weighted" in ext else None,
        )


class RetrievalResults(list[SearchResult]):
    """Search results (a plain ``list``: everything that takes a list keeps working) carrying the
    :class:`RetrievalOutcome` that produced them; ``extensions`` is its flat view."""

    outcome: RetrievalOutcome

    def __init__(self, results: Iterable[SearchResult] = (), extensions: Mapping[str, Any] | None = None) -> None:
        super().__init__(results)
        self.outcome = RetrievalOutcome.from_extensions(self, extensions or {})

    @classmethod
    def from_outcome(cls, outcome: RetrievalOutcome) -> RetrievalResults:
        out = cls(outcome.results)
        out.outcome = outcome
        return out

    @property
    def extensions(self) -> dict[str, Any]:
        """The decisions under the seed's flat names (a copy)."""
        return self.outcome.extensions()

    @property
    def degraded(self) -> bool:
        """Whether some stage fell back (such results are never cached)."""
        return self.outcome.is_degraded
