from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ragwright.errors import ConfigError
from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions, TagRetrievalOptions
from ragwright.rag import Rag
from ragwright.retrieve.strategies.compose import build_retriever, layers, tag_indexer
from ragwright.sources import BytesSource
from ragwright.testing.doubles import ScriptedChat

from .conftest import FakeRetriever, result

NOW = datetime(2025, 1, 10, tzinfo=UTC)


def test_decorator_order(make_rag: Callable[[], Rag]) -> None:
    rag = make_rag()
    stacked = build_retriever(
        rag.retriever, tags=True, time=True, deep=True, adaptive=True, crag=True, llm=ScriptedChat(), cache=True
    )
    assert layers(stacked) == [
        "CachedRetriever",
        "TagRetriever",
        "TimeWeightedRetriever",
        "DeepResearchRetriever",
        "AdaptiveRetriever",
        "CorrectiveRetriever",
        "Retriever",
    ]
    assert layers(build_retriever(rag.retriever, time=True)) == ["TimeWeightedRetriever", "Retriever"]
    assert build_retriever(rag.retriever) is rag.retriever


def test_order_is_observable(make_rag: Callable[[], Rag]) -> None:
    """Tags narrow every inner retrieval (sub-queries included); time weighting re-scores the fused page."""
    rag = make_rag()
    rag.ingestion.hooks.append(tag_indexer(rag.store, rag.embedder))
    rag.ingest(BytesSource({"f.txt": b"finance budget"}), metadata={"department": "finance"})
    old = (NOW - timedelta(hours=1000)).isoformat()
    base = FakeRetriever(
        {
            "finance budget": [result("a", 0.9, updated_at=old), result("b", 0.8)],
            "sub": [result("a", 0.9, updated_at=old)],
        }
    )
    chat = ScriptedChat([json.dumps({"sufficient": False, "subQueries": ["sub"]}), json.dumps({"sufficient": True})])
    stacked = build_retriever(
        base,
        tags=TagRetrievalOptions(min_score=0.5),
        time=True,
        deep=True,
        llm=chat,
        store=rag.store,
        embedder=rag.embedder,
        clock=lambda: NOW,
    )
    out = asyncio.run(stacked.retrieve("finance budget", RetrievalOptions(), Identity()))
    assert [c[0] for c in base.calls] == ["finance budget", "sub"]
    assert all(str(c[1].metadata_filter) == "Eq(key='department', value='finance')" for c in base.calls)
    # deep research fused a (rank 1 twice) above b; the time decay (λ 0.01 × 1000 h) then sinks a
    assert [r.chunk_id for r in out] == ["b", "a"]
    assert out[1].score == pytest.approx((2 / 61) * 2.718281828**-10)
    assert out.extensions["tag_filter"] == {"department": "finance"} and "deep_research_depth" in out.extensions


def test_configuration_errors() -> None:
    base = FakeRetriever()
    with pytest.raises(ConfigError, match="chat model"):
        build_retriever(base, deep=True)
    with pytest.raises(ConfigError, match="store"):
        build_retriever(base, tags=True)
    with pytest.raises(ConfigError, match="tag table"):
        build_retriever(base, tags=True, store=object(), embedder=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="index_version"):
        build_retriever(base, cache=True, store=object())
    with pytest.raises(ConfigError, match="TimeWeightedOptions"):
        build_retriever(base, time=TagRetrievalOptions())  # type: ignore[arg-type]


def test_switches_pass_through(make_rag: Callable[[], Rag]) -> None:
    rag = make_rag()
    base = FakeRetriever({"q": [result("a", 0.5, updated_at=(NOW - timedelta(hours=100)).isoformat())]})
    stacked: Any = build_retriever(base, time=True, adaptive=True, crag=True, clock=lambda: NOW, store=rag.store)
    out = asyncio.run(stacked.retrieve("q", RetrievalOptions(use_time_weighting=False), Identity()))
    assert out[0].score == 0.5 and base.calls[-1][1] == RetrievalOptions(use_time_weighting=False)
