"""Extractive answers: quote the sentence (or table row) that answers the question, cited.

A real answer mode, not a placeholder: it never states anything the sources do not say and cites every
quote with ``[Source N]`` (N = the source's position in ``RagResponse.sources``).

1. The sources are cut into candidate units (:mod:`ragwright.generate.evidence`): sentences and table
   rows with their header; headings, titles, navigation and "see also" lines never answer.
2. The sentence model ranks the units: similarity to the question, coverage of its terms (in the unit
   and its neighbours), a new expression of the asked answer type (a date for *when*, a number for
   *how many* …), the source's rank.
3. The answerability model (:mod:`ragwright.generate.answerability`) decides whether the best evidence
   answers the question; if not, the answer declines with ``decline_reason`` naming the signal
   (``answerability_constraint``, ``answerability_coverage`` …). With ``RagOptions.answerability="off"``
   the older similarity floor (``extractive_min_similarity``) decides instead.
4. The answer is the best unit; a second one only when the first is not enough (it lacks the asked
   answer type and a neighbouring sentence holds it, the sentence model is nearly as sure of
   another unit, or a "which <thing>" question's best sentence names nothing and its neighbour does).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import Final

from ragwright.generate.answerability import applies_to, judge
from ragwright.generate.evidence import (
    EmbeddingCache,
    Evidence,
    gather,
    labelled_unit,
    leans_on_neighbours,
    pieces,
    row_labels,
)
from ragwright.generate.lines import trails_off
from ragwright.generate.options import RagOptions
from ragwright.generate.question import Question, analyze, is_code_name, new_type_spans
from ragwright.model.results import Citation, RagResponse, SearchResult
from ragwright.models.embedders.base import Embedder

NO_SOURCES: Final = "I could not find any relevant information in the indexed documents."
NOT_SUPPORTED: Final = (
    "I could not find an answer to this in the indexed documents. The closest passages are listed as sources."
)
_TYPED: Final = frozenset({"date", "time", "number", "person", "place", "reason"})
#: "Which family …", "In which year …", "What material …" (not "What is …"): a question for a named thing.
_WHICH_THING: Final = re.compile(
    r"^\s*(?:(?:in|on|at|from|to|by|of|for) )?(?:which|what) "
    r"(?!(?:is|was|are|were|did|does|do|has|have|had|can|could|would|will|should)\b)\w+",
    re.IGNORECASE,
)


def _new_names(q: Question, ev: Evidence, i: int) -> list[str]:
    """The names of unit *i* that the question does not hold (a "which thing" question's answer)."""
    return new_type_spans(replace(q, answer_type="person"), ev.units[i].text)


def _naming_heading(ev: Evidence, chosen: list[int], sources: Sequence[SearchResult]) -> str | None:
    """The heading to name in a "which thing" answer whose first quoted unit names nothing new: that unit's
    section heading when it is one name written as code that the question lacks ("Which setting makes
    Poetry create the virtualenv inside the project?": "virtualenvs.in-project: Create the virtualenv
    inside the project's root directory.") — the section is about that thing, so it is what was asked."""
    q = ev.question
    if not chosen or q.answer_type != "other" or not _WHICH_THING.match(q.text):
        return None
    if _new_names(q, ev, chosen[0]):  # a second line's "DDOS" is not what the first one is about
        return None
    path = sources[ev.units[chosen[0]].source - 1].chunk.section_path
    heading = path[-1].strip().strip("`") if path else ""
    if not heading or not is_code_name(heading) or heading.casefold() in q.text.casefold():
        return None
    return heading


def _subject(ev: Evidence, i: int) -> int | None:
    """For a labelled value further on in a line (its context: the line's first sentence), that sentence's
    unit in the same source, or ``None``."""
    unit = ev.units[i]
    if unit.kind == "row" or not unit.context:
        return None
    same = [j for j in range(i - 1, -1, -1) if ev.units[j].source == unit.source]
    return next((j for j in same if ev.units[j].text == unit.context), None)


def _pieces(text: str) -> list[str]:
    """The candidate texts of a chunk (kept for callers of the old helper)."""
    return [p for _, p in pieces(text)]


def _twin_row(ev: Evidence, best: int) -> int | None:
    """Another table row that the question cannot tell from the best one: the same header labels, the
    same question terms matched, and the asked type held by both ("How many … have the Maple Leafs
    won?" over two sheets, "Stanley Cups Since 67" and "Stanley Cups", each with a Maple Leafs row):
    quoting one would pick between them silently."""
    unit = ev.units[best]
    labels = row_labels(unit.text)
    if unit.kind != "row" or not labels:
        return None
    terms = frozenset(ev.question.terms)
    matched = terms & ev.stems[best]
    for j in ev.order[1:]:
        other = ev.units[j]
        if (
            other.kind == "row"
            and other.text != unit.text
            and row_labels(other.text) == labels
            and terms & ev.stems[j] == matched
            and (ev.type_hits[j] > 0) == (ev.type_hits[best] > 0)
        ):
            return j
    return None


def choose_units(ev: Evidence, max_units: int, relative_floor: float = 0.7) -> list[int]:
    """The unit(s) to quote: the best one, and a second only when the first is not enough.

    The first is not enough when the question asks for a type (a date, a number, a name …) that it
    lacks while a neighbouring sentence holds one, or when the sentence model is nearly as sure of
    another unit (its score at least *relative_floor* of the best — ``RagOptions.extractive_relative_floor``,
    0.7 measured on the training articles: a second unit then holds the answer often enough to be
    worth quoting; after a labelled value, a unit of the same source only), or when it is a short line
    that leans on its neighbours (a docket line: the line beside it that holds most of the question's
    terms says what it is about), or when the question
    cannot tell two table rows apart (:func:`_twin_row`), or — failing all — when a "which/what
    <thing>" question's best sentence names nothing the question does not and a neighbouring sentence
    does ("Which research centre debunked the myth?": "A common urban legend claims …" then "This myth
    was first debunked by the Acoustics Research Centre …").
    """
    best = labelled = labelled_unit(ev)
    if best is None:
        best = ev.best
    if best is None:
        return []
    chosen = [best]
    if max_units >= 2:
        q = ev.question
        nxt = best + 1
        if trails_off(ev.units[best].text) and nxt < len(ev.units) and ev.units[nxt].source == ev.units[best].source:
            chosen.append(nxt)  # "… install the optional dependencies..." then "$ pip install httpx[http2]"
        if len(chosen) == 1 and (about := _subject(ev, best)) is not None:
            chosen.append(about)  # "Default: 32." ending a flag's line: quoted with that line's first sentence
        if len(chosen) == 1 and q.answer_type in _TYPED and ev.type_hits[best] == 0:
            near = [j for j in ev.window(best) if j != best and ev.type_hits[j] > 0]
            if near:
                chosen.append(max(near, key=lambda j: ev.scores[j]))
        if len(chosen) == 1 and leans_on_neighbours(ev.units[best]):
            # a date or docket line alone does not say what it is about: quote the line beside it that does
            near = [j for j in ev.window(best) if j != best and not leans_on_neighbours(ev.units[j])]
            if near:
                chosen.append(max(near, key=lambda j: (ev.coverage[j], ev.scores[j])))
        # the runner-up (after a labelled value: one of its own section, never another setting's line)
        rivals = [
            j for j in ev.order if j != best and (labelled is None or ev.units[j].source == ev.units[best].source)
        ]
        if len(chosen) == 1 and rivals and ev.scores[rivals[0]] >= relative_floor * ev.scores[best]:
            chosen.append(rivals[0])
        if len(chosen) == 1 and (twin := _twin_row(ev, best)) is not None:
            chosen.append(twin)
        if len(chosen) == 1 and q.answer_type == "other" and _WHICH_THING.match(q.text) and not _new_names(q, ev, best):
            # "Which research centre …?" asks for a named thing: a best sentence naming nothing new is
            # not enough when its neighbour names one
            near = [j for j in ev.window(best) if j != best and _new_names(q, ev, j)]
            if near:
                chosen.append(max(near, key=lambda j: ev.scores[j]))
    return sorted(chosen, key=lambda j: (ev.units[j].source, ev.units[j].index))


class ExtractiveAnswerer:
    """Quotes the unit that answers the question, or declines (see the module docstring)."""

    mode = "extractive"

    def __init__(self, embedder: Embedder, *, cache: EmbeddingCache | None = None) -> None:
        self.embedder = embedder
        self.cache = cache if cache is not None else EmbeddingCache()

    def run(
        self, question: str, results: Sequence[SearchResult], options: RagOptions, *, streaming: bool = False
    ) -> Generator[str, None, RagResponse]:
        """The answer as one delta, then the response (the streaming interface of every answerer)."""
        response = self.answer(question, list(results), options)
        if response.answer:
            yield response.answer
        return response

    def _decline(self, sources: tuple[SearchResult, ...], reason: str, p: float | None = None) -> RagResponse:
        return RagResponse(
            NOT_SUPPORTED, sources, declined=True, mode=self.mode, decline_reason=reason, answerability=p
        )

    def answer(self, question: str, results: list[SearchResult], options: RagOptions) -> RagResponse:
        sources = tuple(results)
        if not sources:
            return RagResponse(NO_SOURCES, sources, declined=True, mode=self.mode, decline_reason="no_sources")
        ev = gather(analyze(question), sources, self.embedder, self.cache)
        if ev.best is None:
            return self._decline(sources, "no_supporting_sentence")
        probability = None
        if options.answerability == "model" and applies_to(self.embedder.name):
            verdict = judge(ev, sources, threshold=options.answerability_threshold)
            probability = verdict.probability
            if not verdict.answerable:
                return self._decline(sources, verdict.decline_reason, probability)
        elif max(ev.cosines) < options.extractive_min_similarity:
            return self._decline(sources, "no_supporting_sentence")
        parts, citations = [], []
        chosen = choose_units(ev, options.max_answer_sentences, options.extractive_relative_floor)
        heading = _naming_heading(ev, chosen, sources)
        for i in chosen:
            unit = ev.units[i]
            text = unit.text.rstrip(" :;,")  # "… MIRZAYANCE. :" quoted as "… MIRZAYANCE."
            text = text if text.endswith((".", "!", "?", "。")) else text + "."
            if heading is not None:
                text, heading = f"{heading}: {text}", None
            parts.append(f"{text} [Source {unit.source}]")
            chunk = sources[unit.source - 1].chunk
            citations.append(Citation(unit.source, chunk.id, chunk.document_id, unit.text))
        return RagResponse(
            " ".join(parts), sources, tuple(citations), declined=False, mode=self.mode, answerability=probability
        )
