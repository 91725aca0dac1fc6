"""The candidate answer units of the retrieved sources, scored against a question.

A *unit* is a sentence of prose or a table row written with its header ("Header: value; …"). Lines
that never answer a question are left out: headings, title-like lines, navigation and "see also"
lines ("For duck as a food, see ."), link lists. Each unit keeps its neighbours in the same source so
that coverage can look one sentence either side.

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

from ragwright.chunk.split import sentences
from ragwright.generate.acronyms import acronym_stems
from ragwright.generate.question import Question, content_stems, coverage, is_negated, new_type_spans
from ragwright.model.results import SearchResult
from ragwright.models.embedders.base import Embedder

if TYPE_CHECKING:
    import numpy as np

    from ragwright.generate.answerability import LogisticModel

MIN_WORDS: Final = 4
MAX_UNITS_PER_SOURCE: Final = 60
_TABLE_RULE: Final = re.compile(r"^\|?[\s:|-]+\|?$")
_HEADING: Final = re.compile(r"^\s{0,3}#{1,6}\s")
_LIST_MARK: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS: Final = re.compile(r"(\*{1,3}|_{2,3}|`+)(?=\S)(.+?)(?<=\S)\1")
_NAVIGATION: Final = re.compile(
    r"^(?:see also\b|main articles?:|further information:|for (?:other uses|more|the|a|an)\b.*,\s*see\b|"
    r"this article is about\b|jump to\b|retrieved from\b|navigation menu\b|edit\s*$|external links?\b|"
    r"references?\s*$|\^|categories:|hidden categories)",
    re.IGNORECASE,
)
_REFERENCE: Final = re.compile(
    r"\s?\[(?:\d{1,4}(?:[,–-]\s?\d{1,4})*|[a-z]|note \d+|nb \d+|citation needed|clarification needed)\]", re.I
)
_ABBREVIATION_END: Final = re.compile(
    r"(?:^|[\s(])(?:[A-Z]|No|Nos|v|vs|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Co|Corp|Ltd|Fig|Figs|Gen|Gov|Sen|Rep|"
    r"Lt|Col|Capt|Sgt|Rev|Hon|Vol|pp|ca|approx|e\.g|i\.e|U\.S|Ph\.D)\.$"
)
_LEAD_IN: Final = re.compile(r"[^\s:]:$")
_EMPTY_SEE: Final = re.compile(r"\bsee\s*[.:]?\s*$|\bsee\s+\.", re.IGNORECASE)
_LEADERS: Final = re.compile(r"(?:\.\s){5,}|\.{5,}")
_CAPTION: Final = re.compile(r"^(?:table|figure|fig\.|chart|listing|exhibit)\s*[0-9A-Z][\w.-]*\s*[:.]", re.IGNORECASE)
_RECORD: Final = re.compile(r"^[^:;|]{1,60}: [^;]+(?:; [^:;|]{1,60}: [^;]*)+$")
_NUMERIC_CELL: Final = re.compile(r"^[\s\d.,%()+\-–−$€£]+$")
_END: Final = (".", "!", "?", "。", ":", ";", ")", '"', "”")


@dataclass(frozen=True, slots=True)
class Unit:
    """One candidate answer: ``source`` is 1-based (``[Source N]``), ``index`` its place in the source."""

    source: int
    index: int
    text: str
    kind: str = "sentence"
    context: str = ""  # a table row's lead-in, caption or heading (matched, never quoted)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def clean_inline(text: str) -> str:
    """Markdown inline syntax removed: links keep their text, emphasis and code marks go, and so do
    reference markers ("Antarctica.[5]", "TableFormer [9]", "[citation needed]"): they are not
    numbers of the text (a "how many" question must not find its number in "[20]")."""
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _REFERENCE.sub("", text)
    return " ".join(text.split())


def is_title_like(line: str) -> bool:
    """A short line without final punctuation whose words are mostly capitalised (a title or label)."""
    words = line.split()
    if not words or len(words) > 10 or line.rstrip().endswith(_END) or any(c.isdigit() for c in line):
        return False
    long_words = [w for w in words if len(w) > 3] or words
    caps = sum(1 for w in long_words if w[:1].isupper() or not w[:1].isalpha())
    return caps / len(long_words) >= 0.6 or len(words) <= 3


def is_navigation(line: str) -> bool:
    """A navigation, "see also" or link-list line: it points elsewhere and answers nothing."""
    text = line.strip()
    return bool(_NAVIGATION.search(text) or _EMPTY_SEE.search(text) or _LEADERS.search(text))


def pieces(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of a chunk: prose sentences and self-describing table rows, in order.

    Headings, title-like lines, navigation and link-only lines are dropped.
    """
    return [(kind, piece) for kind, piece, _ in pieces_in_context(text)]


def pieces_in_context(text: str) -> list[tuple[str, str, str]]:
    """:func:`pieces` with each table row's context: the line just before its table (a lead-in such as
    "Here are some things a duck could eat:", a caption or a heading), which says what the rows are."""
    lines = text.split("\n")
    out: list[tuple[str, str, str]] = []
    header: list[str] | None = None
    merging = False
    before = ""  # the last line outside a table
    context = ""
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line.startswith("|"):
            header = None
            if line:
                before = clean_inline(_HEADING.sub("", line))
            if not line or _HEADING.match(line):
                continue
            was_item = bool(_LIST_MARK.match(line))
            line = clean_inline(_LIST_MARK.sub("", line))
            if not line or is_navigation(line):
                continue
            if _RECORD.match(line):  # a spreadsheet row written as "Header: value; …"
                out.append(("row", line, ""))
                continue
            if not was_item and (is_title_like(line) or (_CAPTION.match(line) and len(line.split()) <= 8)):
                continue  # a title, label or short caption ("Table 1: EU Countries Information")
            for sentence in _sentences(line):
                # a lead-in ("… could eat:") announces what follows; it answers nothing itself (a spaced
                # colon is a separator, as in a transcript's caption "v. : No. 07-1315 … :")
                if not is_navigation(sentence) and not _LEAD_IN.search(sentence):
                    out.append(("sentence", sentence, ""))
            continue
        if _TABLE_RULE.match(line):
            continue
        if header is None:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _TABLE_RULE.match(nxt):
                header = [clean_inline(c) for c in _cells(line)]
                merging = True
                context = before
                continue
            context = before
            header = []
        cells = [clean_inline(c) for c in _cells(line)]
        if any(is_navigation(c) for c in cells):
            continue  # a table-of-contents row
        if merging and header and _continues_header(header, cells):
            # a second header row: "TEDs" over "simple | complex" reads "TEDs simple"; a cell that
            # repeats the header above it ("# enc-layers" under "# enc-layers") is said once
            header = [h if c == h else f"{h} {c}".strip() for h, c in zip(header, cells, strict=True)]
            continue
        merging = False
        if header and len(header) == len(cells):
            pairs = [(h, c) for h, c in zip(header, cells, strict=True) if c]
            out.append(("row", "; ".join(f"{h}: {c}" if h else c for h, c in pairs), context))
        else:
            out.append(("row", " | ".join(c for c in cells if c), context))
    return out


def _sentences(line: str) -> list[str]:
    """The sentences of a prose line, with the splits after an initial or an abbreviation undone
    ("MICHAEL A." + "KNOWLES", "v. : No." + "07-1315 …", "John F." + "Kennedy")."""
    out: list[str] = []
    for sentence in sentences(line):
        if out and _ABBREVIATION_END.search(out[-1]):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _continues_header(header: list[str], cells: list[str]) -> bool:
    """Whether *cells*, the row under *header*, is a second header row: no numbers, and gaps in it or a
    mostly empty first row; or a row that repeats a header cell in its column ("# enc-layers" under
    "# enc-layers") whose other cells are mostly words ("simple", "complex", "(0.75)", "time (secs)")."""
    if len(cells) != len(header):
        return False
    if not any(ch.isdigit() for c in cells for ch in c):
        return "" in cells or 2 * sum(not h for h in header) > len(header)
    repeats = sum(1 for h, c in zip(header, cells, strict=True) if c and c == h)
    rest = [c for h, c in zip(header, cells, strict=True) if c and c != h]
    numeric = sum(1 for c in rest if _NUMERIC_CELL.match(c))
    return repeats >= 1 and bool(rest) and 2 * numeric < len(rest)


def units_of(results: Sequence[SearchResult]) -> list[Unit]:
    """The candidate units of every source, each source's in order (short fragments dropped)."""
    units: list[Unit] = []
    for n, result in enumerate(results, start=1):
        kept = [(k, p, c) for k, p, c in pieces_in_context(result.chunk.text) if k == "row" or _long_enough(p)]
        units.extend(Unit(n, i, p, k, c) for i, (k, p, c) in enumerate(kept[:MAX_UNITS_PER_SOURCE]))
    return units


def _long_enough(text: str) -> bool:
    """Four words, or two when one holds a digit (a date line, "No. 07-1315"); never a bare caption."""
    n = len(text.split())
    if n <= 8 and re.match(r"^(?:table|figure|fig\.|chart|listing|exhibit)\s*[0-9A-Z][\w.-]*\s*[:.]?$", text, re.I):
        return False
    return n >= MIN_WORDS or (n >= 2 and any(c.isdigit() for c in text))


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

    @property
    def best(self) -> int | None:
        """Index of the best-scoring unit, or ``None`` when there are no units."""
        return self.order[0] if self.order else None

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


def _read_as(unit: Unit) -> str:
    """The text a unit is matched as: a table row under its lead-in ("Things a duck could eat: Leaves;
    Food: Ash, Elm, Maple"), whose words say what the row is about; any other unit as written."""
    return f"{unit.context} {unit.text}" if unit.kind == "row" and unit.context else unit.text


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
    window_stems: list[frozenset[str]] = []
    for i, u in enumerate(units):
        near = [stems[j] for j in (i - 1, i, i + 1) if 0 <= j < len(units) and units[j].source == u.source]
        if u.context:
            near.append(frozenset(content_stems(u.context)))
        window_stems.append(frozenset().union(*near))
    contexts = list(dict.fromkeys(u.context for u in units if u.context))
    if units:
        qvec = np.asarray(embedder.embed_query(question.text), dtype=np.float32)
        read = [i for i, u in enumerate(units) if _read_as(u) != u.text]
        texts = [u.text for u in units] + contexts + [_read_as(units[i]) for i in read]
        scores = [float(x) for x in (cache or EmbeddingCache()).vectors(embedder, texts) @ qvec]
        cosines = scores[: len(units)]
        for i, cos in zip(read, scores[len(units) + len(contexts) :], strict=True):
            cosines[i] = max(cosines[i], cos)  # a row read under its lead-in, when that matches better
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
        source_stems=frozenset(content_stems(" ".join(r.chunk.text for r in results))),
    )
    return rescore(ev, model)


def rescore(ev: Evidence, model: LogisticModel | None = None) -> Evidence:
    """Score and rank *ev*'s units with the sentence model (the shipped one unless given)."""
    from ragwright.generate.answerability import sentence_model, unit_features

    m = model or sentence_model()
    ev.scores = [m.probability(unit_features(ev, i)) for i in range(len(ev.units))]
    ev.order = sorted(range(len(ev.units)), key=lambda i: (-ev.scores[i], ev.units[i].source, ev.units[i].index))
    return ev
