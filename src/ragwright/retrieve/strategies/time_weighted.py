"""Time-weighted retrieval: ``score × e^(−λ × age_hours)`` on the final result set.

A chunk's timestamp is the first of ``updated_at``, ``created_at`` and then the configured fallback
keys that is present and parses (ISO 8601; a number is seconds since the epoch; a naive time is UTC).
No timestamp → factor 1.0: neutral, never fabricated. A timestamp in the future counts as age 0.
Results are re-sorted by the weighted score (stable); with lost-in-the-middle reordering on, the
reordering is applied again to the re-sorted list. A negative fused score (z-score fusion) is divided
by the factor instead, so that older is always worse.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ragwright.model.outcome import RetrievalOutcome
from ragwright.model.results import SearchResult
from ragwright.postprocess.reorder import lost_in_the_middle
from ragwright.retrieve.strategies.base import RetrievalRequest, RetrievalStage, RetrieverLike, StageBase, as_stage
from ragwright.retrieve.strategies.options import TimeWeightedOptions

log = logging.getLogger(__name__)

RESERVED_TIME_KEYS = ("updated_at", "created_at")


def parse_timestamp(value: Any) -> datetime | None:
    """An aware datetime from an ISO 8601 string or epoch seconds; ``None`` when it does not parse."""
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), tz=UTC) if math.isfinite(value) else None
        if isinstance(value, str) and value.strip():
            parsed = datetime.fromisoformat(value.strip())
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def timestamp_of(metadata: Mapping[str, Any], fallback_keys: tuple[str, ...]) -> datetime | None:
    """``updated_at`` → ``created_at`` → *fallback_keys*, the first that is present and parses."""
    for key in (*RESERVED_TIME_KEYS, *fallback_keys):
        stamp = parse_timestamp(metadata.get(key))
        if stamp is not None:
            return stamp
    return None


def decay_factor(stamp: datetime | None, now: datetime, rate: float) -> float:
    """``e^(−rate × age_hours)``; 1.0 without a timestamp."""
    if stamp is None:
        return 1.0
    age_hours = max(0.0, (now - stamp).total_seconds() / 3600.0)
    return math.exp(-rate * age_hours)


def _weighted(score: float, factor: float) -> float:
    if score >= 0 or factor <= 0:
        return score * factor if score >= 0 else score
    return score / factor


class TimeWeightedRetriever(StageBase):
    """Discounts older results of *inner*; ``clock`` returns the current aware datetime (injectable)."""

    def __init__(
        self,
        inner: RetrievalStage | RetrieverLike,
        options: TimeWeightedOptions | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.inner, self.options = as_stage(inner), options or TimeWeightedOptions()
        self.clock = clock or (lambda: datetime.now(UTC))

    def reweight(self, results: list[SearchResult], reorder: bool = False) -> list[SearchResult]:
        now = self.clock()
        weighted = [
            replace(
                r,
                score=_weighted(
                    r.score,
                    decay_factor(
                        timestamp_of(r.chunk.metadata, self.options.fallback_metadata_keys),
                        now,
                        self.options.decay_rate,
                    ),
                ),
            )
            for r in results
        ]
        ordered = sorted(weighted, key=lambda r: -r.score)
        return lost_in_the_middle(ordered) if reorder else ordered

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        outcome = await self.inner.run(request)
        options = request.options
        if not options.use_time_weighting or not outcome.results:
            return outcome
        out = self.reweight(list(outcome.results), options.use_lost_in_the_middle_reordering)
        return replace(outcome, results=tuple(out), time_decay_rate=self.options.decay_rate)
