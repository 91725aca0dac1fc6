"""The candidate answer units of the retrieved sources, scored against a question.

The units (sentences and table rows, :mod:`ragwright.generate.lines`) keep their neighbours in the
same source so that coverage can look one sentence either side; a short line that is no sentence is
read with its neighbours, a table row under its lead-in, every line under its chunk's heading.

:func:`gather` embeds the question and every unit (an :class:`EmbeddingCache` keeps unit vectors
across questions: retrieved chunks repeat), then scores each unit with the sentence model
(:mod:`ragwright.generate.answerability`): embedding similarity, coverage of the question's terms,
whether the unit holds a new expression of the asked answer type, the source's rank.
"""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ragwright.generate.acronyms import abbreviation_stems, acronym_stems, acronyms_in, definitions, expansions
from ragwright.generate.lines import (
    MAX_UNITS_PER_SOURCE,
    MIN_WORDS,
    Unit,
    clean_inline,
    field_label,
    is_navigation,
    is_title_like,
    leans_on_neighbours,
    pieces,
    pieces_in_context,
    row_labels,
    units_of,
)
from ragwright.generate.question import (
    Question,
    content_stems,
    coverage,
    is_negated,
    names_whole,
    new_type_spans,
    stem,
)
from ragwright.model.results import SearchResult
from ragwright.models.embedders.base import Embedder

if TYPE_CHECKING:
    import numpy as np

    from ragwright.generate.answerability import LogisticModel

__all__ = [
    "MAX_UNITS_PER_SOURCE",
    "MIN_WORDS",
    "TYPED_ANSWERS",
    "EmbeddingCache",
    "Evidence",
    "Unit",
    "clean_inline",
    "gather",
    "is_navigation",
    "is_title_like",
    "leans_on_neighbours",
    "pieces",
    "pieces_in_context",
    "rescore",
    "row_labels",
    "units_of",
]

#: The answer types whose expressions a unit can be seen to hold (a date, a number, a name …).
TYPED_ANSWERS: Final = frozenset({"date", "time", "number", "person", "place", "reason", "expansion"})


class EmbeddingCache:
    """Unit vectors by text, least recently used out first (retrieved chunks repeat across questions)."""

    def __init__(self, max_entries: int = 50_000) -> None:
        self.max_entries = max_entries
        self._vectors: OrderedDict[tuple[str, str], Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        name = embedder.name
        missing = list(dict.fromkeys(t for t in texts if (name, t) not in self._vectors))
        if missing:
            fresh = embedder.embed_documents(missing)
            for text, vec in zip(missing, fresh, strict=True):
                self._vectors[(name, text)] = np.asarray(vec, dtype=np.float32)
            while len(self._vectors) > self.max_entries:
                self._vectors.popitem(last=False)
        rows = []
        for t in texts:
            self._vectors.move_to_end((name, t))
            rows.append(self._vectors[(name, t)])
        if not rows:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        return np.vstack(rows)


@dataclass
class Evidence:
    """The units of the sources scored against one question."""

    question: Question
    units: list[Unit]
    cosines: list[float]
    context_cosines: list[float]
    sequences: list[list[str]]
    stems: list[frozenset[str]]
    window_stems: list[frozenset[str]]
    coverage: list[float]
    window_coverage: list[float]
    type_hits: list[int]
    window_type_hits: list[int]
    scores: list[float] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    source_stems: frozenset[str] = frozenset()
    #: Each source's own heading (the last of its section path), by source number - 1.
    titles: list[str] = field(default_factory=list)

    @property
    def best(self) -> int | None:
        """Index of the best-scoring unit, or ``None`` when there are no units."""
        return self.order[0] if self.order else None

    def title(self, i: int) -> str:
        """The heading unit *i*'s source sits under ("" when it has none)."""
        source = self.units[i].source
        return self.titles[source - 1] if 0 < source <= len(self.titles) else ""

    def window(self, i: int) -> list[int]:
        """Unit *i* with its neighbours in the same source."""
        u = self.units[i]
        return [j for j in (i - 1, i, i + 1) if 0 <= j < len(self.units) and self.units[j].source == u.source]

    def window_cos(self, i: int) -> float:
        """The best similarity around unit *i*: its neighbours' and, for a table row, its table's context."""
        return max([self.cosines[j] for j in self.window(i)] + [self.context_cosines[i]])

    def bigram_cover(self, i: int) -> float:
        """The fraction of the question's neighbouring term pairs that stand within 3 terms of each other
        in unit *i* (1.0 for a one-term question): the question's phrasing, not just its words."""
        pairs = list(itertools.pairwise(content_stems(self.question.text)))
        if not pairs:
            return 1.0
        where: dict[str, list[int]] = {}
        for k, t in enumerate(self.sequences[i]):
            where.setdefault(t, []).append(k)
        near = sum(
            1
            for a, b in pairs
            if a in where and b in where and min(abs(x - y) for x in where[a] for y in where[b]) <= 3
        )
        return near / len(pairs)

    def window_negated(self, i: int) -> bool:
        return any(is_negated(self.units[j].text) for j in self.window(i))


def _part_stems(question: str, unit: Unit) -> frozenset[str]:
    """The stems of the parts of *unit*'s hyphenated words and, for a table row, the question words its
    header labels shorten ("enc" covers "encoder")."""
    parts = frozenset(content_stems(" ".join(w.replace("-", " ") for w in unit.text.split() if "-" in w)))
    if unit.kind != "row":
        return parts
    return parts | abbreviation_stems(question, " ".join(row_labels(unit.text)))


def _lead_stems(unit: Unit) -> frozenset[str]:
    """The stems of a table row's lead-in (none for other units): "Totals: 71,137" under "NICS Firearm
    Background Checks November - 2015" answers a question about November's NICS checks."""
    return frozenset(content_stems(unit.context)) if unit.kind == "row" and unit.context else frozenset()


def _read_as(units: Sequence[Unit], i: int, heading: str = "") -> str:
    """The text unit *i* is matched as: a table row under its lead-in ("Things a duck could eat: Leaves;
    Food: Ash, Elm, Maple"), whose words say what the row is about; a labelled value further on in a line
    under that line's first sentence; a short line that leans on its neighbours
    (:func:`leans_on_neighbours`) with them, and a labelled value ("Default: 0") under its *heading* too
    (the setting it is the default of); any other unit as written."""
    unit = units[i]
    if unit.context:  # a row under its lead-in; a labelled value under its line's subject
        return f"{unit.context} {unit.text}"
    if leans_on_neighbours(unit):
        near = " ".join(units[j].text for j in _window(units, i))
        return f"{heading}: {near}" if heading and field_label(unit.text) else near
    return unit.text


def _window(units: Sequence[Unit], i: int) -> list[int]:
    """Unit *i* with its neighbours in the same source."""
    return [j for j in (i - 1, i, i + 1) if 0 <= j < len(units) and units[j].source == units[i].source]


def _heading_stems(path: str) -> frozenset[str]:
    return frozenset(content_stems(path)) | frozenset(content_stems(re.sub(r"[-_]", " ", path)))


def gather(
    question: Question,
    results: Sequence[SearchResult],
    embedder: Embedder,
    cache: EmbeddingCache | None = None,
    model: LogisticModel | None = None,
) -> Evidence:
    """Score every unit of *results* against *question* (see the module docstring)."""
    import numpy as np

    units = units_of(results)
    seqs = [content_stems(u.text) for u in units]
    # a unit also matches the question words its acronyms stand for (and the question's acronym it spells out)
    stems = [frozenset(seq) | acronym_stems(question.text, u.text) for seq, u in zip(seqs, units, strict=True)]
    # a hyphenated word also holds its parts ("enc-layers": layers); a table header its clipped words ("enc")
    stems = [s | _part_stems(question.text, u) for s, u in zip(stems, units, strict=True)]
    # a chunk's heading path says what its lines are about: its words count around each of them, a name
    # written as code ("installer.max-workers") both whole and in its parts
    headings = [_heading_stems(" ".join(r.chunk.section_path)) for r in results]
    window_stems: list[frozenset[str]] = []
    for i, u in enumerate(units):
        near = [stems[j] for j in _window(units, i)] + [headings[u.source - 1]]
        if u.context:
            near.append(frozenset(content_stems(u.context)))
        window_stems.append(frozenset().union(*near))
    # a short line that leans on its neighbours holds their words too (a date line under "oral argument")
    stems = [window_stems[i] if leans_on_neighbours(u) else stems[i] for i, u in enumerate(units)]
    # a table row is read under its lead-in (a title or caption line): the lead-in's words are the row's
    stems = [s | _lead_stems(u) for s, u in zip(stems, units, strict=True)]
    contexts = list(dict.fromkeys(u.context for u in units if u.context))
    titles = [r.chunk.section_path[-1] if r.chunk.section_path else "" for r in results]
    if units:
        qvec = np.asarray(embedder.embed_query(question.text), dtype=np.float32)
        read_as = [_read_as(units, i, titles[u.source - 1]) for i, u in enumerate(units)]
        read = [i for i, u in enumerate(units) if read_as[i] != u.text]
        texts = [u.text for u in units] + contexts + [read_as[i] for i in read]
        scores = [float(x) for x in (cache or EmbeddingCache()).vectors(embedder, texts) @ qvec]
        cosines = scores[: len(units)]
        for i, cos in zip(read, scores[len(units) + len(contexts) :], strict=True):
            cosines[i] = max(cosines[i], cos)  # a row under its lead-in, a short line with its neighbours
        by_context = dict(zip(contexts, scores[len(units) : len(units) + len(contexts)], strict=True))
        context_cos = [by_context.get(u.context, -1.0) for u in units]
    else:
        cosines, context_cos = [], []
    type_hits = [len(new_type_spans(question, u.text)) for u in units]
    window_type = []
    for i, u in enumerate(units):
        near_hits = [type_hits[j] for j in (i - 1, i, i + 1) if 0 <= j < len(units) and units[j].source == u.source]
        window_type.append(sum(near_hits))
    ev = Evidence(
        question=question,
        units=units,
        cosines=cosines,
        context_cosines=context_cos,
        sequences=seqs,
        stems=stems,
        window_stems=window_stems,
        coverage=[coverage(question.terms, s) for s in stems],
        window_coverage=[coverage(question.terms, s) for s in window_stems],
        type_hits=type_hits,
        window_type_hits=window_type,
        source_stems=frozenset(content_stems(" ".join(r.chunk.text for r in results))).union(*headings),
        titles=titles,
    )
    return rescore(ev, model)


def rescore(ev: Evidence, model: LogisticModel | None = None) -> Evidence:
    """Score and rank *ev*'s units with the sentence model (the shipped one unless given)."""
    from ragwright.generate.answerability import sentence_model
    from ragwright.generate.features import unit_features

    m = model or sentence_model()
    # a question in the prose ("Why settle on double quotes?") asks; the sentences after it answer (a table
    # row is data, whatever its last cell ends with)
    ev.scores = [0.0 if _asks(ev.units[i]) else m.probability(unit_features(ev, i)) for i in range(len(ev.units))]
    ev.order = sorted(range(len(ev.units)), key=lambda i: (-ev.scores[i], ev.units[i].source, ev.units[i].index))
    typed = _typed_rival(ev)
    if typed is not None:
        ev.order.remove(typed)
        ev.order.insert(0, typed)
    return ev


def _asks(unit: Unit) -> bool:
    return unit.kind == "sentence" and unit.text.rstrip().endswith("?")


def _spelled_out(ev: Evidence) -> int | None:
    """For "What does RCAC stand for?": the best-scoring unit that spells out the asked acronym ("Row and
    Column Access Control (RCAC)"), when the best-scoring unit does not — that line is the answer. A unit
    that writes the expansion beside the acronym (:func:`definitions`) comes before one whose words merely
    share its initials somewhere."""
    asked = acronyms_in(ev.question.text)
    defining = [j for j in ev.order if any(definitions(a, ev.units[j].text) for a in asked)]
    spells = defining or [j for j in ev.order if any(expansions(a, ev.units[j].text) for a in asked)]
    return spells[0] if spells and spells[0] != ev.order[0] else None


def _typed_rival(ev: Evidence) -> int | None:
    """The unit to rank first instead of the best-scoring one, if any: when the question asks for a type
    (a number, a date, a name …) that the best unit lacks, the best-scoring unit that holds one, covers
    more of the question's terms and its constraints (names, numbers, qualifiers) at least as well
    ("What score … with 6 encoder layers?": the table row with the scores, not the sentence about them).
    Equal coverage leaves the model's choice alone."""
    if not ev.order or ev.question.answer_type not in TYPED_ANSWERS:
        return None
    if ev.question.answer_type == "expansion":
        return _spelled_out(ev)
    if ev.type_hits[ev.order[0]] > 0:
        return None
    best, keys = ev.order[0], ev.question.key_terms
    for j in ev.order[1:]:
        if (
            ev.type_hits[j] > 0
            and ev.coverage[j] > ev.coverage[best]
            and coverage(keys, ev.stems[j]) >= coverage(keys, ev.stems[best])
        ):
            return j
    return None


def labelled_unit(ev: Evidence) -> int | None:
    """A line that labels its value with the very word asked for ("Default: true" for "What is the default
    value of installer.parallel?", "Environment Variable: POETRY_CACHE_DIR" for "Which environment variable
    sets …?") answers outright when its window (its neighbours and heading) covers the question as well as
    any unit does: the answer quotes it (the gate still reads the model's ranking). Of such lines, the one
    under a heading the question names whole ("Default: 2048" under "backlog" for "What is the default
    backlog?", not the one under "enable_backlog_metric"), then the one whose own line (with the sentence
    it ends and its heading) covers most of the question, then the one whose window holds most of the
    question's names (the setting asked about), then the best-scoring; or ``None``."""
    if not ev.order:
        return None
    terms, best_window = set(ev.question.terms), max(ev.window_coverage)
    value = frozenset({stem("value")})
    found = []
    for rank, i in enumerate(ev.order):
        label = field_label(ev.units[i].text)
        stems = set(content_stems(label)) if label else set()
        # a labelled line states a value by its form: "Default: '127.0.0.1'" is the default *value* asked for
        if stems and stems <= terms and coverage(ev.question.terms, ev.window_stems[i] | value) >= best_window:
            unit = ev.units[i]
            title = ev.title(i)
            named = names_whole(ev.question.text, title)
            # its own line: the label, the line it ends ("--ws-max-queue <int> - Set the maximum length of
            # the WebSocket incoming message queue. **Default:** *32*.") and its heading — not the next line
            line = frozenset(ev.sequences[i]) | frozenset(content_stems(unit.context)) | _heading_stems(title)
            line_cover = coverage(ev.question.terms, line | value)
            found.append((named, line_cover, coverage(ev.question.key_terms, ev.window_stems[i]), -rank, i))
    # the line under the setting the question names ("Default:" under "DeflateAlterETag") before another's
    return max(found)[-1] if found else None
