"""Every store passes the chunk-lookup conformance suite — and so does a vector-only backend that
supplies nothing but dense search and lookups, which the retrieval pipeline then serves from,
parents included."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.model.chunk import Chunk
from ragwright.model.filters import Filter, matches
from ragwright.model.identity import Identity
from ragwright.options import RetrievalOptions
from ragwright.retrieve import Retriever
from ragwright.stores.base import ChunkLookup, Hit, ScoreScale, VectorSearch
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.conformance import FilterTranslationConformance, VectorSearchConformance
from ragwright.testing.lookup import DIM, ChunkLookupConformance


class TestMemoryLookup(ChunkLookupConformance):
    @pytest.fixture
    def lookup(self) -> Iterator[MemoryStore]:
        store = MemoryStore()
        yield store
        store.close()


class TestSqliteLookup(ChunkLookupConformance):
    @pytest.fixture
    def lookup(self, tmp_path: Path) -> Iterator[SqliteStore]:
        store = SqliteStore(tmp_path / "s.db")
        yield store
        store.close()


class VectorOnly:
    """An example backend with only what a vector database offers: dense search and lookups by id,
    the caller's identity checked inside both (a missing ACL denies)."""

    score_scale = ScoreScale.SIMILARITY

    def __init__(self) -> None:
        self.chunks: dict[str, Chunk] = {}
        self.parents: dict[str, Chunk] = {}
        self.vectors: dict[str, Any] = {}

    def write(self, chunks: Sequence[Chunk], vectors: Any, parents: Sequence[Chunk]) -> None:
        for chunk, vector in zip(chunks, vectors, strict=True):
            self.chunks[chunk.id], self.vectors[chunk.id] = chunk, np.asarray(vector, dtype=np.float32)
        self.parents.update((p.id, p) for p in parents)

    def search_dense(
        self,
        vector: Any,
        k: int,
        *,
        identity: Identity,
        metadata_filter: Filter | None = None,
        min_score: float = 0.0,
    ) -> list[Hit]:
        scored = [
            Hit(c, float(self.vectors[cid] @ vector))
            for cid, c in self.chunks.items()
            if identity.can_see(c.tenant, c.acl) and matches(metadata_filter, c.metadata)
        ]
        return sorted((h for h in scored if h.score >= min_score), key=lambda h: -h.score)[:k]

    def get_chunks(self, chunk_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        found = (self.chunks.get(cid) for cid in chunk_ids)
        return [c for c in found if c is not None and identity.can_see(c.tenant, c.acl)]

    def get_parents(self, parent_ids: Sequence[str], identity: Identity) -> list[Chunk]:
        found = (self.parents.get(pid) for pid in parent_ids)
        return [p for p in found if p is not None and identity.can_see(p.tenant, p.acl)]

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, Any]:
        return {cid: self.vectors[cid] for cid in chunk_ids if cid in self.vectors}


class TestVectorOnlyLookup(ChunkLookupConformance):
    @pytest.fixture
    def lookup(self) -> VectorOnly:
        return VectorOnly()

    def put(
        self, lookup: Any, document_id: str, chunks: Sequence[Chunk], vectors: Any, parents: Sequence[Chunk]
    ) -> None:
        lookup.write(chunks, vectors, parents)


class TestVectorOnlySearch(VectorSearchConformance, FilterTranslationConformance):
    """The vector-only backend passes the dense-search suites through its own write path."""

    @pytest.fixture
    def store(self) -> VectorOnly:
        return VectorOnly()

    def put(self, store: Any, doc_id: str, chunks: list[Chunk], vectors: list[Any]) -> None:
        store.write(chunks, vectors, [])


class Embedder:
    name, dimension, max_tokens = "test/axis", DIM, 64

    def embed_query(self, text: str) -> Any:
        return np.eye(DIM, dtype=np.float32)[int(text[-1]) % DIM]

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return np.stack([self.embed_query(t) for t in texts])

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_the_pipeline_serves_from_a_vector_only_backend_with_parents_under_the_callers_identity() -> None:
    backend = VectorOnly()
    assert isinstance(backend, VectorSearch) and isinstance(backend, ChunkLookup)
    parent = Chunk.create("hr", "the whole salary section", 0, acl=("hr",))
    children = [Chunk.create("hr", f"salary part {i}", i, acl=("hr",), parent_id=parent.id) for i in range(2)]
    backend.write(children, np.eye(DIM, dtype=np.float32)[:2], [parent])
    retriever = Retriever(backend, Embedder())  # type: ignore[arg-type]
    options = RetrievalOptions(top_k=2, use_parent_document=True)
    found = asyncio.run(retriever.retrieve("salary 0", options, Identity(groups=("hr",))))
    narrowed = options.merged(metadata_filter={"team": "payroll"})  # filtered inside the search
    assert asyncio.run(retriever.retrieve("salary 0", narrowed, Identity(groups=("hr",)))) == []
    assert [r.chunk.id for r in found] == [parent.id]  # the children swapped for their parent
    assert asyncio.run(retriever.retrieve("salary 0", options, Identity(groups=("eng",)))) == []
