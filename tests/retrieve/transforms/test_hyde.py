"""HyDE: hypotheses at temperature 0.8, one embedding batch, the L2-normalised mean searched by the
dense arm while BM25 keeps the raw query; survivors averaged; all failing → raw query."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from ragwright.errors import GenerationError
from ragwright.models.llms.base import Message
from ragwright.options import RetrievalOptions
from ragwright.retrieve.transforms import HydeOptions, MultiQueryOptions, TransformOptions
from ragwright.retrieve.transforms.hyde import mean_vector
from ragwright.testing.doubles import HashingEmbedder, ScriptedChat

from .conftest import SpyStore, calls_of, chat_for, router, run

HYDE = TransformOptions(hyde=HydeOptions())
HYPOTHESES = [
    "Employees receive sixteen weeks of paid parental leave.",
    "Parental leave is paid for sixteen weeks after a year of service.",
    "The leave form is filed with your manager.",
]


class BatchSpy(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return super().embed_query(text)


def cycling(replies: list[str | BaseException]) -> ScriptedChat:
    lock, state = threading.Lock(), {"i": 0}

    def hyde(_: list[Message]) -> str:
        with lock:
            item = replies[state["i"] % len(replies)]
            state["i"] += 1
        if isinstance(item, BaseException):
            raise item
        return item

    return chat_for(hyde=hyde)


def test_mean_vector_is_normalised() -> None:
    v = mean_vector(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    assert np.allclose(v, [2**-0.5, 2**-0.5]) and v.dtype == np.float32
    with pytest.raises(GenerationError):
        mean_vector(np.array([[1.0, 0.0], [-1.0, 0.0]], dtype=np.float32))


def test_dense_gets_hypothesis_mean_bm25_gets_raw_query(store: SpyStore) -> None:
    spy = BatchSpy()
    chat = cycling(list(HYPOTHESES))
    results, trace = run(store, spy, chat, HYDE, "how long is parental leave")
    calls = calls_of(chat, "hyde")
    assert len(calls) == 3 and all(c.kwargs["temperature"] == 0.8 for c in calls)
    assert "Question: how long is parental leave" in calls[0].last_user
    assert len(spy.batches) == 1 and sorted(spy.batches[0]) == sorted(HYPOTHESES)  # one batch
    assert spy.queries == []  # the raw query is never embedded: no query-embedding (cache) path
    expected = mean_vector(HashingEmbedder().embed_documents(HYPOTHESES))
    assert len(store.dense_vectors) == 1 and np.allclose(store.dense_vectors[0], expected)
    assert store.keyword_queries() == ["how long is parental leave"]  # BM25: the user's own words
    assert trace.transforms == ["hyde"] and trace.hypotheses == 3 and results


def test_survivors_are_averaged_when_some_fail(store: SpyStore, caplog: pytest.LogCaptureFixture) -> None:
    spy = BatchSpy()
    chat = cycling([HYPOTHESES[0], GenerationError("boom"), HYPOTHESES[1]])
    with caplog.at_level(logging.INFO, logger="ragwright"):
        _, trace = run(store, spy, chat, HYDE, "how long is parental leave")
    assert "hyde_partial: 2 of 3" in caplog.text and trace.hypotheses == 2 and trace.fallbacks == []
    expected = mean_vector(HashingEmbedder().embed_documents(HYPOTHESES[:2]))
    assert np.allclose(store.dense_vectors[0], expected)


@pytest.mark.parametrize("failure", [GenerationError("down"), RuntimeError("socket"), "   "])
def test_all_failing_falls_back_to_the_raw_query(
    store: SpyStore, caplog: pytest.LogCaptureFixture, failure: object
) -> None:
    spy = BatchSpy()
    plain, _ = run(store, spy, None, HYDE, "how long is parental leave")
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        results, trace = run(store, spy, cycling([failure]), HYDE, "how long is parental leave")  # type: ignore[list-item]
    assert "hyde_failed" in caplog.text and trace.fallbacks == ["hyde_failed"] and trace.transforms == []
    assert spy.queries[-1] == "how long is parental leave"
    assert np.allclose(store.dense_vectors[-1], HashingEmbedder().embed_query("how long is parental leave"))
    assert [r.chunk_id for r in results] == [r.chunk_id for r in plain]


def test_failed_embedding_batch_falls_back(store: SpyStore) -> None:
    class Broken(BatchSpy):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError("embedder down")

    _, trace = run(store, Broken(), cycling(list(HYPOTHESES)), HYDE, "parental leave")
    assert trace.fallbacks == ["hyde_failed"]


def test_at_most_max_parallel_generations(store: SpyStore, embedder: HashingEmbedder) -> None:
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def slow(_: list[Message]) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1
        return "a passage about leave"

    transforms = TransformOptions(hyde=HydeOptions(hypothesis_count=6, max_parallel=2))
    chat = ScriptedChat(router(hyde=slow, multi_query="leave weeks\nleave duration\nparental leave length"))
    run(store, embedder, chat, transforms, "parental leave")
    assert len(calls_of(chat, "hyde")) == 6 and state["peak"] <= 2


def test_with_multi_query_cost_multiplies(store: SpyStore, embedder: HashingEmbedder) -> None:
    """(variant_count + 1) × hypothesis_count generations: 12 with the defaults (seed 000)."""
    chat = ScriptedChat(router(hyde="Sixteen weeks of leave.", multi_query="leave weeks\nleave duration\nleave length"))
    transforms = TransformOptions(multi_query=MultiQueryOptions(), hyde=HydeOptions())
    _, trace = run(store, embedder, chat, transforms, "parental leave")
    assert len(calls_of(chat, "hyde")) == 12 and len(calls_of(chat, "multi_query")) == 1
    assert trace.transforms == ["multi_query", "hyde"] and len(store.dense_vectors) == 4
    assert store.keyword_queries() == ["parental leave", "leave weeks", "leave duration", "leave length"]


def test_hyde_switch_and_keyword_only_calls(store: SpyStore, embedder: HashingEmbedder) -> None:
    chat = cycling(list(HYPOTHESES))
    run(store, embedder, chat, HYDE, "leave", RetrievalOptions(use_hybrid_search=True, use_hyde=False))
    run(store, embedder, chat, HYDE, "leave", RetrievalOptions(use_dense_search=False, use_keyword_search=True))
    assert chat.calls == []  # switched off, or no dense arm to feed
