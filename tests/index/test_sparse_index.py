"""The sparse inverted index against brute-force dot products; filters before top-k; incremental
updates equal a rebuild."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragwright.errors import ConfigError
from ragwright.index.sparse import SparseIndex
from ragwright.models.sparse.base import SparseVector

VOCAB = 60

vectors = st.dictionaries(st.integers(0, VOCAB - 1), st.floats(0.01, 5.0), max_size=12).map(SparseVector.from_dict)
corpora = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), vectors, min_size=0, max_size=40)


def brute(corpus: dict[str, SparseVector], q: SparseVector, k: int, allowed: set[str] | None = None) -> list[str]:
    scored = [(q.dot(v), cid) for cid, v in corpus.items() if allowed is None or cid in allowed]
    return [cid for s, cid in sorted((x for x in scored if x[0] > 0), key=lambda p: (-p[0], p[1]))][:k]


@settings(max_examples=60, deadline=None)
@given(corpus=corpora, q=vectors, k=st.integers(1, 15), data=st.data())
def test_search_equals_brute_force(
    corpus: dict[str, SparseVector], q: SparseVector, k: int, data: st.DataObject
) -> None:
    index = SparseIndex()
    index.upsert(corpus.items())
    allowed = data.draw(st.none() | st.sets(st.sampled_from(sorted(corpus) or ["zz"])))
    got = index.search(q, k, allowed=allowed)
    want = brute(corpus, q, k, allowed)
    # equal up to float rounding at ties: compare scores, then ids where scores differ clearly
    assert [round(s, 4) for _, s in got] == [round(q.dot(corpus[c]), 4) for c in want]
    assert allowed is None or {c for c, _ in got} <= allowed  # a filtered chunk never comes back
    scores = index.scores(q)
    assert set(scores) == {c for c, v in corpus.items() if q.dot(v) > 0}


@settings(max_examples=30, deadline=None)
@given(first=corpora, second=corpora, removed=st.sets(st.text("abcdefgh", min_size=1, max_size=3)), q=vectors)
def test_incremental_equals_rebuild(
    first: dict[str, SparseVector], second: dict[str, SparseVector], removed: set[str], q: SparseVector
) -> None:
    index = SparseIndex()
    index.upsert(first.items())
    index.search(q, 5)  # freeze a view between the changes
    index.upsert(second.items())
    index.remove(removed)
    final = {**first, **second}
    for cid in removed:
        final.pop(cid, None)
    rebuilt = SparseIndex()
    rebuilt.upsert(final.items())
    assert len(index) == len(final) and sorted(index.ids()) == sorted(final)
    assert index.search(q, 50) == rebuilt.search(q, 50)


def test_compaction_and_min_score() -> None:
    index = SparseIndex()
    index.upsert((f"c{i}", SparseVector.from_dict({i % 7: 1.0 + i, 50: 0.5})) for i in range(100))
    index.remove([f"c{i}" for i in range(60)])  # past the compaction fraction
    q = SparseVector.from_dict({50: 2.0, 3: 1.0})
    hits = index.search(q, 100)
    assert {c for c, _ in hits} == {f"c{i}" for i in range(60, 100)}
    floor = index.search(q, 100, min_score=50.0)
    assert floor and all(s >= 50.0 for _, s in floor)
    assert index.search(SparseVector.from_dict({99: 1.0}), 5) == []
    with pytest.raises(ConfigError):
        index.search(q, -1)


def test_sparse_vector_helpers() -> None:
    v = SparseVector.from_dict({5: 2.0, 1: 0.5, 9: 0.0})
    assert v.indices.tolist() == [1, 5] and v.to_dict() == {1: 0.5, 5: 2.0}
    assert v.dot(SparseVector.from_dict({5: 3.0, 7: 1.0})) == pytest.approx(6.0)
    assert v == SparseVector(np.array([1, 5], np.int32), np.array([0.5, 2.0], np.float32)) and len(v) == 2
