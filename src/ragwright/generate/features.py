"""Features of a question and its evidence, read by the answerability models (:mod:`ragwright.generate.answerability`).

* :func:`unit_features` — one candidate unit (sentence or table row) for the **sentence model**: its
  similarity to the question and its neighbours', coverage of the question's terms and key terms,
  whether it holds the asked answer type, where it sits, a number that conflicts with the question's;
* :func:`answer_features` — the question and its best unit for the **answerability model**: coverage in
  the unit, its neighbours and all sources; constraint terms of the question absent from the evidence
  (names, numbers, qualifiers, a negation, an antonym); the answer type; the similarities and their
  margin; the retrieval arms' scores and whether they agree.

:data:`ANSWER_SIGNS` is the direction each feature may push the logit (the trainer drops a feature
fitted the other way) and :data:`SIGNALS` the signal each belongs to, named in ``decline_reason``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from ragwright.generate.opposites import contradicting_swaps
from ragwright.generate.question import (
    ANSWER_TYPES,
    coverage,
    is_negated,
    numbers_in,
    stem,
    words,
)
from ragwright.model.results import SearchResult

if TYPE_CHECKING:
    from ragwright.generate.evidence import Evidence

SENTENCE_FEATURES: Final = (
    "cos",
    "cos_gap",
    "window_cos",
    "cov",
    "cov_window",
    "key_cov",
    "type_hit",
    "type_window",
    "src_recip",
    "first_in_source",
    "row",
    "n_words",
    "bigram",
    "key_miss",
    "number_conflict",
)

ANSWER_FEATURES: Final = (
    "best_score",
    "best_cos",
    "max_cos",
    "cos_margin",
    "cov",
    "cov_window",
    "cov_sources",
    "miss_window",
    "miss_sources",
    "key_miss_window",
    "entity_miss",
    "number_miss",
    "qualifier_miss",
    "neg_added",
    "neg_dropped",
    "antonym_swap",
    "type_hit",
    "type_window",
    "window_cos",
    "new_words",
    "q_terms",
    "dense_top",
    "bm25_top",
    "arms_agree",
    "best_in_top",
    "bigram_unit",
    "miss_unit",
    "key_miss_unit",
    "entity_miss_unit",
    "number_conflict",
    *(f"t_{t}" for t in ANSWER_TYPES),
)

#: The direction each feature may push the answerability logit (+1 up, -1 down, 0 either): the trainer
#: drops a feature whose fitted sign disagrees, so the model transfers to text unlike its training data.
ANSWER_SIGNS: Final[Mapping[str, int]] = {
    "best_score": 1,
    "best_cos": 1,
    "max_cos": 1,
    "window_cos": 1,
    "cov": 1,
    "cov_window": 1,
    "cov_sources": 1,
    "miss_window": -1,
    "miss_sources": -1,
    "miss_unit": -1,
    "key_miss_window": -1,
    "key_miss_unit": -1,
    "entity_miss": -1,
    "entity_miss_unit": -1,
    "number_miss": -1,
    "number_conflict": -1,
    "qualifier_miss": -1,
    "neg_added": -1,
    "antonym_swap": -1,
    "type_hit": 1,
    "type_window": 1,
    "bigram_unit": 1,
    "dense_top": 1,
    "bm25_top": 1,
    "arms_agree": 1,
    "best_in_top": 1,
}

#: Feature → the signal it belongs to (named in ``decline_reason``).
SIGNALS: Final[Mapping[str, str]] = {
    "best_score": "similarity",
    "best_cos": "similarity",
    "max_cos": "similarity",
    "cos_margin": "similarity",
    "cov": "coverage",
    "cov_window": "coverage",
    "cov_sources": "coverage",
    "miss_window": "coverage",
    "miss_sources": "coverage",
    "new_words": "coverage",
    "q_terms": "coverage",
    "key_miss_window": "constraint",
    "key_miss_unit": "constraint",
    "entity_miss_unit": "constraint",
    "number_conflict": "constraint",
    "bigram_unit": "coverage",
    "miss_unit": "coverage",
    "entity_miss": "constraint",
    "number_miss": "constraint",
    "qualifier_miss": "constraint",
    "neg_added": "constraint",
    "antonym_swap": "constraint",
    "neg_dropped": "constraint",
    "window_cos": "similarity",
    "type_hit": "answer_type",
    "type_window": "answer_type",
    "dense_top": "retrieval",
    "bm25_top": "retrieval",
    "arms_agree": "retrieval",
    "best_in_top": "retrieval",
}


def unit_features(ev: Evidence, i: int) -> dict[str, float]:
    """Features of unit *i* for the sentence model."""
    q = ev.question
    u = ev.units[i]
    keys = q.key_terms
    hit = float(ev.type_hits[i] > 0)
    best_cos = max(ev.cosines) if ev.cosines else 0.0
    return {
        "cos": ev.cosines[i],
        "cos_gap": ev.cosines[i] - best_cos,
        "window_cos": ev.window_cos(i),
        "cov": ev.coverage[i],
        "cov_window": ev.window_coverage[i],
        "key_cov": coverage(keys, ev.stems[i]) if keys else 1.0,
        "type_hit": hit,
        "type_window": float(ev.window_type_hits[i] > 0),
        "src_recip": 1.0 / u.source,
        "first_in_source": float(u.index == 0),
        "row": float(u.kind == "row"),
        "n_words": math.log1p(len(u.text.split())),
        "bigram": ev.bigram_cover(i),
        "key_miss": (len(keys - ev.stems[i]) / len(keys)) if keys else 0.0,
        "number_conflict": _number_conflict(ev, i),
    }


def _number_conflict(ev: Evidence, i: int) -> float:
    """1 when the question names a number, year or ordinal that unit *i* lacks while the unit holds
    another ("in 1917" asked, "in 1914" written; "fourth" asked, "third" written)."""
    asked = numbers_in(ev.question.text)
    unit = ev.units[i]
    held = numbers_in(f"{unit.context} {unit.text}" if unit.kind == "row" else unit.text)
    return float(bool(asked - held) and bool(held - asked))


def _arm(result: SearchResult, *names: str) -> tuple[int, float] | None:
    for name in names:
        hit = result.arms.get(name)
        if hit is not None:
            return hit.rank, hit.score
    return None


def answer_features(ev: Evidence, results: Sequence[SearchResult]) -> dict[str, float]:
    """Features of the question and its best evidence for the answerability model."""
    q = ev.question
    x: dict[str, float] = dict.fromkeys(ANSWER_FEATURES, 0.0)
    for t in ANSWER_TYPES:
        x[f"t_{t}"] = float(q.answer_type == t)
    x["q_terms"] = math.log1p(len(q.terms))
    best = ev.best
    if best is None:
        x["miss_window"] = x["miss_sources"] = math.log1p(len(q.terms))
        x["key_miss_window"] = x["key_miss_unit"] = 1.0
        return x
    window = ev.window_stems[best]
    terms = set(q.terms)
    keys = q.key_terms
    x["best_score"] = ev.scores[best]
    x["best_cos"] = ev.cosines[best]
    ranked_cos = sorted(ev.cosines, reverse=True)
    x["max_cos"] = ranked_cos[0]
    x["cos_margin"] = ranked_cos[0] - ranked_cos[1] if len(ranked_cos) > 1 else ranked_cos[0]
    x["cov"] = ev.coverage[best]
    x["cov_window"] = ev.window_coverage[best]
    x["cov_sources"] = coverage(q.terms, ev.source_stems)
    x["miss_window"] = math.log1p(len(terms - window))
    x["miss_sources"] = math.log1p(len(terms - ev.source_stems))
    x["key_miss_window"] = (len(keys - window) / len(keys)) if keys else 0.0
    entity_stems = {stem(w) for e in q.entities for w in words(e)} & terms
    asked_numbers = numbers_in(q.text)
    window_numbers = frozenset().union(*(numbers_in(ev.units[j].text) for j in ev.window(best)))
    qualifier_stems = {stem(w) for w in q.qualifiers} & terms
    x["entity_miss"] = float(bool(entity_stems - window))
    x["number_miss"] = float(bool(asked_numbers - window_numbers))
    x["qualifier_miss"] = float(bool(qualifier_stems - window))
    unit_negated = is_negated(ev.units[best].text)
    x["neg_added"] = float(q.negated and not unit_negated)
    x["neg_dropped"] = float(unit_negated and not q.negated)
    x["antonym_swap"] = float(bool(contradicting_swaps(q.text, ev.units[best].text)))
    x["type_hit"] = float(ev.type_hits[best] > 0)
    x["type_window"] = float(ev.window_type_hits[best] > 0)
    x["window_cos"] = ev.window_cos(best)
    x["new_words"] = math.log1p(len(ev.stems[best] - terms))
    unit = ev.stems[best]
    x["bigram_unit"] = ev.bigram_cover(best)
    x["miss_unit"] = math.log1p(len(terms - unit))
    x["key_miss_unit"] = (len(keys - unit) / len(keys)) if keys else 0.0
    x["entity_miss_unit"] = (len(entity_stems - unit) / len(entity_stems)) if entity_stems else 0.0
    x["number_conflict"] = _number_conflict(ev, best)
    if results:
        top = results[0]
        dense = _arm(top, "dense")
        keyword = _arm(top, "bm25", "keyword")
        x["dense_top"] = dense[1] if dense else x["max_cos"]
        x["bm25_top"] = math.log1p(max(keyword[1], 0.0)) / math.sqrt(max(len(q.terms), 1)) if keyword else 0.0
        dense_first = next((r for r in results if (a := _arm(r, "dense")) and a[0] == 1), None)
        bm25_first = next((r for r in results if (a := _arm(r, "bm25", "keyword")) and a[0] == 1), None)
        x["arms_agree"] = float(dense_first is not None and dense_first is bm25_first)
        x["best_in_top"] = float(ev.units[best].source == 1)
    return x
