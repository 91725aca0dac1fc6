"""One cache API over an in-process L1 and an optional distributed L2, with stampede protection.

``get_or_create`` looks in L1, then L2 (promoting a hit into L1), and otherwise computes the value
once per key however many callers ask at the same moment (single-flight: the others wait for the
first caller's result — across threads and event loops). A value is stored only when it was computed
without error *and* the caller's ``cacheable`` predicate accepts it: failures, degraded results and
unverified answers are never cached. An L2 failure is logged (``cache_l2_failed``) and ignored.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from ragwright._sync import to_thread
from ragwright.cache.memory import MISS, MemoryCache

log = logging.getLogger(__name__)

T = TypeVar("T")
Source = Literal["l1", "l2", "miss", "shared", "bypass"]


class Backend(Protocol):
    """A distributed layer: bytes under string keys with a time to live (see :class:`RedisCache`)."""

    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, data: bytes, ttl_s: float) -> None: ...


class Codec(Protocol, Generic[T]):
    """Turns a cached value into bytes for L2 and back."""

    def encode(self, value: T) -> bytes: ...

    def decode(self, data: bytes) -> T: ...


@dataclass
class CacheStats:
    """Counters per outcome (``shared``: a caller that waited for another's computation)."""

    l1: int = 0
    l2: int = 0
    miss: int = 0
    shared: int = 0
    stored: int = 0
    not_cacheable: int = 0
    l2_errors: int = 0


def _always(_: Any) -> bool:
    return True


class TieredCache:
    """L1 (:class:`MemoryCache`) + optional L2 (*l2*, e.g. :class:`~ragwright.cache.redis.RedisCache`)."""

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        l2: Backend | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.l1 = MemoryCache(max_entries, clock=clock)
        self.l2 = l2
        self.stats = CacheStats()
        self._inflight: dict[str, Future[Any]] = {}
        self._lock = threading.Lock()

    # -- plain lookups -----------------------------------------------------------------------------
    def lookup(self, key: str, codec: Codec[Any] | None = None) -> tuple[Any, Source]:
        """The cached value and where it came from (``MISS``/``"miss"`` when absent). Blocking."""
        value = self.l1.get(key)
        if value is not MISS:
            return value, "l1"
        if self.l2 is None or codec is None:
            return MISS, "miss"
        try:
            data = self.l2.get(key)
            if data is None:
                return MISS, "miss"
            return codec.decode(data), "l2"
        except Exception as exc:
            self.stats.l2_errors += 1
            log.warning("cache_l2_failed: get %s: %s", key[:80], exc)
            return MISS, "miss"

    def store(self, key: str, value: Any, ttl_s: float, codec: Codec[Any] | None = None) -> None:
        """Put *value* in L1 and (with a codec) L2. Blocking."""
        self.l1.set(key, value, ttl_s)
        self.stats.stored += 1
        if self.l2 is not None and codec is not None:
            try:
                self.l2.set(key, codec.encode(value), ttl_s)
            except Exception as exc:
                self.stats.l2_errors += 1
                log.warning("cache_l2_failed: set %s: %s", key[:80], exc)

    def _found(self, key: str, value: Any, source: Source, ttl_s: float) -> tuple[Any, Source]:
        if source == "l2":
            self.l1.set(key, value, ttl_s)  # promote
            self.stats.l2 += 1
        else:
            self.stats.l1 += 1
        return value, source

    # -- single-flight -----------------------------------------------------------------------------
    def _claim(self, key: str) -> tuple[Future[Any], bool]:
        with self._lock:
            pending = self._inflight.get(key)
            if pending is not None:
                return pending, False
            future: Future[Any] = Future()
            self._inflight[key] = future
            return future, True

    def _release(self, key: str, future: Future[Any]) -> None:
        with self._lock:
            if self._inflight.get(key) is future:
                del self._inflight[key]

    def _settle(
        self,
        key: str,
        future: Future[Any],
        value: Any,
        ttl_s: float,
        codec: Codec[Any] | None,
        cacheable: Callable[[Any], bool],
    ) -> None:
        if cacheable(value):
            self.store(key, value, ttl_s, codec)
        else:
            self.stats.not_cacheable += 1
        future.set_result(value)

    async def get_or_create(
        self,
        key: str,
        factory: Callable[[], Awaitable[T]],
        *,
        ttl_s: float,
        codec: Codec[T] | None = None,
        cacheable: Callable[[T], bool] = _always,
    ) -> tuple[T, Source]:
        """The cached value, or *factory*'s (computed once per key at a time, stored when cacheable)."""
        value, source = self.l1.get(key), "l1"
        if value is MISS and self.l2 is not None:
            value, source = await to_thread(self.lookup, key, codec)
        if value is not MISS:
            return self._found(key, value, source, ttl_s)  # type: ignore[arg-type]
        future, leader = self._claim(key)
        if not leader:
            self.stats.shared += 1
            return await asyncio.wrap_future(future), "shared"
        try:
            value = self.l1.get(key)  # a leader may have finished between our lookup and our claim
            if value is not MISS:
                future.set_result(value)
                return value, "l1"
            self.stats.miss += 1
            value = await factory()
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            if self.l2 is not None and codec is not None:
                await to_thread(self._settle, key, future, value, ttl_s, codec, cacheable)
            else:
                self._settle(key, future, value, ttl_s, codec, cacheable)
            return value, "miss"
        finally:
            self._release(key, future)

    def get_or_create_sync(
        self,
        key: str,
        factory: Callable[[], T],
        *,
        ttl_s: float,
        codec: Codec[T] | None = None,
        cacheable: Callable[[T], bool] = _always,
    ) -> tuple[T, Source]:
        """The blocking twin of :meth:`get_or_create` (for embedders and rerankers, which are sync)."""
        value, source = self.lookup(key, codec)
        if value is not MISS:
            return self._found(key, value, source, ttl_s)
        future, leader = self._claim(key)
        if not leader:
            self.stats.shared += 1
            return future.result(), "shared"
        try:
            value = self.l1.get(key)
            if value is not MISS:
                future.set_result(value)
                return value, "l1"
            self.stats.miss += 1
            value = factory()
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            self._settle(key, future, value, ttl_s, codec, cacheable)
            return value, "miss"
        finally:
            self._release(key, future)

    def clear(self) -> None:
        """Empty L1 (L2 entries become unreachable through key versions; see :meth:`RedisCache.clear`)."""
        self.l1.clear()
