"""The conformance suite of :class:`~ragwright.postprocess.rerank.Reranker` (passage rerankers).

Subclass it with a ``reranker`` fixture giving a ready reranker (return one loaded by a
module-scoped fixture to load a real model once)::

    class TestMyReranker(RerankerConformance):
        @pytest.fixture
        def reranker(self, my_loaded_reranker):
            return my_loaded_reranker

The suite scores :attr:`~RerankerConformance.query` against :attr:`~RerankerConformance.relevant`
and :attr:`~RerankerConformance.irrelevant` passages; override them where a model reads a small
vocabulary. It checks: the protocol; one finite float per passage, in the passages' order; no passages
→ ``[]``; the same call gives the same scores; scores follow the passages, not
their positions (reversing the input reverses the scores — within ``tolerance``); a relevant passage
outscores the irrelevant ones; and, for a pointwise reranker (``pointwise = True``), a passage repeated
in one call gets one score. A listwise reranker whose scores depend on the list (set
``order_invariant = False``/``pointwise = False``) skips the last two position checks it cannot promise.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragwright.postprocess.rerank import Reranker


class RerankerConformance:
    """Subclass and provide a ``reranker`` fixture."""

    query: str = "How do plants turn sunlight into food?"
    relevant: str = "Photosynthesis lets plants convert light energy, water and carbon dioxide into glucose."
    irrelevant: tuple[str, ...] = (
        "The stock exchange closed lower on Friday after bank shares fell sharply.",
        "The recipe calls for two cups of flour and a pinch of salt.",
    )
    #: Largest difference allowed between the scores of one pair scored in different positions.
    tolerance: float = 1e-4
    #: Whether a passage's score depends only on (query, passage), not on the other passages.
    pointwise: bool = True
    #: Whether reversing the passages reverses the scores.
    order_invariant: bool = True

    def _passages(self) -> list[str]:
        return [self.irrelevant[0], self.relevant, *self.irrelevant[1:]]

    def test_satisfies_the_protocol(self, reranker: Any) -> None:
        assert isinstance(reranker, Reranker)
        assert isinstance(reranker.name, str) and reranker.name.strip()

    def test_one_finite_score_per_passage(self, reranker: Any) -> None:
        passages = self._passages()
        scores = reranker.score(self.query, passages)
        assert isinstance(scores, list) and len(scores) == len(passages)
        assert all(isinstance(s, float) and math.isfinite(s) for s in scores), scores
        single = reranker.score(self.query, [self.relevant])
        assert len(single) == 1 and isinstance(single[0], float)

    def test_no_passages_no_scores(self, reranker: Any) -> None:
        assert reranker.score(self.query, []) == []

    def test_the_same_call_gives_the_same_scores(self, reranker: Any) -> None:
        passages = self._passages()
        first, second = reranker.score(self.query, passages), reranker.score(self.query, passages)
        assert first == pytest.approx(second, abs=self.tolerance)

    def test_scores_follow_the_passages_not_their_positions(self, reranker: Any) -> None:
        if not self.order_invariant:
            pytest.skip("this reranker's scores depend on the order it is shown")
        passages = self._passages()
        forward = reranker.score(self.query, passages)
        backward = reranker.score(self.query, passages[::-1])
        assert forward == pytest.approx(backward[::-1], abs=self.tolerance)

    def test_the_relevant_passage_scores_highest(self, reranker: Any) -> None:
        passages = self._passages()
        scores = reranker.score(self.query, passages)
        best = passages.index(self.relevant)
        assert all(scores[best] > s for i, s in enumerate(scores) if i != best), scores

    def test_a_repeated_passage_gets_one_score(self, reranker: Any) -> None:
        if not self.pointwise:
            pytest.skip("a listwise reranker ranks repeats apart")
        scores = reranker.score(self.query, [self.relevant, self.irrelevant[0], self.relevant])
        assert scores[0] == pytest.approx(scores[2], abs=self.tolerance)
