from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions, TimeWeightedOptions
from ragwright.retrieve.strategies.time_weighted import TimeWeightedRetriever, parse_timestamp, timestamp_of

from .conftest import FakeRetriever, result

NOW = datetime(2025, 1, 10, 12, 0, tzinfo=UTC)


def ago(hours: float) -> str:
    return (NOW - timedelta(hours=hours)).isoformat()


def weigh(results: list[Any], options: TimeWeightedOptions | None = None, **call: Any) -> Any:
    retriever = TimeWeightedRetriever(FakeRetriever({"q": results}), options, clock=lambda: NOW)
    return asyncio.run(retriever.retrieve("q", RetrievalOptions(**call), Identity()))


def test_score_times_exponential_decay() -> None:
    out = weigh([result("a", 0.8, updated_at=ago(69.3147))])
    assert out[0].score == pytest.approx(0.4, rel=1e-4)  # λ 0.01 halves in ln 2 / 0.01 hours
    out = weigh([result("a", 0.8, updated_at=ago(10))], TimeWeightedOptions(decay_rate=0.05))
    assert out[0].score == pytest.approx(0.8 * math.exp(-0.5))


def test_resolution_order() -> None:
    keys = ("published_at",)
    assert timestamp_of({"updated_at": ago(1), "created_at": ago(100)}, keys) == NOW - timedelta(hours=1)
    assert timestamp_of({"updated_at": "not a date", "created_at": ago(5)}, keys) == NOW - timedelta(hours=5)
    assert timestamp_of({"published_at": ago(7), "lastmod": ago(1)}, keys) == NOW - timedelta(hours=7)
    assert timestamp_of({"lastmod": ago(1)}, keys) is None


def test_timestamp_forms() -> None:
    assert parse_timestamp("2024-09-01") == datetime(2024, 9, 1, tzinfo=UTC)
    assert parse_timestamp("2024-09-01T10:00:00Z") == datetime(2024, 9, 1, 10, tzinfo=UTC)
    assert parse_timestamp(0) == datetime(1970, 1, 1, tzinfo=UTC)
    assert parse_timestamp(True) is None and parse_timestamp(math.nan) is None and parse_timestamp("") is None


def test_no_timestamp_and_future_are_neutral() -> None:
    out = weigh([result("a", 0.5), result("b", 0.4, created_at=(NOW + timedelta(days=3)).isoformat())])
    assert [(r.chunk_id, r.score) for r in out] == [("a", 0.5), ("b", 0.4)]


def test_fresh_overtakes_stale_and_switch_off_keeps_order() -> None:
    page = [result("old", 0.9, updated_at=ago(500)), result("new", 0.6, updated_at=ago(1))]
    assert [r.chunk_id for r in weigh(page)] == ["new", "old"]
    assert [(r.chunk_id, r.score) for r in weigh(page, use_time_weighting=False)] == [("old", 0.9), ("new", 0.6)]
    assert [r.chunk_id for r in weigh(page, TimeWeightedOptions(decay_rate=0))] == ["old", "new"]


def test_negative_scores_get_worse_with_age() -> None:
    out = weigh([result("a", -1.0, updated_at=ago(100)), result("b", -1.0)])
    assert [r.chunk_id for r in out] == ["b", "a"] and out[0].score == -1.0 and out[1].score < -1.0


def test_lost_in_the_middle_is_applied_again_after_reweighting() -> None:
    page = [result(str(i), 1.0 - i / 10, updated_at=ago(1000 if i == 0 else 0)) for i in range(5)]
    out = weigh(page, use_lost_in_the_middle_reordering=True)
    # "0" decays to the bottom; the best remaining ("1") and next ("2") sit at the two ends
    assert out[0].chunk_id == "1" and out[-1].chunk_id == "2"
