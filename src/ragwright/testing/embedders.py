"""The conformance suite of :class:`~ragwright.models.embedders.base.Embedder` (dense embedders).

Subclass it with an ``embedder`` fixture giving a ready embedder (return one loaded by a
module-scoped fixture to load a real model once)::

    @pytest.fixture(scope="module")
    def my_model():
        return MyEmbedder(...).load()

    class TestMyEmbedder(EmbedderConformance):
        @pytest.fixture
        def embedder(self, my_model):
            return my_model

It checks: the protocol and a stable ``dimension`` (every batch, every query); float32 arrays of the
documented shapes; a batch equals the texts embedded one by one (``batch_tolerance``, as padding
changes the arithmetic a little); unit vectors (set ``normalized = False`` for a model that says it
does not normalise); the empty batch, the empty string (a unit or the zero vector) and a text far
beyond ``max_tokens`` handled (finite vectors, no error); the same input gives the same vector;
``count_tokens`` counts (0 for "", growing with the text); and a text's query vector is nearest its own
passage vector among unrelated ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragwright.models.embedders.base import Embedder

TEXTS = [
    "The cat sat on the warm windowsill all afternoon.",
    "Interest rates rose sharply after the central bank's announcement.",
    "Photosynthesis converts light, water and carbon dioxide into sugar.",
    "The violinist rehearsed the concerto twice before the evening show.",
    "Glaciers carve deep valleys as they move slowly downhill.",
]


class EmbedderConformance:
    """Subclass and provide an ``embedder`` fixture."""

    #: Largest difference allowed between a vector embedded in a batch and alone.
    batch_tolerance: float = 1e-4
    #: Whether the embedder promises unit vectors (the protocol does; set False for one that says not).
    normalized: bool = True

    def _check_rows(self, embedder: Any, vectors: Any, rows: int) -> None:
        assert isinstance(vectors, np.ndarray), type(vectors)
        assert vectors.dtype == np.float32, vectors.dtype
        assert vectors.shape == (rows, embedder.dimension), vectors.shape
        assert np.isfinite(vectors).all()
        if self.normalized and rows:
            np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)

    def test_satisfies_the_protocol(self, embedder: Any) -> None:
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.name, str) and embedder.name.strip()
        assert isinstance(embedder.dimension, int) and embedder.dimension > 0
        assert isinstance(embedder.max_tokens, int) and embedder.max_tokens > 0

    def test_dimension_is_stable_across_batches_and_queries(self, embedder: Any) -> None:
        dimension = embedder.dimension
        for batch in (TEXTS[:1], TEXTS, TEXTS[2:4]):
            self._check_rows(embedder, embedder.embed_documents(batch), len(batch))
        query = embedder.embed_query("why do glaciers move")
        assert isinstance(query, np.ndarray) and query.dtype == np.float32
        assert query.shape == (dimension,) and embedder.dimension == dimension
        if self.normalized:
            assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-3

    def test_a_batch_equals_one_by_one(self, embedder: Any) -> None:
        texts = [*TEXTS, "short", TEXTS[0] * 3]  # different lengths: padding must not leak in
        batch = embedder.embed_documents(texts)
        alone = np.stack([embedder.embed_documents([t])[0] for t in texts])
        np.testing.assert_allclose(batch, alone, atol=self.batch_tolerance)

    def test_order_of_a_batch_does_not_change_a_vector(self, embedder: Any) -> None:
        forward = embedder.embed_documents(TEXTS)
        backward = embedder.embed_documents(TEXTS[::-1])[::-1]
        np.testing.assert_allclose(forward, backward, atol=self.batch_tolerance)

    def test_the_same_input_gives_the_same_vector(self, embedder: Any) -> None:
        np.testing.assert_array_equal(embedder.embed_documents(TEXTS), embedder.embed_documents(TEXTS))
        np.testing.assert_array_equal(embedder.embed_query(TEXTS[1]), embedder.embed_query(TEXTS[1]))

    def test_an_empty_batch_gives_no_rows(self, embedder: Any) -> None:
        self._check_rows(embedder, embedder.embed_documents([]), 0)

    def test_empty_and_blank_text_give_finite_vectors(self, embedder: Any) -> None:
        # A text with no tokens may embed to the zero vector (similar to nothing) or to a unit vector.
        vectors = np.vstack([embedder.embed_documents(["", "   "]), embedder.embed_query("")[None, :]])
        assert vectors.dtype == np.float32 and vectors.shape == (3, embedder.dimension)
        assert np.isfinite(vectors).all()
        if self.normalized:
            norms = np.linalg.norm(vectors, axis=1)
            assert np.all((np.abs(norms - 1.0) < 1e-3) | (norms < 1e-6)), norms

    def test_text_beyond_the_window_is_handled(self, embedder: Any) -> None:
        words = " ".join(f"word{i % 50}" for i in range(embedder.max_tokens * 4))
        assert embedder.count_tokens(words) > embedder.max_tokens
        self._check_rows(embedder, embedder.embed_documents([words, TEXTS[0]]), 2)
        assert np.isfinite(embedder.embed_query(words)).all()

    def test_count_tokens_counts(self, embedder: Any) -> None:
        assert embedder.count_tokens("") == 0
        one, two = embedder.count_tokens(TEXTS[0]), embedder.count_tokens(TEXTS[0] + " " + TEXTS[1])
        assert isinstance(one, int) and 0 < one < two

    def test_a_query_is_nearest_its_own_text(self, embedder: Any) -> None:
        passages = embedder.embed_documents(TEXTS)
        for i, text in enumerate(TEXTS):
            sims = passages @ embedder.embed_query(text)
            assert int(np.argmax(sims)) == i, (text, sims)
