"""A result list that also says what the retrieval strategies decided.

Seed 000 records strategy decisions in ``RetrievalContext.Extensions`` (``adaptive_complexity``,
``crag_triggered`` …). Here a strategy returns a :class:`RetrievalResults`: a plain ``list`` of
:class:`~ragwright.model.results.SearchResult` (everything that takes a list keeps working) with an
``extensions`` mapping beside it. ``extensions["degraded"]`` names the stages that fell back; caches
never store a degraded result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragwright.model.results import SearchResult


class RetrievalResults(list[SearchResult]):
    """Search results plus the decisions that produced them (``extensions``)."""

    extensions: dict[str, Any]

    def __init__(self, results: Iterable[SearchResult] = (), extensions: Mapping[str, Any] | None = None) -> None:
        super().__init__(results)
        self.extensions = dict(extensions or {})

    @property
    def degraded(self) -> bool:
        """Whether some stage fell back (such results are never cached)."""
        return bool(self.extensions.get("degraded"))


def extensions_of(results: Iterable[SearchResult]) -> dict[str, Any]:
    """The extensions carried by *results* (a copy; empty for a plain list)."""
    return dict(getattr(results, "extensions", None) or {})


def annotate(
    results: Iterable[SearchResult],
    inherited: Iterable[SearchResult] | None = None,
    *,
    degraded: str | None = None,
    **extensions: Any,
) -> RetrievalResults:
    """*results* with the extensions of *inherited* (an inner stage's output) plus *extensions*.

    ``degraded`` names a stage that fell back; it is appended to ``extensions["degraded"]``.
    """
    merged = extensions_of(inherited if inherited is not None else results)
    merged.update(extensions)
    if degraded is not None:
        merged["degraded"] = [*merged.get("degraded", []), degraded]
    return RetrievalResults(results, merged)
