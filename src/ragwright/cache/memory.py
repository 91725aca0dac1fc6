"""The in-process cache layer (L1): least-recently-used entries with a time to live each.

Values are kept as Python objects (no serialisation). The clock is injectable, so expiry is tested
without sleeping. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final


class _Missing:
    def __repr__(self) -> str:
        return "MISS"


#: Returned by :meth:`MemoryCache.get` for an absent or expired key (``None`` is a valid value).
MISS: Final = _Missing()


class MemoryCache:
    """LRU + TTL map bounded to *max_entries*; expired entries are dropped when met."""

    def __init__(self, max_entries: int = 10_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_entries, self.clock = max_entries, clock
        self._data: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        """The live value under *key*, or :data:`MISS`."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return MISS
            expires, value = entry
            if self.clock() >= expires:
                del self._data[key]
                return MISS
            self._data.move_to_end(key)
            return value

    def set(self, key: str, value: Any, ttl_s: float) -> None:
        with self._lock:
            self._data[key] = (self.clock() + ttl_s, value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
