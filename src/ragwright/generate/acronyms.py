"""Acronyms and the words they stand for, matched between a question and its evidence.

A question asks about "hyper parameter optimization" and the passage says "we chose PubTabNet to
perform HPO"; or the question says "RCAC" and the passage spells out "Row and Column Access Control".
Word coverage alone counts those words as missing. :func:`acronym_stems` gives a unit the stems of the
question words one of its acronyms stands for, and the question's acronym when the unit spells it out,
so coverage sees the match. An acronym is 2–8 capitals (a trailing "s" allowed: "LLMs"); its expansion
is a run of content words whose initials spell it, skipping the small words acronyms leave out
("and", "of", "the", "for" …) inside the run. A two-letter acronym matches capitalised words only
("European Union" for "EU", never "every user"). Runs are read in the question's own word order (or the
unit's), never pieced together across a passage. :func:`abbreviation_stems` matches the clipped words
of table headers ("enc" for "encoder") the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ragwright.generate.question import EXPANSION_FRAME, answer_type, content_words, stem, stop_words, words

_ACRONYM: Final = re.compile(r"^([A-Z]{2,8})s?$")
#: Small words an acronym leaves out inside its run (English, and the particles of French, Spanish, Italian,
#: Portuguese, Dutch and German names: "Front Islamique de Salut (FIS)").
_ENGLISH_SKIPPED: Final = ("and", "of", "the", "for", "in", "on", "to", "a", "an")
_SKIPPED: Final = frozenset(
    (*_ENGLISH_SKIPPED, "de", "du", "des", "la", "le", "del", "di", "da", "y", "et", "van", "von", "der")
)


def acronyms_in(text: str) -> set[str]:
    """The acronyms written in *text* ("HPO", "RCAC", "LLMs" → "LLM")."""
    return {m.group(1) for w in words(text) if (m := _ACRONYM.match(w))}


def _spelled(acronym: str, tokens: Sequence[str], start: int) -> int | None:
    """The end of the run of *tokens* from *start* whose initials spell *acronym* (small words skipped
    inside the run, never first or last), or ``None``."""
    stop = stop_words()
    i, j = start, 0
    while j < len(acronym):
        if i >= len(tokens):
            return None
        token = tokens[i]
        if token.casefold() in _SKIPPED and j > 0:
            i += 1
            continue
        if token[:1].upper() != acronym[j] or token.casefold() in stop:
            return None
        if len(acronym) == 2 and not token[:1].isupper():
            return None
        i, j = i + 1, j + 1
    return i


def expansions(acronym: str, text: str) -> list[list[str]]:
    """Every run of words in *text* whose initials spell *acronym* (the words, in order)."""
    tokens = words(text)
    out = []
    for start in range(len(tokens)):
        end = _spelled(acronym, tokens, start)
        if end is not None:
            out.append([t for t in tokens[start:end] if t.casefold() not in _SKIPPED])
    return out


#: Capitalised words that may stand between an expansion and the acronym after it ("(United States)").
GAP: Final = 3
#: Words that may sit between an acronym and the expansion after it ("RCAC stands for Row and …").
_DEFINING: Final = frozenset(["stands", "stand", "for", "is", "short", "means", "meaning", "or", "i.e.", "aka"])


def definitions(acronym: str, text: str) -> list[list[str]]:
    """The expansions that *text* gives *acronym* beside it — "Row and Column Access Control (RCAC)",
    "RCAC (Row and Column Access Control)", "RCAC stands for …": a run whose initials spell the acronym
    ending where the acronym is written (or up to :data:`GAP` capitalised words before it), or starting
    right after it (a few linking words allowed). Unlike :func:`expansions`, a run of words elsewhere that
    happens to share the initials is not one."""
    tokens = words(text)
    runs: list[tuple[int, int]] = []
    for k, token in enumerate(tokens):
        m = _ACRONYM.match(token)
        if m is None or m.group(1) != acronym:
            continue
        for start in range(max(0, k - 4 * len(acronym) - GAP), k):  # "… Oversight Board (United States) (PCAOB)"
            end = _spelled(acronym, tokens, start)
            if end is not None and k - GAP <= end <= k and all(t[:1].isupper() for t in tokens[end:k]):
                runs.append((start, end))
        start = k + 1
        while start < len(tokens) and start - k <= 3 and tokens[start].casefold() in _DEFINING:
            start += 1
        end = _spelled(acronym, tokens, start)
        if end is not None:
            runs.append((start, end))
    return [[t for t in tokens[start:end] if t.casefold() not in _SKIPPED] for start, end in runs]


def acronym_stems(question: str, unit: str) -> frozenset[str]:
    """Stems the unit matches through an acronym: the question words a unit's acronym stands for, and the
    question's acronym when the unit spells it out."""
    found: set[str] = set()
    for acronym in acronyms_in(unit) - acronyms_in(question):
        for run in expansions(acronym, question):
            found |= {stem(w) for w in run}
    for acronym in acronyms_in(question) - acronyms_in(unit):
        if expansions(acronym, unit):
            found.add(stem(acronym))
    return frozenset(found)


def abbreviation_stems(question: str, labels: str) -> frozenset[str]:
    """Stems of the question words that a label shortens to their first letters ("enc" for "encoder",
    "pop" for "population"): the clipped words of table headers. A shortening keeps at least three
    letters and is shorter than the word; stop words never count."""
    stop = stop_words()
    asked = [w for w in words(question) if w.isalpha() and w.casefold() not in stop]
    found: set[str] = set()
    for label in words(labels.replace("-", " ")):
        short = label.casefold()
        if len(short) < 3 or not short.isalpha() or short in stop:
            continue
        found |= {stem(w) for w in asked if len(w) > len(short) and w.casefold().startswith(short)}
    return frozenset(found)


def search_text(question: str) -> str:
    """The text to retrieve *question*'s sources with: an expansion question's content words, without its
    frame ("What does ICT stand for?" → "ICT"; "What does DIA stand for in the LayoutParser paper?" →
    "DIA LayoutParser paper"). The frame's and the question's own words ("stand", "name", "does") are
    everywhere and outrank the rare acronym in keyword search, while the line that answers never repeats
    them. Any other question is searched as asked."""
    text = " ".join(question.split())
    if answer_type(text) != "expansion":
        return question
    return " ".join(content_words(EXPANSION_FRAME.sub(" ", text))) or question


def defines_asked(question: str, text: str) -> bool:
    """Whether *text* spells out, beside it, an acronym that expansion *question* asks about."""
    return answer_type(question) == "expansion" and any(definitions(a, text) for a in acronyms_in(question))
