"""Answerability as a measured model: does the retrieved evidence answer *this* question?

Two small logistic models, trained on SQuAD 2.0 by ``tools/train_answerability.py`` (data manifest in
``tools/answerability_data.json``) and shipped as weights in ``answerability.json`` beside this module;
inference is a dot product in numpy (no scikit-learn at run time):

* the **sentence model** scores each candidate unit (:mod:`ragwright.generate.evidence`): does this
  sentence or table row hold the answer? It ranks what the extractive answerer quotes;
* the **answerability model** reads features of the question and the best unit — coverage of the
  question's terms in the unit, its neighbours and all sources; constraint terms of the question
  (names, numbers, qualifiers, a negation) absent from the evidence; whether the unit holds a new
  expression of the asked answer type (a date for *when* …); the embedding similarities and their
  margin; the retrieval arms' scores (dense cosine, BM25) and whether the arms agree — and returns a
  calibrated probability that the evidence answers the question. Below the shipped threshold (chosen
  for balanced accuracy on held-out articles) the answer declines, and :attr:`Verdict.signal` names
  the feature group that pulled the probability down the most (``decline_reason`` becomes
  ``answerability_<signal>``).

The similarities are those of the embedder the model was trained with (the default one); with another
embedder (:func:`applies_to` is false) the extractive answer falls back to its similarity floor and the
LLM answer to the model's own judgement, and ``answerability_skipped`` is logged.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from ragwright.errors import ConfigError
from ragwright.generate.acronyms import acronyms_in, definitions, expansions
from ragwright.generate.question import (
    ANSWER_TYPES,
    all_stems,
    coverage,
    is_negated,
    numbers_in,
    stem,
    swapped_terms,
    words,
)
from ragwright.model.results import SearchResult

if TYPE_CHECKING:
    from ragwright.generate.evidence import Evidence

WEIGHTS_FILE: Final = "answerability.json"
#: Standardised feature values are clipped to ± this many standard deviations of the training data:
#: a yes/no feature present in 1 % of the training rows sits 9.95 SD out when present, so every signal
#: the data taught keeps its weight; one it almost never saw (a table row, 0.13 % of SQuAD's units:
#: 28 SD) no longer outweighs the rest. 3 SD was measured too and weakened the rare constraint features
#: (negation added 4.6 SD, antonym swap 5.6 SD): SQuAD held-out balanced accuracy 0.682 -> 0.678.
Z_CLIP: Final = 10.0

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


@dataclass(frozen=True)
class LogisticModel:
    """``sigmoid(intercept + coef · (x - mean) / scale)`` over named features, with a threshold."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float = 0.5
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ConfigError(f"answerability weights: {n} features but mean/scale/coef lengths differ")
        if any(s <= 0 for s in self.scale):
            raise ConfigError("answerability weights: every scale must be > 0")
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError.invalid("threshold", self.threshold, "a probability strictly between 0 and 1")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LogisticModel:
        try:
            return cls(
                features=tuple(str(f) for f in data["features"]),
                mean=tuple(float(x) for x in data["mean"]),
                scale=tuple(float(x) for x in data["scale"]),
                coef=tuple(float(x) for x in data["coef"]),
                intercept=float(data["intercept"]),
                threshold=float(data.get("threshold", 0.5)),
                meta=dict(data.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"answerability weights are malformed: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "meta": dict(self.meta or {}),
        }

    def contributions(self, x: Mapping[str, float]) -> dict[str, float]:
        """Each feature's term of the logit: its standardised value, clipped to ±:data:`Z_CLIP`, times its
        coefficient. The clip keeps a value the training data almost never held (a table row: 0.13 % of
        SQuAD's units, 28 standard deviations from their mean) from outweighing every other feature."""
        return {
            f: c * min(max((float(x.get(f, 0.0)) - m) / s, -Z_CLIP), Z_CLIP)
            for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True)
        }

    def logit(self, x: Mapping[str, float]) -> float:
        return self.intercept + sum(self.contributions(x).values())

    def probability(self, x: Mapping[str, float]) -> float:
        z = self.logit(x)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


#: The :attr:`Verdict.conclusive` rules that answer; the others decline, named by their signal.
ANSWERING_RULES: Final = frozenset({"expansion_defined"})
RULE_SIGNALS: Final[Mapping[str, str]] = {"expansion_defined": "answer_type", "expansion_missing": "answer_type"}


@dataclass(frozen=True)
class Verdict:
    """The answerability model's reading of one question and its evidence."""

    probability: float
    threshold: float
    signal: str | None
    features: Mapping[str, float]
    #: The rule that settles the verdict whatever the probability (``None``: none applies), for an
    #: expansion question ("What does RCAC stand for?"), whose answer can only be the acronym spelt out:
    #: ``"expansion_defined"`` (answers) — the best unit spells the asked acronym out beside it
    #: ("Row and Column Access Control (RCAC)"); ``"expansion_missing"`` (declines, as an answer-type
    #: miss) — no source has a run of words with the acronym's initials. SQuAD, the model's training data,
    #: holds five expansion questions and no such line, so the model cannot have learnt either (the line's
    #: similarity to the question is low: the embedder does not know what the acronym stands for).
    conclusive: str | None = None

    @property
    def answerable(self) -> bool:
        if self.conclusive is not None:
            return self.conclusive in ANSWERING_RULES
        return self.probability >= self.threshold

    @property
    def decline_reason(self) -> str:
        if self.conclusive is not None:
            return f"answerability_{RULE_SIGNALS[self.conclusive]}"
        return f"answerability_{self.signal or 'similarity'}"


def load_weights(path: str | None = None) -> dict[str, LogisticModel]:
    """The ``sentence`` and ``answerable`` models from *path* (default: the shipped weights)."""
    if path is None:
        text = resources.files("ragwright.generate").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"answerability weights are not valid JSON: {exc}") from exc
    models = {name: LogisticModel.from_dict(data[name]) for name in ("sentence", "answerable") if name in data}
    if set(models) != {"sentence", "answerable"}:
        raise ConfigError("answerability weights need a 'sentence' and an 'answerable' model")
    for name, expected in (("sentence", SENTENCE_FEATURES), ("answerable", ANSWER_FEATURES)):
        unknown = set(models[name].features) - set(expected)
        if unknown:
            raise ConfigError(f"answerability weights: unknown {name} features {sorted(unknown)}")
    return models


@functools.cache
def _shipped() -> dict[str, LogisticModel]:
    return load_weights()


def sentence_model() -> LogisticModel:
    return _shipped()["sentence"]


def answer_model() -> LogisticModel:
    return _shipped()["answerable"]


def applies_to(embedder_name: str) -> bool:
    """Whether the shipped model was trained on this embedder's similarities (cosines of another
    embedder sit on another scale, so the model is not used with it)."""
    trained = (answer_model().meta or {}).get("embedder")
    return trained is None or trained == embedder_name


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
    x["antonym_swap"] = float(bool(swapped_terms(all_stems(q.text), all_stems(ev.units[best].text))))
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


def judge(
    ev: Evidence,
    results: Sequence[SearchResult],
    *,
    threshold: float | None = None,
    model: LogisticModel | None = None,
) -> Verdict:
    """The answerability verdict for *ev* (the shipped model and threshold unless given)."""
    m = model or answer_model()
    x = answer_features(ev, results)
    p = m.probability(x)
    groups: dict[str, float] = {}
    for name, value in m.contributions(x).items():
        group = SIGNALS.get(name)
        if group is not None:
            groups[group] = groups.get(group, 0.0) + value
    signal = min(groups, key=lambda g: groups[g]) if groups else None
    return Verdict(p, m.threshold if threshold is None else threshold, signal, x, _conclusive(ev, results))


def _conclusive(ev: Evidence, results: Sequence[SearchResult]) -> str | None:
    """The rule that settles the verdict without the model, if any (see :attr:`Verdict.conclusive`)."""
    best = ev.best
    asked = acronyms_in(ev.question.text)
    if best is None or ev.question.answer_type != "expansion" or not asked:
        return None
    unit = ev.units[best]
    held = {w.casefold() for w in words(f"{unit.context} {unit.text}" if unit.kind == "row" else unit.text)}
    # read in the source's text: the acronym may sit in the next line ("… the Office of the National Cyber
    # Director" / "(ONCD) within …"); the unit quoted must hold the words it stands for
    source = results[unit.source - 1].chunk.text if 0 < unit.source <= len(results) else unit.text
    for acronym in asked:
        if any(all(w.casefold() in held for w in run) for run in definitions(acronym, source)):
            return "expansion_defined"
    if not any(expansions(acronym, r.chunk.text) for r in results for acronym in asked):
        return "expansion_missing"  # read in the sources' whole text: a line the units leave out counts too
    return None
