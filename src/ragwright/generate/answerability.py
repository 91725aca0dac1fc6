"""Answerability as a measured model: does the retrieved evidence answer *this* question?

Two small logistic models, trained on SQuAD 2.0 by ``tools/train_answerability.py`` (data manifest in
``tools/answerability_data.json``) and shipped as weights in ``answerability.json`` beside this module;
inference is a dot product in numpy (no scikit-learn at run time):

* the **sentence model** scores each candidate unit (:mod:`ragwright.generate.evidence`): does this
  sentence or table row hold the answer? It ranks what the extractive answerer quotes;
* the **answerability model** reads features of the question and the best unit
  (:mod:`ragwright.generate.features`: coverage of the question's terms in the unit, its neighbours and
  all sources; constraint terms of the question absent from the evidence; the asked answer type; the
  similarities; the retrieval arms' agreement) and returns a calibrated probability that the evidence
  answers the question. Below the shipped threshold (chosen for balanced accuracy on held-out articles)
  the answer declines, and :attr:`Verdict.signal` names the feature group that pulled the probability
  down the most (``decline_reason`` becomes ``answerability_<signal>``).

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
from ragwright.generate.evidence import labelled_unit
from ragwright.generate.features import ANSWER_FEATURES, SENTENCE_FEATURES, SIGNALS, answer_features
from ragwright.generate.question import code_names, name_key, words
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
ANSWERING_RULES: Final = frozenset({"expansion_defined", "name_labelled"})
RULE_SIGNALS: Final[Mapping[str, str]] = {
    "expansion_defined": "answer_type",
    "expansion_missing": "answer_type",
    "name_missing": "constraint",
    "name_labelled": "constraint",
    "name_unlabelled": "constraint",
}


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
    #: ``"name_missing"`` (declines, as a constraint miss): the question names something written as code
    #: ("max_workers", "--worker-tmp-dir", "hnsw.ef_search") that no source holds — a reference page's
    #: sections for *other* settings share its words ("max", "workers") and would answer for it. SQuAD holds
    #: no such names, so the model cannot have learnt this either. ``"name_labelled"`` (answers): the line
    #: labelled with the asked word ("Default: '127.0.0.1'." for "What is the default value of --host?",
    #: :func:`~ragwright.generate.evidence.labelled_unit`) is on the line, or under the heading, of every
    #: such name the question holds — the reference states the asked value of the asked setting;
    #: ``"name_unlabelled"`` (declines): the labelled value ends the line of another setting ("Default: 5"
    #: ending the line of ``--timeout-keep-alive``, for ``--timeout-graceful-shutdown``, whose line gives no
    #: default). A labelled line of its own is left to the model: its subject is not written beside it.
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
    names = code_names(ev.question.text)
    if names:
        sources = name_key(" ".join(f"{' '.join(r.chunk.section_path)} {r.chunk.text}" for r in results))
        if any(name_key(n).lstrip("_") not in sources for n in names):
            return "name_missing"
        labelled = labelled_unit(ev)
        if labelled is not None:
            unit = ev.units[labelled]
            line = name_key(f"{ev.title(labelled)} {unit.context} {unit.text}")
            if all(name_key(n).lstrip("_") in line for n in names):
                return "name_labelled"
            if unit.context:  # the asked label ends another setting's line: none is given for the one asked
                return "name_unlabelled"
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
