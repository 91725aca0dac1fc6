"""One query over several sources, each searched as the caller, merged by weighted RRF.

Every source runs its own whole search — its own embedder embeds the query, its own arms apply the
caller's security filter and the metadata filter *inside* the search, before top-k — so nothing is
filtered after the merge and nothing a source would not show the caller reaches the merge. The sources
run concurrently.

Failure: a source that raises (or runs past ``source_timeout_s``) is left out with a
``federation_source_failed`` warning naming it, the others' results are merged, and the failure is
reported on the results (:attr:`FederatedResults.failures`) — unless *every* source failed, which
raises :class:`~ragwright.errors.RetrievalError` naming each. A :class:`~ragwright.errors.ConfigError`
is the caller's mistake, not a source's failure, and is raised.

Scale: merged scores are RRF sums, an opaque ranking rather than similarities;
:class:`FederatedResults` says so (``score_scale``), and :func:`above_threshold` — what a consumer with
a fixed similarity cut-off calls — skips the cut-off on such results and keeps them in rank order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from ragwright.errors import ConfigError, RetrievalError
from ragwright.federation.merge import merge
from ragwright.federation.options import FederationOptions
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.stores.base import ScoreScale

log = logging.getLogger(__name__)
T = TypeVar("T")


@runtime_checkable
class FederatedSource(Protocol):
    """What a federated search needs of a source: its name, and a search as a given identity that
    applies that identity's security filter inside the search (``Rag.asearch`` through an adapter)."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, identity: Identity, top_k: int) -> Sequence[SearchResult]: ...


@dataclass(frozen=True, slots=True)
class SourceFailure:
    """A source left out of a federated search: its name, the error's type and message."""

    source: str
    error: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "error": self.error, "message": self.message}


class FederatedResults(list[SearchResult]):
    """Merged results (a plain ``list``), best first, each naming its ``source``; ``failures`` lists the
    sources left out; ``score_scale`` is :attr:`ScoreScale.OPAQUE_RANKING` (RRF sums, not similarities)."""

    score_scale: ScoreScale = ScoreScale.OPAQUE_RANKING

    def __init__(
        self,
        results: Iterable[SearchResult] = (),
        *,
        searched: Sequence[str] = (),
        failures: Sequence[SourceFailure] = (),
        seconds: dict[str, float] | None = None,
    ) -> None:
        super().__init__(results)
        self.searched, self.failures = tuple(searched), tuple(failures)
        #: wall-clock seconds per source (failed ones included)
        self.seconds: dict[str, float] = dict(seconds or {})

    @property
    def degraded(self) -> bool:
        """Whether some source failed (the results are partial)."""
        return bool(self.failures)

    def summary(self) -> dict[str, Any]:
        """The sources searched, those that failed and the score scale (``--json``'s ``federation``)."""
        return {
            "sources": list(self.searched),
            "failures": [f.to_dict() for f in self.failures],
            "score_scale": self.score_scale.value,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self], **self.summary()}


def score_scale_of(results: object) -> ScoreScale:
    """How *results*' scores read: what they say (``score_scale``), else similarity."""
    scale = getattr(results, "score_scale", ScoreScale.SIMILARITY)
    return scale if isinstance(scale, ScoreScale) else ScoreScale.SIMILARITY


def above_threshold(results: Sequence[T], floor: float | None, *, what: str = "min_score") -> list[T]:
    """*results* whose ``score`` reaches *floor* — or, when they are an opaque ranking (a federated
    search's RRF sums), all of them in rank order with the threshold skipped (``threshold_skipped``)."""
    if floor is None:
        return list(results)
    if score_scale_of(results) is ScoreScale.OPAQUE_RANKING:
        log.info("threshold_skipped: %s=%s not applied to an opaque ranking (RRF sums)", what, floor)
        return list(results)
    return [r for r in results if getattr(r, "score") >= floor]  # noqa: B009 - any result type with a score


async def federated_search(
    sources: Sequence[FederatedSource],
    query: str,
    *,
    identity: Identity,
    top_k: int,
    options: FederationOptions,
) -> FederatedResults:
    """Search every source in *options* (by name, in *sources*) as *identity*, each for its best *top_k*,
    and merge them by weighted RRF into the best *top_k* (see the module docstring for failures).

    Keyed by ``(source, chunk id)``, a merged top-k holds at most each source's top-k, so no source
    needs to return more than *top_k*."""
    by_name = {s.name: s for s in sources}
    missing = [name for name in options.names if name not in by_name]
    if missing:
        raise ConfigError.invalid("federation source", missing[0], "one of " + ", ".join(sorted(by_name)))
    chosen = [by_name[name] for name in options.names]
    seconds: dict[str, float] = {}

    async def one(source: FederatedSource) -> Sequence[SearchResult]:
        start = time.perf_counter()
        try:
            work = source.search(query, identity=identity, top_k=top_k)
            if options.source_timeout_s is None:
                return await work
            return await asyncio.wait_for(work, options.source_timeout_s)
        finally:
            seconds[source.name] = time.perf_counter() - start

    outcomes = await asyncio.gather(*(one(s) for s in chosen), return_exceptions=True)
    rankings: dict[str, Sequence[SearchResult]] = {}
    failures: list[SourceFailure] = []
    for source, outcome in zip(chosen, outcomes, strict=True):
        if isinstance(outcome, ConfigError):
            raise outcome
        if isinstance(outcome, BaseException) and not isinstance(outcome, Exception):
            raise outcome  # cancellation, KeyboardInterrupt: not a source's failure
        if isinstance(outcome, Exception):
            message = str(outcome) or (
                f"no answer within {options.source_timeout_s} s" if isinstance(outcome, TimeoutError) else ""
            )
            failures.append(SourceFailure(source.name, type(outcome).__name__, message))
            log.warning("federation_source_failed: %s: %s: %s", source.name, type(outcome).__name__, message)
            continue
        rankings[source.name] = outcome
    if not rankings:
        detail = "; ".join(f"{f.source} ({f.error}: {f.message})" for f in failures)
        raise RetrievalError(f"every federated source failed: {detail}")
    merged = merge(rankings, weights=options.weights, k=options.rrf_k, top_k=top_k)
    return FederatedResults(merged, searched=list(rankings), failures=failures, seconds=seconds)
