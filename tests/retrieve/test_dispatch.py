"""Native vs client-side hybrid search (seed 000's table), against a fake store with native fusion."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ragwright.errors import RetrievalError
from ragwright.model.filters import Filter
from ragwright.model.identity import Identity
from ragwright.options import EnsembleOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.retrieve.dispatch import blocking_settings, choose_path
from ragwright.sources import BytesSource
from ragwright.stores.base import Hit, HybridSearch, ScoreScale
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder
from tests.retrieve.test_sparse_arm import WordEncoder


class NativeStore(MemoryStore):
    """A memory store that claims server-side hybrid fusion (its scores: an opaque 1/rank)."""

    def __init__(self, native_only: bool = False) -> None:
        super().__init__()
        self.native_only, self.hybrid_calls = native_only, 0

    @property
    def hybrid_native_only(self) -> bool:
        return self.native_only

    @property
    def hybrid_score_scale(self) -> ScoreScale:
        return ScoreScale.OPAQUE_RANKING

    def search_hybrid(
        self, query: str, vector: Any, k: int, *, identity: Identity, metadata_filter: Filter | None = None
    ) -> list[Hit]:
        self.hybrid_calls += 1
        hits = self.search_dense(vector, k, identity=identity, metadata_filter=metadata_filter)
        return [Hit(h.chunk, 1.0 / rank) for rank, h in enumerate(hits, start=1)]


class HidingDecorator:
    """Forwards dense and keyword search only: the native capability is hidden."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in ("search_hybrid", "hybrid_native_only", "hybrid_score_scale"):
            raise AttributeError(name)
        return getattr(self.inner, name)


DOCS = {"a": b"# A\nRefunds within thirty days.", "b": b"# B\nShipping takes a week."}


def rag_over(store: Any, **kw: Any) -> Rag:
    rag = Rag(store, HashingEmbedder(), **kw)
    rag.ingest(BytesSource(DOCS, names={k: f"{k}.md" for k in DOCS}))
    return rag


def test_native_when_nothing_would_be_lost(caplog: pytest.LogCaptureFixture) -> None:
    store = NativeStore()
    rag = rag_over(store)
    with caplog.at_level(logging.DEBUG, logger="ragwright"):
        results = rag.search("refunds", top_k=2)  # Rag defaults to hybrid
    assert store.hybrid_calls == 1 and results and all(r.fusion == "native" for r in results)
    assert "retrieval_path: native" in caplog.text and "ensemble_native_hybrid" in caplog.text
    assert "hybrid_path: native" in caplog.text


@pytest.mark.parametrize(
    "overrides",
    [{"ensemble": EnsembleOptions()}, {"min_score": 0.01}, {"use_keyword_search": False}],
    ids=["ensemble-even-default", "min-score", "one-arm"],
)
def test_client_side_when_the_call_asks_for_more(overrides: dict[str, Any]) -> None:
    store = NativeStore()
    rag = rag_over(store)
    results = rag.search("refunds", top_k=2, **overrides)
    assert store.hybrid_calls == 0 and all(r.fusion != "native" for r in results)


def test_a_sparse_arm_keeps_the_client_path() -> None:
    store = NativeStore()
    rag = rag_over(store, sparse_encoder=WordEncoder())
    results = rag.search("refunds", top_k=2)
    assert store.hybrid_calls == 0 and any("sparse" in r.arms for r in results)
    rag.search("refunds", top_k=2, use_sparse_search=False)  # nothing lost now
    assert store.hybrid_calls == 1


def test_store_without_native_hybrid_is_client_side() -> None:
    path = choose_path(MemoryStore(), RetrievalOptions(use_hybrid_search=True), sparse_active=False)
    assert path.path == "client" and "no native hybrid" in path.reason


@pytest.mark.parametrize(
    ("options", "sparse", "blocker"),
    [
        (RetrievalOptions(), False, "use_hybrid_search"),
        (RetrievalOptions(use_hybrid_search=True, ensemble=EnsembleOptions()), False, "ensemble"),
        (RetrievalOptions(use_hybrid_search=True, min_score=0.2), False, "min_score"),
        (RetrievalOptions(use_hybrid_search=True), True, "sparse arm"),
    ],
)
def test_native_only_store_refuses_naming_the_setting(options: RetrievalOptions, sparse: bool, blocker: str) -> None:
    with pytest.raises(RetrievalError, match=blocker):
        choose_path(NativeStore(native_only=True), options, sparse_active=sparse)
    path = choose_path(NativeStore(), options, sparse_active=sparse)  # not native-only: client-side, same reason
    assert path.path == "client" and blocker in path.reason


def test_native_only_store_serves_a_plain_hybrid_call() -> None:
    store = NativeStore(native_only=True)
    rag = rag_over(store)
    assert all(r.fusion == "native" for r in rag.search("refunds", top_k=2))
    with pytest.raises(RetrievalError, match="use_hybrid_search"):
        rag.search("refunds", top_k=2, use_hybrid_search=False)


def test_decorator_hiding_the_capability_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    hidden = HidingDecorator(NativeStore())
    assert isinstance(hidden.inner, HybridSearch) and not isinstance(hidden, HybridSearch)
    with caplog.at_level(logging.WARNING, logger="ragwright.retrieve.dispatch"):
        path = choose_path(hidden, RetrievalOptions(use_hybrid_search=True), sparse_active=False)
    assert path.path == "client" and "native_hybrid_hidden_by_decorator" in caplog.text


def test_blocking_settings_lists_every_blocker() -> None:
    options = RetrievalOptions(use_hybrid_search=True, min_score=0.5, ensemble=EnsembleOptions())
    blocked = blocking_settings(options, sparse_active=True, transforms_active=True)
    assert [b.split()[0] for b in blocked] == ["a", "ensemble", "min_score=0.5", "query"]
