"""The optional distributed cache layer (L2) on Redis (``pip install 'ragwright[redis]'``).

Entries are bytes with a time to live (``PX``). A Redis failure never breaks retrieval: the tiered
cache logs ``cache_l2_failed`` and carries on as if the entry were absent.
"""

from __future__ import annotations

from typing import Any

from ragwright._deps import require


class RedisCache:
    """Bytes under string keys in a Redis server; *url* like ``redis://127.0.0.1:6379/0``."""

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, client: Any = None, timeout_s: float = 1.0) -> None:
        if client is None:
            redis = require("redis", "redis", "the Redis cache layer")
            client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        self._client = client

    def get(self, key: str) -> bytes | None:
        value = self._client.get(key)
        return None if value is None else bytes(value)

    def set(self, key: str, data: bytes, ttl_s: float) -> None:
        self._client.set(key, data, px=max(1, int(ttl_s * 1000)))

    def delete(self, key: str) -> None:
        self._client.delete(key)

    def clear(self, prefix: str) -> int:
        """Delete every key starting with *prefix* (a namespace); returns how many went."""
        removed = 0
        for key in self._client.scan_iter(match=prefix + "*", count=500):
            removed += int(self._client.delete(key))
        return removed

    def close(self) -> None:
        self._client.close()
