"""The Redis L2 against a real ``redis-server`` (Debian package; ``.ci/run`` installs it).

Started here on a free loopback port in a temporary folder, stopped afterwards. If it cannot start,
the tests fail — they are never skipped.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.cache import CachedRetriever, TieredCache
from ragwright.cache.redis import RedisCache
from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.testing.doubles import HashingEmbedder

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install -y redis-server; .ci/run does this)")
    port = _free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                RedisCache(url).get("ping")
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _setup(l2: RedisCache, store: Any) -> CachedRetriever:
    embedder = HashingEmbedder()
    rag = Rag(store, embedder, retrieval_options=RetrievalOptions())
    return CachedRetriever(
        rag.retriever, TieredCache(l2=l2), index_version=store.index_version, models={"embedder": embedder.name}
    )


def test_l2_is_shared_across_processes_but_not_across_permissions(redis_url: str) -> None:
    store = MemoryStore()
    rag = Rag(store, HashingEmbedder())
    rag.ingest(BytesSource({"pay.txt": b"Salary bands for 2025."}), acl=["hr"])
    rag.ingest(BytesSource({"all.txt": b"Salary payment dates for everyone."}))
    first, second = _setup(RedisCache(redis_url), store), _setup(RedisCache(redis_url), store)  # two L1s, one L2
    hr, staff = Identity(groups=("hr",)), Identity(groups=("staff",))

    def search(retriever: CachedRetriever, who: Identity) -> Any:
        return asyncio.run(retriever.retrieve("salary bands", RetrievalOptions(), who))

    computed = search(first, hr)
    assert computed.extensions["cache"] == "miss" and "pay.txt" in {r.document_id for r in computed}
    shared = search(second, hr)
    assert shared.extensions["cache"] == "l2" and list(shared) == list(computed)
    assert search(second, hr).extensions["cache"] == "l1"  # promoted into the second L1
    other = search(second, staff)
    assert other.extensions["cache"] == "miss" and "pay.txt" not in {r.document_id for r in other}
    rag.ingest(BytesSource({"new.txt": b"Salary bands revised."}))
    assert search(second, hr).extensions["cache"] == "miss"  # the index version moved on


def test_entries_expire_in_redis_and_namespaces_clear(redis_url: str) -> None:
    l2 = RedisCache(redis_url)
    cache = TieredCache(l2=l2)

    async def factory() -> list[float]:
        return [1.0]

    class Codec:
        def encode(self, value: list[float]) -> bytes:
            return repr(value).encode()

        def decode(self, data: bytes) -> list[float]:
            return [float(x) for x in data.decode().strip("[]").split(",")]

    asyncio.run(cache.get_or_create("rw:test:k", factory, ttl_s=300, codec=Codec()))
    ttl_ms = l2._client.pttl("rw:test:k")
    assert 0 < ttl_ms <= 300_000
    assert l2.clear("rw:test:") == 1 and l2.get("rw:test:k") is None


def test_a_redis_failure_degrades_to_computing(caplog: pytest.LogCaptureFixture) -> None:
    dead = RedisCache("redis://127.0.0.1:1/0", timeout_s=0.2)  # nothing listens on port 1
    store = MemoryStore()
    Rag(store, HashingEmbedder()).ingest(BytesSource({"a.txt": b"alpha beta"}))
    retriever = _setup(dead, store)
    with caplog.at_level(logging.WARNING, logger="ragwright"):
        out = asyncio.run(retriever.retrieve("alpha", RetrievalOptions(), Identity()))
    assert [r.document_id for r in out] == ["a.txt"]
    assert any("cache_l2_failed" in r.message for r in caplog.records)
