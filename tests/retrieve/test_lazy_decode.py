"""The SQLite arms hand fusion undecoded rows (stores/sqlite/hits.py): only the results a search returns
are decoded, and the results are exactly those of decoding every candidate first."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from ragwright import Rag
from ragwright.model.identity import Identity
from ragwright.model.specs import PredicateSpec
from ragwright.options import EnsembleOptions, FeedbackOptions
from ragwright.sources import BytesSource
from ragwright.stores.base import Hit
from ragwright.stores.sqlite import SqliteStore, dense, hits, keyword_search
from ragwright.stores.sqlite.schema import chunk_from_row
from ragwright.testing.doubles import HashingEmbedder

TOPICS = ("lens light", "tax filing quarter", "retina signal", "audit report", "protein crystal", "river flood")


def _docs(prefix: str, n: int) -> dict[str, bytes]:
    return {
        f"{prefix}{i}.md": (
            f"# Part {i}\n\nNote {i} on {TOPICS[i % len(TOPICS)]} and {TOPICS[(i * 5) % len(TOPICS)]}. "
            f"Item {i} mentions {TOPICS[(i + 2) % len(TOPICS)]} twice: {TOPICS[(i + 2) % len(TOPICS)]}."
        ).encode()
        for i in range(n)
    }


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Rag:
    path: Path = tmp_path_factory.mktemp("lazy") / "s.db"
    rag = Rag(SqliteStore(path), HashingEmbedder())
    rag.ingest(BytesSource(_docs("a", 60)), tenant="acme")
    rag.ingest(BytesSource(_docs("g", 20)), tenant="globex")
    return rag


def _eager(row: tuple[Any, ...], score: float) -> Hit:
    return Hit(chunk_from_row(row), score)


OPTIONS: list[dict[str, Any]] = [
    {},  # the facade's default: hybrid, Rocchio feedback on the candidates
    {"top_k": 2},  # fewer than the 3 results feedback learns from
    {"top_k": 7, "feedback": None},
    {"top_k": 4, "ensemble": EnsembleOptions(method="convex")},
    {"top_k": 5, "feedback": FeedbackOptions(rm3=True)},
    {"top_k": 3, "feedback": FeedbackOptions(rocchio_scope="index")},
    {"top_k": 6, "use_hybrid_search": False},
    {"top_k": 5, "metadata_filter": {"title": "Part 7"}},
]


@pytest.mark.parametrize("overrides", OPTIONS)
@pytest.mark.parametrize("identity", [Identity(tenant="acme"), Identity(tenant="globex")])
def test_results_equal_those_of_decoding_every_candidate(
    rag: Rag, overrides: dict[str, Any], identity: Identity, monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy = {q: rag.search(q, identity=identity, **overrides) for q in TOPICS}
    # Before: every candidate decoded by its arm, and every fused candidate made a result (an
    # accept-all specification keeps the pipeline from cutting the fused list at top_k).
    monkeypatch.setattr(dense, "RowHit", _eager)
    monkeypatch.setattr(keyword_search, "RowHit", _eager)
    everything = PredicateSpec(lambda r: True)
    for q in TOPICS:
        eager = rag.search(q, identity=identity, filter=everything, **overrides)
        assert eager, q
        assert lazy[q] == eager, q  # ids, order, scores, arms, chunks with their metadata
        assert [type(r.chunk).__name__ for r in lazy[q]] == ["Chunk"] * len(eager)
        assert {r.chunk.tenant for r in lazy[q]} == {identity.tenant}


def test_only_the_returned_results_are_decoded(rag: Rag) -> None:
    store = rag.store
    assert isinstance(store, SqliteStore)
    identity = Identity(tenant="acme")
    query = "lens light retina signal"
    vector = rag.embedder.embed_query(query)
    candidates = len(store.search_dense(vector, 50, identity=identity)) + len(
        store.search_keyword(query, 50, identity=identity)
    )
    assert candidates >= 60  # the arms of a default search hand fusion dozens of candidates
    before = hits.decoded_count()
    results = rag.search(query, identity=identity, top_k=3)  # hybrid, Rocchio feedback on the candidates
    decoded = hits.decoded_count() - before
    assert len(results) == 3
    # the first pass's top 3 (feedback reads them) and the final top 3, never the candidates
    assert 3 <= decoded <= 6


def test_a_row_hit_reads_its_id_and_rescores_without_decoding() -> None:
    row = ("c1", "d1", 0, "text", None, '["A", "B"]', 2, None, None, None, None, '{"k": [1, 2]}', "acme", '["x"]')
    before = hits.decoded_count()
    hit = hits.RowHit(row, 0.5)
    moved = hit.with_score(0.25)
    assert (hit.chunk_id, moved.chunk_id, moved.score) == ("c1", "c1", 0.25)
    assert hits.decoded_count() == before
    assert hit.chunk == chunk_from_row(row) and hit.chunk.metadata == {"k": [1, 2]}
    assert hit.chunk is hit.chunk  # decoded once
    assert hits.decoded_count() == before + 1
    assert hit == Hit(chunk_from_row(row), 0.5) and Hit(chunk_from_row(row), 0.5) == hit
    assert hit != Hit(chunk_from_row(row), 0.25)
    copy = pickle.loads(pickle.dumps(hit))
    assert type(copy) is Hit and copy == hit
