from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.cache import AnswerCache, TieredCache, answer_cacheable
from ragwright.cache.codec import AnswerCodec
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.records import DocumentRecord, DocumentStatus
from ragwright.model.results import Citation, RagResponse, SearchResult
from ragwright.options import RagOptions
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore

SOURCE = SearchResult(Chunk(id="c1", document_id="d1", text="Refunds take 14 days.", position=0), 0.9)
GOOD = RagResponse("Refunds take 14 days [Source 1].", (SOURCE,), (Citation(1, "c1", "d1"),))


def ask(cache: AnswerCache, response: RagResponse, question: str = "How long do refunds take?", **kw: Any) -> int:
    calls = 0

    async def compute() -> RagResponse:
        nonlocal calls
        calls += 1
        return response

    async def twice() -> None:
        for _ in range(2):
            assert await cache.get_or_create(question, RagOptions(**kw), Identity(), compute) == response

    asyncio.run(twice())
    return calls


def make(version: list[int]) -> AnswerCache:
    return AnswerCache(TieredCache(), index_version=lambda: version[0], models={"llm": "test"})


def test_verified_answers_are_cached_per_caller_and_version() -> None:
    version = [1]
    cache = make(version)
    assert ask(cache, GOOD) == 1
    assert ask(cache, GOOD, top_k=3) == 1  # other options: another entry, then a hit
    version[0] = 2
    assert ask(cache, GOOD) == 1


@pytest.mark.parametrize(
    "response",
    [
        dataclasses.replace(GOOD, declined=True),
        dataclasses.replace(GOOD, verified=False),
        dataclasses.replace(GOOD, invalid_citations=(3,)),
        dataclasses.replace(GOOD, answer=" "),
    ],
)
def test_unverified_answers_are_never_cached(response: RagResponse) -> None:
    assert not answer_cacheable(response)
    assert ask(make([1]), response) == 2


def test_time_sensitive_questions_are_answered_fresh() -> None:
    assert ask(make([1]), GOOD, question="What is the latest refund policy?") == 2


def test_answer_codec_round_trip() -> None:
    full = dataclasses.replace(GOOD, verified=True, usage={"prompt_tokens": 3}, invalid_citations=())
    assert AnswerCodec().decode(AnswerCodec().encode(full)) == full


def record(doc: str) -> DocumentRecord:
    return DocumentRecord(doc, f"memory:{doc}", "h", DocumentStatus.INDEXED, chunk_count=1)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_index_version_bumps_on_every_change(kind: str, tmp_path: Path) -> None:
    store: Any = MemoryStore() if kind == "memory" else SqliteStore(tmp_path / "s.db")
    seen = [store.index_version()]
    chunk = Chunk.create("d1", "text", 0)
    store.replace_document(record("d1"), [chunk], np.ones((1, 4), dtype=np.float32))
    seen.append(store.index_version())
    store.update_access("d1", "default", ("hr",))
    seen.append(store.index_version())
    store.remove_document("d1")
    seen.append(store.index_version())
    store.record(record("d2"))  # registry only: search results cannot change
    seen.append(store.index_version())
    assert seen[0] < seen[1] < seen[2] < seen[3] == seen[4]
    if kind == "sqlite":  # another connection (another process) sees the bump
        other = SqliteStore(tmp_path / "s.db")
        assert other.index_version() == seen[-1]
        other.replace_document(record("d3"), [Chunk.create("d3", "x", 0)], np.ones((1, 4), dtype=np.float32))
        assert store.index_version() == seen[-1] + 1
        other.close()
    store.close()


def test_a_new_store_never_reuses_old_versions(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path / "a.db")
    for i in range(3):
        first.replace_document(record(f"d{i}"), [Chunk.create(f"d{i}", "x", 0)], np.ones((1, 4), dtype=np.float32))
    last = first.index_version()
    first.close()
    (tmp_path / "a.db").unlink()
    again = SqliteStore(tmp_path / "a.db")
    assert again.index_version() > last
    again.close()
