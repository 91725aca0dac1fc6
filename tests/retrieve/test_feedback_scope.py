"""Rocchio feedback's scope: re-score the first pass's candidates (the default) or search the index again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright import Rag
from ragwright.errors import ConfigError
from ragwright.model.chunk import Chunk
from ragwright.model.identity import Identity
from ragwright.options import PRESETS, FeedbackOptions
from ragwright.retrieve.arms import rescore
from ragwright.retrieve.feedback import rocchio
from ragwright.sources import BytesSource
from ragwright.stores.sqlite import SqliteStore
from ragwright.testing.doubles import HashingEmbedder


def _chunk(cid: str) -> Chunk:
    return Chunk(id=cid, document_id=cid, text=cid, position=0)


def test_rescore_ranks_the_pool_by_exact_cosine_with_a_floor_and_a_depth() -> None:
    pool = {cid: _chunk(cid) for cid in ("a", "b", "c", "d")}
    vectors = {
        "a": np.array([1.0, 0.0], dtype=np.float32),
        "b": np.array([0.6, 0.8], dtype=np.float32),
        "c": np.array([0.0, 1.0], dtype=np.float32),
        # "d" has no stored vector: left out, never invented
    }
    query = np.array([0.0, 2.0], dtype=np.float32)  # not unit length: cosines all the same
    hits = rescore(query, pool, vectors, depth=2)
    assert [(h.chunk.id, round(h.score, 4)) for h in hits] == [("c", 1.0), ("b", 0.8)]
    floored = rescore(query, pool, vectors, depth=10, min_score=0.5)
    assert [h.chunk.id for h in floored] == ["c", "b"]  # a's cosine 0 is under the floor


def test_the_scope_is_validated() -> None:
    assert FeedbackOptions().rocchio_scope == "candidates"
    with pytest.raises(ConfigError, match="rocchio_scope='everything' is invalid: 'candidates' or 'index'"):
        FeedbackOptions(rocchio_scope="everything")


DOCS = {
    "lens.md": b"The crystalline lens focuses light. Its proteins are called crystallins.",
    "eye.md": b"Crystallins keep the cornea clear in fish and birds.",
    "retina.md": b"The retina turns light into signals; the lens focuses light on it.",
    "tax.md": b"Quarterly tax filings are due at the end of each quarter.",
    "audit.md": b"An audit checks the tax filings of the quarter.",
}


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Rag, list[Any]]:
    store = SqliteStore(tmp_path / "s.db")
    rag = Rag(store, HashingEmbedder())
    rag.ingest(BytesSource(DOCS))
    calls: list[Any] = []
    original = store.search_dense

    def search_dense(vector: Any, k: int, **kwargs: Any) -> Any:
        calls.append(np.asarray(vector).copy())
        return original(vector, k, **kwargs)

    monkeypatch.setattr(store, "search_dense", search_dense)
    return rag, calls


def test_candidates_scope_moves_the_vector_without_a_second_index_search(counted: tuple[Rag, list[Any]]) -> None:
    rag, calls = counted
    results = rag.search("lens light", top_k=3)  # the facade's default: hybrid with Rocchio on candidates
    assert PRESETS["hybrid"]["feedback"].rocchio_scope == "candidates"
    assert len(calls) == 1  # the first pass only
    assert results and results[0].chunk.document_id in {"lens.md", "retina.md"}
    # the dense evidence of every result is the moved vector's exact cosine with its stored vector
    query = rag.embedder.embed_query("lens light")
    first = rag.search("lens light", top_k=3, feedback=None)
    stored = rag.store.get_vectors([r.chunk.id for r in first[:3]])
    moved = rocchio(query, [stored[r.chunk.id] for r in first[:3]], 0.5)
    for r in results:
        dense = r.arms.get("dense")
        if dense is not None:
            (v,) = rag.store.get_vectors([r.chunk.id]).values()
            cosine = float(v @ moved / (np.linalg.norm(v) * np.linalg.norm(moved)))
            assert dense.score == pytest.approx(cosine, abs=1e-5)


def test_index_scope_searches_the_index_again(counted: tuple[Rag, list[Any]]) -> None:
    rag, calls = counted
    results = rag.search("lens light", top_k=3, feedback=FeedbackOptions(rocchio_scope="index"))
    assert len(calls) == 2 and not np.allclose(calls[0], calls[1])  # the second with the moved vector
    assert results


def test_candidates_never_include_what_the_caller_cannot_see(tmp_path: Path) -> None:
    rag = Rag(SqliteStore(tmp_path / "s.db"), HashingEmbedder())
    rag.ingest(BytesSource({"lens.md": DOCS["lens.md"], "eye.md": DOCS["eye.md"]}), tenant="acme")
    rag.ingest(BytesSource({"secret.md": b"Crystallins of the lens: the secret formula."}), tenant="globex")
    for scope in ("candidates", "index"):
        seen = rag.search(
            "crystallins lens", top_k=5, identity=Identity(tenant="acme"), feedback=FeedbackOptions(rocchio_scope=scope)
        )
        assert seen and {r.chunk.tenant for r in seen} == {"acme"}
