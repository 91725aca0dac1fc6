"""Citation checking and the model's own declines.

Every ``[Source N]`` in an answer must name a source that was actually given: valid ones become
:class:`~ragwright.model.results.Citation` objects, out-of-range numbers are reported as invalid, and an
answer that makes claims without a single valid citation is flagged ``uncited``. Multi-number forms
are read too: ``[Source 1, 2]``, ``[Sources 1 and 3]``, ``[Source 1-3]``, ``[Source 1; Source 4]``.

:func:`is_refusal` recognises a model saying the context does not answer the question — the exact
sentence the default prompt asks for, or the usual paraphrases — so "not found" is a first-class outcome
instead of an answer that happens to contain an apology.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ragwright.chunk.split import sentences
from ragwright.generate.prompt import DECLINE_SENTENCE
from ragwright.model.results import Citation, SearchResult

_CITE: Final = re.compile(
    r"\[\s*sources?\s*:?\s*(\d+(?:\s*(?:,|;|&|\band\b|\bto\b|-|–)\s*(?:sources?\s*)?\d+)*)\s*\]",
    re.IGNORECASE,
)
_NUMBER: Final = re.compile(r"\d+")
_RANGE: Final = re.compile(r"(\d+)\s*(?:-|–|\bto\b)\s*(\d+)", re.IGNORECASE)
_MAX_RANGE: Final = 50
_MIN_CLAIM_WORDS: Final = 3

_NEGATION = r"(?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't|is\s+not|isn't|are\s+not|aren't|not)"
_REFUSAL: Final = re.compile(
    "|".join(
        (
            r"\b(?:cannot|can\s*not|can't|could\s+not|couldn't|unable\s+to|not\s+able\s+to)\s+"
            r"(?:find|locate|answer|determine|provide|tell|say|identify)\b",
            rf"\b(?:context|sources?|documents?|passages?|information|text)\s+(?:provided\s+)?{_NEGATION}\s+"
            r"(?:contain|include|provide|mention|say|specify|state|have|cover|address|answer|give|describe)",
            r"\b(?:no|not\s+enough|insufficient|not\s+sufficient)\s+(?:relevant\s+)?information\b",
            r"\bnot\s+enough\s+(?:details|context|evidence)\b",
            r"\bnot\s+(?:provided|mentioned|specified|stated|available|found|included|covered|given)\s+"
            r"(?:in|by|within)\s+(?:the\s+)?(?:provided\s+|given\s+)?(?:context|sources?|documents?|passages?|text)",
            r"\bi\s+(?:do\s+not|don't)\s+know\b",
            r"\bthere\s+is\s+no\s+(?:information|mention|answer|data)\b",
        )
    ),
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class CitationReport:
    """What the ``[Source N]`` markers of an answer point to."""

    citations: tuple[Citation, ...]
    invalid: tuple[int, ...]
    uncited: bool


def cited_numbers(text: str) -> list[int]:
    """Every source number cited in *text*, in order of appearance (repeats kept)."""
    out: list[int] = []
    for match in _CITE.finditer(text):
        body = match.group(1)
        spans = []
        for rng in _RANGE.finditer(body):
            lo, hi = int(rng.group(1)), int(rng.group(2))
            if lo <= hi and hi - lo <= _MAX_RANGE:
                out.extend(range(lo, hi + 1))
                spans.append(rng.span())
        rest = body
        for start, end in reversed(spans):
            rest = rest[:start] + " " * (end - start) + rest[end:]
        out.extend(int(n) for n in _NUMBER.findall(rest))
    return out


def without_citations(text: str) -> str:
    """*text* with its ``[Source N]`` markers removed."""
    return _CITE.sub(" ", text)


def has_claims(text: str) -> bool:
    """Whether *text* states anything (a sentence of a few words that is not a refusal)."""
    for sentence in sentences(without_citations(text)):
        if len(sentence.split()) >= _MIN_CLAIM_WORDS and not _REFUSAL.search(sentence):
            return True
    return False


def check_citations(answer: str, sources: Sequence[SearchResult]) -> CitationReport:
    """Resolve the citations of *answer* against the *sources* it was given (1-based)."""
    valid: dict[int, Citation] = {}
    invalid: list[int] = []
    for n in cited_numbers(answer):
        if 1 <= n <= len(sources):
            if n not in valid:
                chunk = sources[n - 1].chunk
                valid[n] = Citation(n, chunk.id, chunk.document_id)
        elif n not in invalid:
            invalid.append(n)
    uncited = not valid and has_claims(answer)
    return CitationReport(tuple(valid.values()), tuple(invalid), uncited)


def _normalise(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).strip().lower()


def is_refusal(answer: str, sources: Sequence[SearchResult]) -> bool:
    """Whether the model declined: it says the context does not answer the question.

    True for an empty answer, for :data:`DECLINE_SENTENCE` anywhere, or when the first sentence is a
    refusal and no *later* sentence carries a valid citation ("The sources don't say X. However, Y
    [Source 2]." is a partial answer, not a decline).
    """
    text = _normalise(answer)
    if not text or _normalise(DECLINE_SENTENCE).rstrip(".") in text:
        return True
    parts = sentences(" ".join(answer.split()))
    if not parts or not _REFUSAL.search(parts[0]):
        return False
    later = " ".join(parts[1:])
    return not check_citations(later, sources).citations


def supporting_sources(
    answer: str, sources: Sequence[SearchResult], *, floor: float = 0.6, limit: int = 2
) -> list[int]:
    """The 1-based numbers of the sources that hold most of *answer*'s content words (at least *floor*
    of them), best first, at most *limit*: where an uncited answer's statements come from."""
    from ragwright.generate.prompt import source_text
    from ragwright.generate.question import content_stems

    claim = set(content_stems(without_citations(answer)))
    if not claim:
        return []
    shares = []
    for n, result in enumerate(sources, start=1):
        share = len(claim & set(content_stems(source_text(result)))) / len(claim)
        if share >= floor:
            shares.append((-share, n))
    return [n for _, n in sorted(shares)[:limit]]


def citation_suffix(answer: str, sources: Sequence[SearchResult]) -> str:
    """``" [Source N]"`` (or ``" [Source N, M]"``) naming the sources that support an answer the model
    left uncited, or ``""`` when no source holds most of its words (then it stays flagged uncited)."""
    found = supporting_sources(answer, sources)
    if not found:
        return ""
    return " [Source " + ", ".join(str(n) for n in found) + "]"
