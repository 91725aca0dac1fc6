"""What a question asks for: its answer type, focus terms and constraints (no model, a few regexes).

:func:`analyze` reads an English question into a :class:`Question`:

* ``answer_type`` — ``date`` (when, what year …), ``time`` (what time), ``number`` (how many/much,
  what percentage …), ``person`` (who, whose …), ``place`` (where, which country …), ``reason`` (why),
  ``manner`` (how …), ``yesno`` (is/does/can …) or ``other`` (what/which …);
* ``terms`` — the content words (stemmed, stop words dropped), the question's focus;
* ``entities`` — capitalised or quoted names, ``numbers`` — numerals and years, ``qualifiers`` —
  words that narrow the question (first, only, largest …), ``negated`` — a ``not``/``never``.

:func:`type_spans` finds the expressions of an answer type in a passage (dates, numbers, names …):
the extractive answerer and the answerability model look for one the question does not already hold.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

AnswerType = Literal["date", "time", "number", "person", "place", "reason", "manner", "expansion", "yesno", "other"]
ANSWER_TYPES: Final[tuple[AnswerType, ...]] = (
    "expansion",
    "date",
    "time",
    "number",
    "person",
    "place",
    "reason",
    "manner",
    "yesno",
    "other",
)

_WORD: Final = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ0-9]+(?:['’.-][A-Za-zÀ-ÖØ-öø-ÿ0-9]+)*")
_MONTHS: Final = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
# a year never ends a numeric code ("No. 07-1315", "555-2010"); a range "1914-1918" keeps its first year
_DATE: Final = re.compile(
    rf"\b(?:(?<![0-9]-)(?:1[0-9]{{3}}|20[0-9]{{2}})s?|"
    rf"[0-9]{{1,2}}(?:st|nd|rd|th)(?:\s+(?:and|or|to)\s+[0-9]{{1,2}}(?:st|nd|rd|th))?[- ]centur(?:y|ies)|[0-9]{{2,4}}s|"
    rf"(?:{_MONTHS})\.?\s+[0-9]{{1,2}}|[0-9]{{1,2}}\s+(?:{_MONTHS})\b|(?:{_MONTHS})\b|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}|"
    r"(?:[0-9]+|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)"
    r"[- ](?:century|centuries|millennium)|(?:BC|AD|BCE|CE)\b)",
    re.IGNORECASE,
)
_TIME: Final = re.compile(
    r"\b[0-9]{1,2}[:.][0-9]{2}\b|\b[0-9]{1,2}\s*(?:a\.?m\.?|p\.?m\.?)|\bnoon\b|\bmidnight\b", re.I
)
_NUMBER_WORDS: Final = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|hundreds|"
    "thousand|thousands|million|millions|billion|billions|trillion|dozen|dozens|half|several|many|few|"
    "once|twice|single|double|triple"
)
_NUMBER: Final = re.compile(rf"\b[0-9][0-9,.]*\b|%|\b(?:{_NUMBER_WORDS})\b", re.IGNORECASE)
_REASON: Final = re.compile(
    r"\b(?:because|due to|since|as a result|in order to|so that|so as to|caused by|owing to|thanks to|"
    r"therefore|thus|hence|led to|lead to|leads to|result(?:s|ed)? in|reason|to prevent|to avoid|to allow|"
    r"to ensure|to protect|to help|for the purpose)\b",
    re.IGNORECASE,
)
_NAME: Final = re.compile(r"\b[A-ZÀ-ÖØ-Þ][\w'’.-]*(?:\s+(?:of|de|du|von|van|the|and|&)?\s*[A-ZÀ-ÖØ-Þ][\w'’.-]*)*")
_NUMERAL: Final = re.compile(r"^[0-9][0-9,.]*(?:s|'s|’s|st|nd|rd|th)?$")  # 1917, 3.5, 1990s, 10th — not "10-K"
_QUOTED: Final = re.compile(r"[\"“]([^\"”]{2,60})[\"”]")
# "Row and Column Access Control (RCAC)": a capitalised phrase with its acronym in parentheses.
_EXPANSION: Final = re.compile(
    r"\b([A-ZÀ-ÖØ-Þ][\w-]*(?:\s+(?:and|of|for|the|in|on|to|&|[A-ZÀ-ÖØ-Þ][\w-]*))*\s*\([A-Z][A-Za-z0-9&-]{1,12}\))"
)
#: A condition clause of a question ("… when Click cannot open the file?", "If it does not start, …"): a
#: negation inside it sets the scene; it does not negate what is asked.
_CONDITION: Final = re.compile(
    r"\b(?:when|whenever|if|unless)\b(?!\s+(?:is|was|are|were|do|does|did|has|have|had|will|would|can|could|"
    r"should|shall|may|might|must)\b)[^,?]*",
    re.IGNORECASE,
)
_NEGATION: Final = re.compile(
    r"\b(?:not|no|never|none|nor|neither|without|except|excluding|n't|cannot|unable|fail(?:ed|s)? to)\b", re.I
)
_QUALIFIER_WORDS: Final = (
    "first last only main largest smallest biggest longest shortest highest lowest most least best worst "
    "earliest latest oldest newest youngest major minor primary original final previous next former "
    "current second third entire total average maximum minimum"
)
QUALIFIERS: Final = frozenset(_QUALIFIER_WORDS.split())

#: The words that make a question ask what an acronym stands for (they are not what the answer says).
EXPANSION_FRAME: Final = re.compile(
    r"\bstands? for\b|\bshort for\b|\bacronym\b|\babbreviation\b|\bwhat is the full name\b", re.I
)
#: Measured quantities: "What torque …?", "What is the default timeout …?" ask for a number (not "port": a harbour)
_QUANTITIES: Final = "torque|pressure|weight|height|width|depth|voltage|frequency|capacity|duration|timeout"
_TYPE_RULES: Final[tuple[tuple[re.Pattern[str], AnswerType], ...]] = (
    (EXPANSION_FRAME, "expansion"),
    # a setting's default may be a word ("'sync'", "Off", "False") as well as a number
    (re.compile(r"\bdefault value\b", re.I), "other"),
    (re.compile(r"\bwhat time\b|\bat what hour\b", re.I), "time"),
    (
        re.compile(
            r"\bwhen\b|\bwhat (?:year|years|date|day|month|decade|century|era|period)\b|"
            r"\bin (?:what|which) (?:year|decade|century|month)\b|\bhow long ago\b|\bsince when\b",
            re.I,
        ),
        "date",
    ),
    (
        re.compile(
            r"\bhow (?:many|much|long|old|far|big|large|tall|high|deep|wide|heavy|often|fast)\b|"
            r"\bwhat (?:percentage|percent|proportion|number|amount|fraction|size|population|age|price|"
            rf"cost|length|distance|temperature|speed|rate|{_QUANTITIES})\b|"
            r"\bwhat (?:is|was|are|were) the (?:\w+ ){0,2}(?:population|number|amount|size|total|count|"
            rf"{_QUANTITIES})\b|"
            r"\bwhat (?:is |was |are |were )?(?:the )?(?:\w+ ){0,2}(?:score|value|ratio|rate|percentage|efficiency)\b",
            re.I,
        ),
        "number",
    ),
    (
        re.compile(
            r"\bwho\b|\bwhom\b|\bwhose\b|\b(?:what|which) (?:person|people|man|woman|king|queen|emperor|"
            r"president|leader|author|writer|company|companies|organization|organisation|group|team|band|"
            r"party|university|institution|scientist|artist|composer|architect|ruler|dynasty|firm|manufacturer)\b",
            re.I,
        ),
        "person",
    ),
    (
        re.compile(
            r"\bwhere\b|\b(?:what|which) (?:is |was |are |were )?(?:the )?capital\b|"
            r"\b(?:what|which) (?:country|countries|city|cities|state|region|place|location|continent|"
            r"river|island|town|province|area|county|mountain|lake|sea|ocean|street|building|site)\b|"
            r"\bin (?:what|which) (?:country|city|state|region|place|area|part)\b",
            re.I,
        ),
        "place",
    ),
    (re.compile(r"\bwhy\b|\bfor what reason\b|\bwhat (?:caused|causes|was the reason)\b", re.I), "reason"),
    (re.compile(r"\bhow\b", re.I), "manner"),
    (re.compile(r"^\s*(?:is|are|was|were|does|do|did|can|could|will|would|has|have|had|should)\b", re.I), "yesno"),
)
_CAMEL: Final = re.compile(r"[a-z][A-Z]")
_WH: Final = re.compile(r"\b(?:what|which|who|whom|whose|how|where|why)\b", re.I)
_WHEN: Final = re.compile(r"\bwhen\b", re.I)
#: A name written as code: a flag, a dotted or snake_case name, a camelCase one ("--line-length",
#: "pyproject.toml", "use_pyproject", "maxConnections"): a constraint like a capitalised name
_IDENTIFIER: Final = re.compile(
    r"(?<![\w.-])(?:--?[A-Za-z][\w-]*|[A-Za-z]\w*_\w+|[A-Za-z]\w*(?:\.[A-Za-z]\w+)+|[a-z]+[A-Z]\w*)"
)
# One whole name written as code: a flag, a dotted or snake-case name (hyphens inside allowed), camel case.
_CODE_NAME: Final = re.compile(r"--?[A-Za-z][\w.-]*|[A-Za-z][\w-]*(?:[._][\w-]{2,})+|[a-z]+[A-Z]\w*")
# Wh-words and question scaffolding: never content.
_SCAFFOLD_WORDS: Final = (
    "what which who whom whose when where why how many much long often did does do is are was were "
    "name named called call type kind according"
)
_SCAFFOLD: Final = frozenset(_SCAFFOLD_WORDS.split())


_DIGITS: Final = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_CODE_AFTER: Final = re.compile(r"-[A-Z]{1,5}(?![\w-])")  # 10-K, 8-K, 737-MAX
_CODE_BEFORE: Final = re.compile(r"(?<![\w-])[A-Z]{1,6}-$")  # COVID-19, F-16 (searched up to the numeral)
_ORDINALS: Final = {
    w: str(i)
    for i, w in enumerate(
        [
            "zeroth",
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
        ]
    )
}


def _in_code(text: str, start: int, end: int) -> bool:
    """Whether the numeral at ``text[start:end]`` is part of a code joined by a hyphen to capitals
    ("Form 10-K", "COVID-19", "F-16"): a name, not a quantity, as :func:`analyze` reads it too."""
    return bool(_CODE_AFTER.match(text, end) or _CODE_BEFORE.search(text, 0, start))


def numbers_in(text: str) -> frozenset[str]:
    """The numbers of *text*, normalised: numerals ("18,000" → "18000", "60-minute" → "60", "10th" → "10")
    and ordinal words ("fourth" → "4"); a numeral inside a code ("10-K", "COVID-19") is not a number."""
    found = {
        m.group(0).replace(",", "").rstrip(".")
        for m in _DIGITS.finditer(text)
        if not _in_code(text, m.start(), m.end())
    }
    found |= {_ORDINALS[w.casefold()] for w in words(text) if w.casefold() in _ORDINALS}
    return frozenset(found)


def all_stems(text: str) -> frozenset[str]:
    """The stems of every word of *text*, stop words included (before/after, most/least …)."""
    return frozenset(stem(w) for w in words(text))


@dataclass(frozen=True, slots=True)
class Question:
    """An analysed question (see the module docstring)."""

    text: str
    answer_type: AnswerType
    terms: tuple[str, ...]
    entities: tuple[str, ...]
    numbers: tuple[str, ...]
    qualifiers: tuple[str, ...]
    negated: bool

    @property
    def key_terms(self) -> frozenset[str]:
        """The stems of entity words, numbers and qualifiers: the constraints an answer must meet."""
        keys = {stem(w) for e in self.entities for w in words(e)}
        keys |= {stem(w) for n in self.numbers for w in words(n)}
        keys |= {stem(q) for q in self.qualifiers}
        return frozenset(k for k in keys if k in self.terms)


#: A name written as code that a source must hold as written: a flag ("--worker-tmp-dir"), a snake-case name
#: ("max_requests"), a dotted lower-case one ("hnsw.ef_search", "solver.max-release-age"; not "U.S." or "e.g.").
_STRICT_NAME: Final = re.compile(
    r"(?<![\w.-])(?:--?[A-Za-z][\w-]*[A-Za-z0-9]|[A-Za-z]\w*_\w*[A-Za-z0-9]|[a-z][\w-]*\w(?:\.[a-z][\w-]*\w)+)(?![\w-])"
)


def code_names(question: str) -> tuple[str, ...]:
    """The names written as code in *question* that an answer's sources must hold (see :func:`name_key`)."""
    return tuple(dict.fromkeys(m.group(0) for m in _STRICT_NAME.finditer(question)))


def name_key(text: str) -> str:
    """*text* folded for finding a code name in it: case-folded, "-" read as "_", so "--worker-tmp-dir",
    "worker_tmp_dir" and "--limit-request-field_size" / "limit_request_field_size" meet."""
    return text.casefold().replace("-", "_")


def names_whole(question: str, heading: str) -> bool:
    """Whether *question* names *heading* whole ("What is the default backlog?" names "backlog", not
    "enable_backlog_metric"): the heading, without code quotes, as a word or name of its own."""
    name = heading.strip().strip("`'\"").strip()
    if not name:
        return False
    return bool(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", question, re.IGNORECASE))


def is_code_name(text: str) -> bool:
    """Whether *text* is one name written as code ("virtualenvs.in-project", "PIPX_HOME", "--line-length")."""
    return bool(_CODE_NAME.fullmatch(text.strip()))


@functools.cache
def _stemmer() -> Any:
    from ragwright.index.stopwords import stemmer_for

    return stemmer_for("en")


@functools.cache
def stop_words() -> frozenset[str]:
    """The English stop words content words are read without."""
    from ragwright.index.stopwords import SNOWBALL_ENGLISH

    return SNOWBALL_ENGLISH


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a case-folded word; a name written in camel case ("PyPy", "PyPI",
    "GitHub") is kept whole, folded: stemming would merge "PyPy" with "PyPI"."""
    folded = word.casefold().replace("’", "'")
    if folded.endswith("'s"):
        folded = folded[:-2]
    if _CAMEL.search(word):
        return folded
    stemmer = _stemmer()
    return str(stemmer.stemWord(folded)) if stemmer is not None else folded


def words(text: str) -> list[str]:
    """The words of *text* (letters and digits, inner apostrophes, dots and hyphens kept)."""
    return _WORD.findall(text)


def content_words(text: str) -> list[str]:
    """*text*'s content words as written, in order (stop words and question scaffolding dropped)."""
    stop = stop_words()
    return [
        w
        for w in words(text)
        if (low := w.casefold()) not in stop and low not in _SCAFFOLD and (len(low) > 1 or low.isdigit())
    ]


def content_stems(text: str) -> list[str]:
    """The stems of *text*'s content words, in order (stop words and question scaffolding dropped)."""
    return [stem(w) for w in content_words(text)]


def answer_type(question: str) -> AnswerType:
    """The kind of expression that answers *question* (``other`` when nothing narrower applies). A "when"
    after another wh-word opens a clause and asks for no date ("What code does it return when the input is
    well formed?", "Which tag is used when none is given?")."""
    wh = _WH.search(question)
    if wh is not None:
        question = question[: wh.end()] + _WHEN.sub("once", question[wh.end() :])
    for pattern, kind in _TYPE_RULES:
        if pattern.search(question):
            return kind
    return "other"


def _entities(question: str) -> list[str]:
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    tokens = words(question)
    first = tokens[0] if tokens else ""
    for m in _NAME.finditer(question):
        name = m.group(0).strip()
        if name == first or name.casefold() in _SCAFFOLD or name.casefold() in stop_words():
            # the first word is capitalised because it starts the sentence
            name = " ".join(name.split()[1:])
        if name and name.casefold() not in stop_words():
            found.append(name)
    found.extend(m.group(0).lstrip("-") for m in _IDENTIFIER.finditer(question))
    return found


def analyze(question: str) -> Question:
    """Read *question* (see the module docstring)."""
    text = " ".join(question.split())
    kind = answer_type(text)
    # an expansion question's frame ("stand for", "acronym", "full name") asks; it is not what the answer says
    framed = EXPANSION_FRAME.sub(" ", text) if kind == "expansion" else text
    terms = tuple(dict.fromkeys(content_stems(framed)))
    numbers = tuple(dict.fromkeys(w for w in words(text) if _NUMERAL.match(w)))
    qualifiers = tuple(dict.fromkeys(w.casefold() for w in words(text) if w.casefold() in QUALIFIERS))
    return Question(
        text=text,
        answer_type=kind,
        terms=terms,
        entities=tuple(dict.fromkeys(_entities(text))),
        numbers=numbers,
        qualifiers=qualifiers,
        negated=bool(_NEGATION.search(_CONDITION.sub(" ", text))),
    )


def is_negated(text: str) -> bool:
    """Whether *text* holds a negation (not, never, no …)."""
    return bool(_NEGATION.search(text))


def type_spans(kind: AnswerType, text: str) -> list[str]:
    """The expressions of answer type *kind* in *text* (dates, numbers, names, reasons …)."""
    if kind == "date":
        return [m.group(0) for m in _DATE.finditer(text)]
    if kind == "time":
        return [m.group(0) for m in _TIME.finditer(text)] + [m.group(0) for m in _DATE.finditer(text)]
    if kind == "number":
        return [m.group(0) for m in _NUMBER.finditer(text)]
    if kind in ("person", "place"):
        tokens = words(text)
        first = tokens[0] if tokens else ""
        out = []
        for m in _NAME.finditer(text):
            name = m.group(0)
            if name == first and m.start() == text.find(first):
                continue  # a capital that only starts the sentence
            out.append(name)
        return out
    if kind == "reason":
        return [m.group(0) for m in _REASON.finditer(text)]
    if kind == "expansion":
        return [m.group(1) for m in _EXPANSION.finditer(text)]
    return []


def new_type_spans(question: Question, text: str) -> list[str]:
    """The answer-type expressions of *text* that the question does not already contain."""
    asked = {stem(w) for w in words(question.text)}
    out = []
    for span in type_spans(question.answer_type, text):
        span_words = [stem(w) for w in words(span)] or [span.casefold()]
        if not all(w in asked for w in span_words):
            out.append(span)
    return out


def coverage(terms: Iterable[str], stems: Iterable[str] | frozenset[str]) -> float:
    """The fraction of *terms* found among *stems* (1.0 for no terms)."""
    wanted = list(terms)
    if not wanted:
        return 1.0
    have = stems if isinstance(stems, frozenset) else frozenset(stems)
    return sum(t in have for t in wanted) / len(wanted)
