"""The sparse arm in the pipeline: it joins hybrid search when an encoder is configured, encodes the
raw query, never lets a filtered chunk through, degrades on failure, and ingestion fills the vectors."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.errors import ConfigError
from ragwright.model.filters import as_filter
from ragwright.model.identity import Identity
from ragwright.models.sparse.base import SparseVector
from ragwright.rag import Rag
from ragwright.sources import BytesSource
from ragwright.stores.memory import MemoryStore
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder

_WORD = re.compile(r"\w+")
_SYNONYMS = {"refund": "money", "money": "refund"}  # a "learned" expansion BM25 cannot make


class WordEncoder:
    """A deterministic sparse encoder: one term per word, plus a synonym at half weight."""

    def __init__(self, name: str = "test/words", fail: bool = False) -> None:
        self._name, self.fail = name, fail
        self.queries: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def vocab_size(self) -> int:
        return 1 << 16

    def _term(self, word: str) -> int:
        return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=2).digest(), "little")

    def _encode(self, text: str) -> SparseVector:
        weights: dict[int, float] = {}
        for word in _WORD.findall(text.lower()):
            weights[self._term(word)] = weights.get(self._term(word), 0.0) + 1.0
            if word in _SYNONYMS:
                weights[self._term(_SYNONYMS[word])] = weights.get(self._term(_SYNONYMS[word]), 0.0) + 0.5
        return SparseVector.from_dict(weights)

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [self._encode(t) for t in texts]

    def encode_query(self, text: str) -> SparseVector:
        self.queries.append(text)
        if self.fail:
            raise RuntimeError("encoder exploded")
        return self._encode(text)


DOCS = {
    "refunds": b"# Refunds\nA refund is issued within 30 days for unused items.",
    "shipping": b"# Shipping\nParcels ship worldwide with tracked couriers.",
    "warranty": b"# Warranty\nThe warranty covers manufacturing defects for two years.",
}


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore | SqliteStore:
    return MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "s.db")


def make(store: MemoryStore | SqliteStore, encoder: WordEncoder | None = None) -> Rag:
    rag = Rag(store, HashingEmbedder(), sparse_encoder=encoder or WordEncoder())
    rag.ingest(BytesSource(DOCS, names={k: f"{k}.md" for k in DOCS}))
    return rag


def test_ingestion_stores_a_sparse_vector_per_chunk(store: MemoryStore | SqliteStore) -> None:
    rag = make(store)
    assert store.count_chunks() >= 3 and store.missing_sparse("test/words") == []
    assert len(store.missing_sparse("another/encoder")) == store.count_chunks()
    assert rag.sparse_encoder is not None


def test_sparse_arm_joins_hybrid_and_finds_expansions(store: MemoryStore | SqliteStore) -> None:
    rag = make(store)
    results = rag.search("money back", top_k=3)  # Rag's default is hybrid
    assert results[0].chunk.document_id == "refunds"
    assert "sparse" in results[0].arms and results[0].fusion == "convex"
    only = rag.search("money", top_k=3, use_dense_search=False, use_keyword_search=False)
    assert [r.chunk.document_id for r in only] == ["refunds"] and set(only[0].arms) == {"sparse"}
    off = rag.search("money back", top_k=3, use_sparse_search=False)
    assert all("sparse" not in r.arms for r in off)
    dense = rag.search("money back", top_k=3, use_hybrid_search=False)  # sparse only joins hybrid search
    assert all(set(r.arms) == {"dense"} for r in dense)


def test_sparse_arm_encodes_the_raw_query(store: MemoryStore | SqliteStore) -> None:
    encoder = WordEncoder()
    rag = make(store, encoder)
    rag.search("  Money back?  ", top_k=2)
    assert encoder.queries[-1].strip() == "Money back?"


def test_sparse_failure_degrades_to_the_other_arms(
    store: MemoryStore | SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    rag = make(store, WordEncoder(fail=True))
    with caplog.at_level(logging.WARNING, logger="ragwright.retrieve.pipeline"):
        results = rag.search("refund policy", top_k=3)
    assert results and all("sparse" not in r.arms for r in results)
    assert "sparse_failed" in caplog.text and "encoder exploded" in caplog.text


def test_without_an_encoder_the_sparse_arm_is_skipped(tmp_path: Path) -> None:
    rag = Rag(MemoryStore(), HashingEmbedder())
    rag.ingest(BytesSource(DOCS, names={k: f"{k}.md" for k in DOCS}))
    assert all("sparse" not in r.arms for r in rag.search("refund", top_k=3))
    with pytest.raises(ConfigError, match="no sparse encoder"):
        rag.search("refund", top_k=3, use_dense_search=False, use_keyword_search=False)


def test_backfill_when_the_encoder_arrives_later(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    plain = Rag(SqliteStore(path), HashingEmbedder())
    plain.ingest(BytesSource(DOCS, names={k: f"{k}.md" for k in DOCS}))
    plain.store.close()
    later = make(SqliteStore(path))  # unchanged documents: nothing re-embedded, sparse vectors back-filled
    assert later.store.missing_sparse("test/words") == []
    assert "sparse" in later.search("money", top_k=1)[0].arms
    renamed = make(SqliteStore(path), WordEncoder(name="test/words-v2"))  # another encoder: re-encoded
    assert renamed.store.missing_sparse("test/words-v2") == []


def fill_for_filters(store: Any, embedder: HashingEmbedder, encoder: WordEncoder) -> None:
    """12 documents of 3 chunks: ACL group ``g{d % 3}``, metadata team ``"ab"[d % 2]``, sparse vectors."""
    from ragwright.model.records import DocumentRecord, DocumentStatus
    from ragwright.testing.conformance import chunks_for

    store.bind_embedder(embedder.name, embedder.dimension)
    for d in range(12):
        chunks = chunks_for(
            f"d{d}",
            [f"refund money item {d} {i}" for i in range(3)],
            acl=(f"g{d % 3}",),
            metadata={"team": "ab"[d % 2]},
        )
        texts = [c.text for c in chunks]
        store.replace_document(
            DocumentRecord(f"d{d}", f"m:{d}", f"h{d}", DocumentStatus.INDEXED, chunk_count=3),
            chunks,
            embedder.embed_documents(texts),
        )
        store.put_sparse(
            list(zip([c.id for c in chunks], encoder.encode_documents(texts), strict=True)), encoder=encoder.name
        )


def check_filtered_sparse_search(store: Any, encoder: WordEncoder, groups: set[str], team: str | None) -> None:
    """On a :func:`fill_for_filters` store: only permitted, matching chunks, all of them, best first."""
    hits = store.search_sparse(
        encoder.encode_query("refund"),
        50,
        identity=Identity(groups=tuple(sorted(groups))),
        metadata_filter=as_filter({"team": team}) if team else None,
    )
    assert all(set(h.chunk.acl) & groups and (team is None or h.chunk.metadata["team"] == team) for h in hits)
    expected = sum(1 for d in range(12) if f"g{d % 3}" in groups and (team is None or "ab"[d % 2] == team)) * 3
    assert len(hits) == expected  # filtered before the cut, never padded, nothing missing
    scores = [h.score for h in hits]
    assert all(x > 0 for x in scores) and scores == sorted(scores, reverse=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(groups=st.sets(st.sampled_from(["g0", "g1", "g2"]), max_size=2), team=st.sampled_from([None, "a", "b"]))
def test_the_sparse_arm_never_returns_a_filtered_chunk(
    tmp_path_factory: pytest.TempPathFactory, groups: set[str], team: str | None
) -> None:
    embedder, encoder = HashingEmbedder(dimension=16), WordEncoder()
    for store in (MemoryStore(), SqliteStore(tmp_path_factory.mktemp("s") / "s.db")):
        fill_for_filters(store, embedder, encoder)
        check_filtered_sparse_search(store, encoder, groups, team)
        store.close()
