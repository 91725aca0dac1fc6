"""The federated search: every source searched as the caller, failures degraded, an opaque scale."""

import asyncio
import logging
from collections.abc import Sequence

import pytest

from ragwright.errors import ConfigError, RetrievalError, StoreError
from ragwright.federation import (
    FederatedResults,
    FederationOptions,
    SourceSpec,
    above_threshold,
    federated_search,
    score_scale_of,
)
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.stores.base import ScoreScale


def result(cid: str, score: float) -> SearchResult:
    return SearchResult(Chunk(id=cid, document_id=cid, text=cid, position=0), score)


class Fake:
    def __init__(self, name: str, results: Sequence[SearchResult] = (), error: Exception | None = None) -> None:
        self.name, self.results, self.error = name, list(results), error
        self.calls: list[tuple[str, Identity, int]] = []
        self.delay = 0.0

    async def search(self, query: str, *, identity: Identity, top_k: int) -> Sequence[SearchResult]:
        self.calls.append((query, identity, top_k))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.results[:top_k]


def options(*names: str, **kw: object) -> FederationOptions:
    return FederationOptions(tuple(SourceSpec(n) for n in names), **kw)  # type: ignore[arg-type]


def run(sources: list[Fake], opts: FederationOptions, top_k: int = 5) -> FederatedResults:
    return asyncio.run(federated_search(sources, "q", identity=Identity("acme", ("hr",)), top_k=top_k, options=opts))


def test_every_source_gets_the_query_identity_and_top_k() -> None:
    a, b = Fake("a", [result("x", 0.9)]), Fake("b", [result("y", 0.8)])
    found = run([a, b], options("a", "b"), top_k=3)
    assert a.calls == b.calls == [("q", Identity("acme", ("hr",)), 3)]
    assert found.searched == ("a", "b") and found.failures == () and not found.degraded
    assert {r.source for r in found} == {"a", "b"}


def test_a_failing_source_degrades_with_a_named_warning(caplog: pytest.LogCaptureFixture) -> None:
    a = Fake("a", [result("x", 0.9), result("y", 0.5)])
    broken = Fake("pg", error=StoreError("connection refused"))
    with caplog.at_level(logging.WARNING, logger="ragwright.federation"):
        found = run([a, broken], options("a", "pg"))
    assert [r.chunk_id for r in found] == ["x", "y"]
    assert found.degraded and [(f.source, f.error) for f in found.failures] == [("pg", "StoreError")]
    assert found.failures[0].message == "connection refused"
    assert any("federation_source_failed: pg: StoreError" in m for m in caplog.messages)
    assert found.to_dict()["failures"] == [{"source": "pg", "error": "StoreError", "message": "connection refused"}]


def test_a_slow_source_times_out_and_degrades() -> None:
    slow = Fake("slow", [result("s", 1.0)])
    slow.delay = 2.0
    found = run([Fake("a", [result("x", 0.1)]), slow], options("a", "slow", source_timeout_s=0.05))
    assert [r.source for r in found] == ["a"] and found.failures[0].error == "TimeoutError"
    assert found.seconds["slow"] < 1.5


def test_every_source_failing_raises_naming_each() -> None:
    with pytest.raises(RetrievalError, match=r"a \(StoreError: down\); b \(RuntimeError: boom\)"):
        run([Fake("a", error=StoreError("down")), Fake("b", error=RuntimeError("boom"))], options("a", "b"))


def test_a_config_error_is_the_callers_not_a_degraded_source() -> None:
    with pytest.raises(ConfigError, match="top_k"):
        run([Fake("a", [result("x", 1.0)]), Fake("b", error=ConfigError("top_k=0 is invalid"))], options("a", "b"))
    with pytest.raises(ConfigError, match="federation source"):
        run([Fake("a")], options("a", "missing"))


def test_merged_scores_are_an_opaque_ranking_and_thresholds_skip_them(caplog: pytest.LogCaptureFixture) -> None:
    found = run([Fake("a", [result("x", 0.9), result("y", 0.2)]), Fake("b", [result("z", 0.95)])], options("a", "b"))
    assert found.score_scale is ScoreScale.OPAQUE_RANKING and score_scale_of(found) is ScoreScale.OPAQUE_RANKING
    assert found.to_dict()["score_scale"] == "opaque_ranking"
    assert all(r.score < 0.02 for r in found)  # RRF sums (1/61 at best), not cosines
    with caplog.at_level(logging.INFO, logger="ragwright.federation"):
        kept = above_threshold(found, 0.5)
    assert kept == list(found)  # a similarity cut-off of 0.5 would have dropped every RRF sum
    assert any("threshold_skipped" in m for m in caplog.messages)
    plain = [result("x", 0.9), result("y", 0.2)]  # similarity-scaled: the threshold applies
    assert score_scale_of(plain) is ScoreScale.SIMILARITY
    assert [r.chunk_id for r in above_threshold(plain, 0.5)] == ["x"]
    assert above_threshold(plain, None) == plain
