"""A retrieved chunk read as candidate answer lines (*units*): prose sentences and table rows.

A *unit* is a sentence of prose or a table row written with its header ("Header: value; …"). Lines
that never answer a question are left out: headings, title-like lines, navigation and "see also"
lines ("For duck as a food, see ."), link lists, rules drawn with dashes. A short line that is no
sentence (a date line, a docket line) leans on the lines around it (:func:`leans_on_neighbours`);
:mod:`ragwright.generate.evidence` reads it with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ragwright.chunk.split import sentences
from ragwright.model.results import SearchResult

MIN_WORDS: Final = 4
#: A line of at most this many words that does not end as a sentence is read with its neighbours.
SHORT_LINE_WORDS: Final = 8
_SENTENCE_END: Final = (".", "!", "?", "。")
#: A labelled value on a line of its own: "Default: true", "Environment Variable: POETRY_CACHE_DIR".
_FIELD: Final = re.compile(r"^(?P<label>[^\W\d_][\w-]*(?: [\w-]+){0,2}): +\S")
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
#: A reference marker ends where a word or sentence may: "black[d]'" or "x[1]=" is code, not a footnote
_REFERENCE: Final = re.compile(
    r"\s?\[(?:\d{1,4}(?:[,–-]\s?\d{1,4})*|[a-z]|note \d+|nb \d+|citation needed|clarification needed)\]"
    r"(?=[\s.,;:!?)\]\[]|$)",
    re.I,
)
_ABBREVIATION_END: Final = re.compile(
    r"(?:^|[\s(])(?:[A-Z]|No|Nos|v|vs|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Co|Corp|Ltd|Fig|Figs|Gen|Gov|Sen|Rep|"
    r"Lt|Col|Capt|Sgt|Rev|Hon|Vol|pp|ca|approx|e\.g|i\.e|U\.S|Ph\.D)\.$"
)
_LEAD_IN: Final = re.compile(r"[^\s:]:$")
#: A sentence that trails off into what follows: "… install the optional dependencies..." (then the command)
_TRAILING_LEAD_IN: Final = re.compile(r"\w(?:\.\.\.|…)$")
#: A line of code or a shell command: a prompt, an assignment, a call ("limits = httpx.Limits(…)", "$ pip …")
_CODE: Final = re.compile(r"^(?:\$|>>>|#!?)\s|^[\w.\[\]]+\s*[-+*/]?=\s*\S|\w\([^()]*\)\s*;?$")
#: A sentence that is one parenthetical remark ("(Default 100)"): it belongs to the sentence before it
_PARENTHETICAL: Final = re.compile(r"^\([^()]*\)[.!?]?$")
#: A "see" whose link was lost: "For duck as a food, see ." / "See:" — not a sentence that ends in "… can see."
_EMPTY_SEE: Final = re.compile(r"(?:^|[,;(]\s*)see\s*[.:]?\s*$|\bsee\s+\.", re.IGNORECASE)
_LEADERS: Final = re.compile(r"(?:\.\s){5,}|\.{5,}")
#: A rule drawn with spaced dashes or underscores ("- - - - - x"), decoration between the lines of a caption.
_DASH_RULE: Final = re.compile(r"(?:(?<=\s)|^)(?:[-–—_=]\s+){3,}[-–—_=](?=\s|$)")
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
    #: what the unit is about, matched with it: a table row's lead-in, caption or heading; a labelled value's
    #: line's first sentence ("--port <int> - Bind …" for the "Default: 8000." that ends that line)
    context: str = ""


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def clean_inline(text: str) -> str:
    """Markdown inline syntax removed: links keep their text, emphasis and code marks go, and so do
    reference markers ("Antarctica.[5]", "TableFormer [9]", "[citation needed]"): they are not
    numbers of the text (a "how many" question must not find its number in "[20]"); so do rules drawn
    with spaced dashes ("- - - - - x")."""
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _REFERENCE.sub("", text)
    text = _DASH_RULE.sub(" ", text)
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


def is_contents_chunk(text: str) -> bool:
    """Whether most of a chunk's text is table-of-contents lines (titles with leader dots to a page
    number): a source that only points elsewhere and answers nothing, however similar to a question.
    (A reference list is not one: its lines can quote the answer.)"""
    lines = [line.strip().strip("|").strip() for line in text.split("\n")]
    lines = [line for line in lines if line and not _TABLE_RULE.match(line)]
    return 2 * sum(len(line) for line in lines if _LEADERS.search(line)) > sum(len(line) for line in lines)


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
            if not was_item and not field_label(line) and (is_title_like(line) or _short_caption(line)):
                continue  # a title, label or short caption ("Table 1: EU Countries Information")
            sentences = _sentences(line)
            for k, sentence in enumerate(sentences):
                # a lead-in ("… could eat:") announces what follows; it answers nothing itself (a spaced
                # colon is a separator, as in a transcript's caption "v. : No. 07-1315 … :")
                if not is_navigation(sentence) and not _LEAD_IN.search(sentence):
                    # a labelled value further on in a line ("--port <int> - Bind to … **Default:** *8000*.")
                    # is the value of what the line's first sentence is about, not of the next line's
                    about = sentences[0] if k > 0 and field_label(sentence) else ""
                    out.append(("sentence", sentence, about))
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
    ("MICHAEL A." + "KNOWLES", "v. : No." + "07-1315 …", "John F." + "Kennedy"), a parenthetical remark
    kept with the sentence before it ("… or None for no limits." + "(Default 100)") and a one- or two-word
    reply with the sentence after it (:func:`_opens`)."""
    out: list[str] = []
    for sentence in sentences(line):
        if out and (_ABBREVIATION_END.search(out[-1]) or _PARENTHETICAL.match(sentence) or _opens(out[-1])):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _opens(sentence: str) -> bool:
    """Whether *sentence* is a one- or two-word reply that the next sentence explains ("Not yet." + "Black is
    a command line tool.", "Yes." + "There is support for PyPy 3.8 and higher."): alone it answers nothing
    a question could be matched with."""
    return len(sentence.split()) <= 2 and sentence.endswith(_SENTENCE_END)


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
    """Four words, or two when one holds a digit (a date line, "No. 07-1315") or a label names the value
    after it ("Default: true", "Type: string"); never a bare caption."""
    n = len(text.split())
    if n <= 8 and re.match(r"^(?:table|figure|fig\.|chart|listing|exhibit)\s*[0-9A-Z][\w.-]*\s*[:.]?$", text, re.I):
        return False
    return n >= MIN_WORDS or (n >= 2 and (any(c.isdigit() for c in text) or field_label(text) is not None))


def _short_caption(line: str) -> bool:
    return bool(_CAPTION.match(line)) and len(line.split()) <= 8


def field_label(text: str) -> str | None:
    """The label of a line that is one labelled value ("Default: true" → "Default"), or ``None`` (a caption
    such as "Table 2: …" is no labelled value)."""
    if _CAPTION.match(text.strip()):
        return None
    match = _FIELD.match(text.strip())
    return match.group("label") if match and len(text.split()) <= SHORT_LINE_WORDS else None


def row_labels(text: str) -> list[str]:
    """The header labels of a row written as "Header: value; …" ("# enc-layers", "TEDs simple")."""
    return [cell.split(": ", 1)[0] for cell in text.split("; ") if ": " in cell]


def leans_on_neighbours(unit: Unit) -> bool:
    """Whether *unit* is a short line that is no sentence — a date line, a docket line, a "Key: value"
    line of a header ("Tuesday, January 13, 2009", "v. : No. 07-1315 …") — which says what it holds but
    not what it is about: the lines around it do. A line of code is not one: its names say what it is
    about, and its neighbours' words ("(Default 5)") are not its own."""
    text = unit.text.rstrip()
    return (
        unit.kind == "sentence"
        and len(text.split()) <= SHORT_LINE_WORDS
        and not text.endswith(_SENTENCE_END)
        and not is_code(text)
    )


def is_code(line: str) -> bool:
    """Whether *line* reads as a line of code or a shell command rather than prose."""
    return bool(_CODE.search(line.strip()))


def trails_off(text: str) -> bool:
    """Whether *text* ends in an ellipsis after a word: it announces the line after it ("… make sure to
    install the optional dependencies..." before "$ pip install httpx[http2]"), which holds what it says."""
    return bool(_TRAILING_LEAD_IN.search(text.rstrip()))
