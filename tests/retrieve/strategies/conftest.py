from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.model.results import SearchResult
from ragwright.options import RetrievalOptions
from ragwright.rag import Rag
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def result(cid: str, score: float = 1.0, text: str = "", **metadata: Any) -> SearchResult:
    return SearchResult(Chunk(id=cid, document_id=f"doc-{cid}", text=text or cid, position=0, metadata=metadata), score)


class FakeRetriever:
    """Pages by query; records every call; raises for queries in *fail*."""

    def __init__(
        self,
        pages: dict[str, list[SearchResult]] | Callable[[str, RetrievalOptions], list[SearchResult]] | None = None,
        fail: set[str] | None = None,
    ) -> None:
        self.pages = pages or {}
        self.fail = fail or set()
        self.calls: list[tuple[str, RetrievalOptions, Identity]] = []

    async def retrieve(self, query: str, options: RetrievalOptions, identity: Identity) -> list[SearchResult]:
        self.calls.append((query, options, identity))
        if query in self.fail:
            raise RuntimeError(f"boom: {query}")
        if callable(self.pages):
            return self.pages(query, options)
        return list(self.pages.get(query, []))


@pytest.fixture(params=["memory", "sqlite"])
def make_rag(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Rag]:
    def make() -> Rag:
        store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "store.db")
        return Rag(store, HashingEmbedder(), retrieval_options=RetrievalOptions())

    return make
