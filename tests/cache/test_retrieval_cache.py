from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright._sync import to_thread
from ragwright.cache import CachedEmbedder, CachedReranker, CachedRetriever, CacheScope, TieredCache
from ragwright.cache.codec import ResultsCodec
from ragwright.model.extensions import RetrievalResults
from ragwright.model.identity import Identity
from ragwright.model.outcome import RetrievalOutcome
from ragwright.model.specs import MinScoreSpec, PredicateSpec
from ragwright.options import CacheOptions, RetrievalOptions
from ragwright.rag import Rag
from ragwright.retrieve import Retriever
from ragwright.retrieve.request import RetrievalRequest
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

HR = Identity(groups=("hr",))
STAFF = Identity(groups=("staff",))
QUERY = "salary bands review"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Setup:
    def __init__(self, store: Any) -> None:
        self.clock = Clock()
        self.cache = TieredCache(clock=self.clock)
        self.embedder = CachedEmbedder(HashingEmbedder(), self.cache)
        self.rag = Rag(store, self.embedder, retrieval_options=RetrievalOptions())
        self.rag.ingest(BytesSource({"bands.txt": b"Salary bands review for 2025, confidential."}), acl=["hr"])
        self.rag.ingest(BytesSource({"policy.txt": b"The review of travel policy for all staff."}))
        self.inner = CountingRetriever(self.rag.retriever)
        self.cached = CachedRetriever(
            self.inner, self.cache, index_version=store.index_version, models={"embedder": self.embedder.name}
        )

    def search(self, identity: Identity, query: str = QUERY, **options: Any) -> RetrievalResults:
        out = asyncio.run(self.cached.retrieve(query, RetrievalOptions(**options), identity))
        assert isinstance(out, RetrievalResults)
        return out


class CountingRetriever:
    def __init__(self, inner: Any) -> None:
        self.inner, self.calls, self.fail, self.degrade = inner, 0, False, False

    async def run(self, request: RetrievalRequest) -> RetrievalOutcome:
        self.calls += 1
        if self.fail:
            raise RuntimeError("store down")
        outcome: RetrievalOutcome = await self.inner.run(request)
        return outcome.degrade("x") if self.degrade else outcome


@pytest.fixture(params=["memory", "sqlite"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Setup]:
    store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "s.db")
    yield Setup(store)
    store.close()


def docs(results: list[Any]) -> set[str]:
    return {r.document_id for r in results}


def test_a_user_without_access_never_gets_anothers_cached_result(env: Setup) -> None:
    first = env.search(HR)
    assert "bands.txt" in docs(first) and first.extensions["cache"] == "miss"
    assert env.search(HR).extensions["cache"] == "l1"
    other = env.search(STAFF)
    assert other.extensions["cache"] == "miss" and "bands.txt" not in docs(other)
    assert env.search(Identity(tenant="acme", groups=("hr",))) == []
    # same visibility (tenant + groups) shares the entry, whoever the user is
    assert env.search(Identity(groups=("hr",), user="someone-else")).extensions["cache"] == "l1"


def test_an_ingest_invalidates(env: Setup) -> None:
    env.search(STAFF)
    assert env.search(STAFF).extensions["cache"] == "l1"
    before = env.rag.store.index_version()
    env.rag.ingest(BytesSource({"new.txt": b"Salary bands review published for staff."}))
    assert env.rag.store.index_version() > before
    fresh = env.search(STAFF)
    assert fresh.extensions["cache"] == "miss" and "new.txt" in docs(fresh)


def test_acl_change_and_deletion_invalidate(env: Setup) -> None:
    assert "bands.txt" in docs(env.search(HR))
    env.rag.update_acl("bands.txt", groups=["board"])
    after = env.search(HR)
    assert after.extensions["cache"] == "miss" and "bands.txt" not in docs(after)
    env.search(STAFF)
    env.rag.remove("policy.txt")
    assert "policy.txt" not in docs(env.search(STAFF))


def test_failures_and_degraded_results_are_not_cached(env: Setup) -> None:
    env.inner.fail = True
    with pytest.raises(RuntimeError):
        env.search(HR)
    env.inner.fail, env.inner.degrade = False, True
    assert env.search(HR).extensions["cache"] == "miss"
    assert env.search(HR).extensions["cache"] == "miss"
    env.inner.degrade = False
    env.search(HR)
    assert env.search(HR).extensions["cache"] == "l1" and env.inner.calls == 4


def test_ttl_expiry(env: Setup) -> None:
    env.search(HR)
    env.clock.now += 299
    assert env.search(HR).extensions["cache"] == "l1"
    env.clock.now += 2
    assert env.search(HR).extensions["cache"] == "miss"


def test_keys_cover_query_options_and_filters(env: Setup) -> None:
    env.search(HR)
    assert env.search(HR, query="  Salary   BANDS review ").extensions["cache"] == "l1"  # normalised
    assert env.search(HR, top_k=2).extensions["cache"] == "miss"
    assert env.search(HR, metadata_filter={"title": "x"}).extensions["cache"] == "miss"
    assert env.search(HR, filter=MinScoreSpec(0.1)).extensions["cache"] == "miss"
    assert env.search(HR, filter=MinScoreSpec(0.1)).extensions["cache"] == "l1"
    # code cannot be keyed: never cached
    spec = PredicateSpec(lambda r: True)
    assert env.search(HR, filter=spec).extensions["cache"] == "bypass"
    assert env.search(HR, use_cache_result=False).extensions["cache"] == "bypass"
    assert env.search(HR, use_cache_embedding=False).extensions["cache"] == "l1"  # same key


def test_embedding_cache_and_its_bypass(env: Setup) -> None:
    inner: HashingEmbedder = env.embedder.inner  # type: ignore[assignment]
    env.embedder.embed_query("hello world")
    hits = env.cache.stats.l1
    env.embedder.embed_query("hello world")
    assert env.cache.stats.l1 == hits + 1
    calls = inner.calls
    env.embedder.embed_documents(["hello world", "a new passage"])
    env.embedder.embed_documents(["a new passage"])
    assert inner.calls == calls + 1  # the second batch came from the cache

    async def in_thread() -> int:
        before = inner.calls
        fresh = env.embedder.scoped(None, fresh=True)  # what a request with fresh_embeddings binds
        await to_thread(fresh.embed_documents, ["a new passage"])
        return inner.calls - before

    assert asyncio.run(in_thread()) == 1
    assert env.embedder.fresh is False  # binding copies: the shared embedder is untouched


def test_query_vectors_are_keyed_by_the_scope_on_the_request(env: Setup) -> None:
    """The scope rides on the request and binds a copy; no module-level state carries it."""
    queries: list[str] = []
    original = env.embedder.inner.embed_query

    def spy(text: str) -> Any:
        queries.append(text)
        return original(text)

    env.embedder.inner.embed_query = spy  # type: ignore[method-assign]
    hr = env.embedder.scoped(CacheScope(None, HR))
    staff = env.embedder.scoped(CacheScope(None, STAFF))
    hr.embed_query("who earns what")
    hr.embed_query("who earns what")
    assert len(queries) == 1  # the same caller hits
    staff.embed_query("who earns what")
    assert len(queries) == 2  # another caller never learns what HR asked (a timing channel)


def test_a_retriever_with_only_the_older_retrieve_is_adapted(env: Setup) -> None:
    class Legacy:
        def __init__(self) -> None:
            self.seen: list[tuple[str, RetrievalOptions, Identity]] = []

        async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> Any:
            self.seen.append((query, options, identity))
            return RetrievalResults(await env.rag.retriever.retrieve(query, options, identity), {"degraded": ["x"]})

    legacy = Legacy()
    cached = CachedRetriever(legacy, env.cache, index_version=env.rag.store.index_version, models={})
    first = asyncio.run(cached.retrieve(QUERY, RetrievalOptions(), HR))
    assert "bands.txt" in docs(first) and legacy.seen[0][2] == HR
    assert first.outcome.degraded == ("x",) and first.outcome.cache == "miss"
    asyncio.run(cached.retrieve(QUERY, RetrievalOptions(), HR))
    assert len(legacy.seen) == 2  # degraded: never stored


def test_use_cache_embedding_false_and_hyde_mode_embed_afresh(env: Setup) -> None:
    queries: list[str] = []
    original = env.embedder.inner.embed_query

    def spy(text: str) -> Any:
        queries.append(text)
        return original(text)

    env.embedder.inner.embed_query = spy  # type: ignore[method-assign]
    env.search(HR, use_cache_result=False)
    env.search(HR, use_cache_result=False)
    assert len(queries) == 1
    env.search(HR, use_cache_result=False, use_cache_embedding=False)
    assert len(queries) == 2
    hyde = CachedRetriever(
        env.inner, env.cache, index_version=env.rag.store.index_version, models={}, hyde_active=lambda o: o.use_hyde
    )
    asyncio.run(hyde.retrieve(QUERY, RetrievalOptions(use_cache_result=False), HR))
    assert len(queries) == 3
    asyncio.run(hyde.retrieve(QUERY, RetrievalOptions(use_cache_result=False, use_hyde=False), HR))
    assert len(queries) == 3


class CountingReranker:
    name = "test/overlap"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, query: str, passages: Any) -> list[float]:
        self.calls += 1
        return [float(len(set(query.split()) & set(p.split()))) for p in passages]


def test_rerank_cache_is_scoped_to_the_caller(env: Setup) -> None:
    reranker = CountingReranker()
    cached = CachedReranker(reranker, env.cache)
    retriever = CachedRetriever(
        Retriever(env.rag.store, env.embedder, cached), env.cache, index_version=env.rag.store.index_version, models={}
    )

    def run(identity: Identity) -> None:
        asyncio.run(retriever.retrieve(QUERY, RetrievalOptions(use_cache_result=False), identity))

    run(STAFF)
    run(STAFF)
    assert reranker.calls == 1
    run(Identity(groups=("staff",), tenant="other"))
    assert reranker.calls == 1  # no candidates: nothing to rerank
    run(HR)
    assert reranker.calls == 2


def test_results_codec_round_trip(env: Setup) -> None:
    results = env.search(HR)
    decoded = ResultsCodec().decode(ResultsCodec().encode(results))
    assert list(decoded.results) == list(results) and decoded.extensions() == results.extensions
    assert decoded == results.outcome  # the typed decisions survive the trip


def test_cache_options_namespace_changes_keys(env: Setup) -> None:
    env.search(HR)
    other = CachedRetriever(
        env.inner,
        env.cache,
        index_version=env.rag.store.index_version,
        models={"embedder": env.embedder.name},
        options=CacheOptions(prompt_version="2"),
    )
    out = asyncio.run(other.retrieve(QUERY, RetrievalOptions(), HR))
    assert out.extensions["cache"] == "miss"  # type: ignore[attr-defined]
