from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ragwright.cache import MISS, MemoryCache, TieredCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_ttl_expiry_with_an_injected_clock() -> None:
    clock = Clock()
    cache = MemoryCache(clock=clock)
    cache.set("k", "v", ttl_s=300)
    clock.now += 299.9
    assert cache.get("k") == "v"
    clock.now += 0.1
    assert cache.get("k") is MISS and len(cache) == 0


def test_lru_eviction() -> None:
    cache = MemoryCache(max_entries=2)
    cache.set("a", 1, 60)
    cache.set("b", 2, 60)
    assert cache.get("a") == 1  # a is now the most recent
    cache.set("c", 3, 60)
    assert cache.get("b") is MISS and cache.get("a") == 1 and cache.get("c") == 3


def test_get_or_create_caches_and_reports_the_source() -> None:
    cache = TieredCache()
    calls = []

    async def factory() -> str:
        calls.append(1)
        return "value"

    async def main() -> list[tuple[str, str]]:
        return [await cache.get_or_create("k", factory, ttl_s=60) for _ in range(3)]

    assert asyncio.run(main()) == [("value", "miss"), ("value", "l1"), ("value", "l1")]
    assert len(calls) == 1 and cache.stats.l1 == 2 and cache.stats.miss == 1


def test_failure_is_not_cached() -> None:
    cache = TieredCache()
    outcomes = iter([RuntimeError("down"), "ok"])

    async def factory() -> str:
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    async def main() -> tuple[str, str]:
        with pytest.raises(RuntimeError):
            await cache.get_or_create("k", factory, ttl_s=60)
        return await cache.get_or_create("k", factory, ttl_s=60)

    assert asyncio.run(main()) == ("ok", "miss")


def test_uncacheable_value_is_returned_not_stored() -> None:
    cache = TieredCache()

    async def factory() -> list[int]:
        return []

    async def main() -> list[tuple[list[int], str]]:
        return [await cache.get_or_create("k", factory, ttl_s=60, cacheable=bool) for _ in range(2)]

    assert asyncio.run(main()) == [([], "miss"), ([], "miss")] and cache.stats.not_cacheable == 2


def test_single_flight_async() -> None:
    cache = TieredCache()
    started = 0

    async def factory() -> str:
        nonlocal started
        started += 1
        await asyncio.sleep(0.05)  # let the other callers arrive while this one computes
        return "v"

    async def main() -> list[tuple[str, str]]:
        return await asyncio.gather(*(cache.get_or_create("k", factory, ttl_s=60) for _ in range(10)))

    results = asyncio.run(main())
    assert started == 1
    assert sorted(s for _, s in results) == ["miss"] + ["shared"] * 9


def test_single_flight_shares_a_failure_but_does_not_cache_it() -> None:
    cache = TieredCache()
    gate = asyncio.Event

    async def main() -> list[object]:
        release = gate()
        calls = 0

        async def factory() -> str:
            nonlocal calls
            calls += 1
            await release.wait()
            raise RuntimeError("down")

        tasks = [asyncio.ensure_future(cache.get_or_create("k", factory, ttl_s=60)) for _ in range(3)]
        await asyncio.sleep(0.01)
        release.set()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert calls == 1
        return list(outcomes)

    assert all(isinstance(o, RuntimeError) for o in asyncio.run(main()))
    assert cache.l1.get("k") is MISS


def test_single_flight_across_threads() -> None:
    cache = TieredCache()
    barrier = threading.Barrier(6)
    calls = []

    def factory() -> int:
        calls.append(1)
        time.sleep(0.05)
        return 42

    results: list[tuple[int, str]] = []

    def worker() -> None:
        barrier.wait()
        results.append(cache.get_or_create_sync("k", factory, ttl_s=60))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(v == 42 for v, _ in results) and len(results) == 6
