"""The default analyzer: each text in its own language, exact identifiers kept whole.

:class:`LanguageAnalyzer` (``"auto/1"``) tokenises like :class:`~ragwright.index.DefaultAnalyzer`
(Unicode letter/digit runs, case-folded; CJK as overlapping bigrams), then

* removes the stop words of the text's language and applies its Snowball stemmer
  (:mod:`ragwright.index.stopwords`), so "Häuser" and "Haus" meet, as "studies" and "study" do.
  Terms with digits and CJK bigrams are never stemmed; a text in a language without a stemmer, or
  whose language cannot be told, is indexed unstemmed (language-neutral);
* adds each identifier whole: a run of letters and digits joined by ``-``, ``/``, ``.``, ``_`` or ``:``
  that holds a digit (``INV-2024-0042``, ``v2.3.1``, ``10.0.12.7``, ``27001:2013``) becomes one more
  term beside its parts, so the record that carries exactly that code outranks its near-duplicates.

The language of an indexed text is given by the caller (ingestion records it in the chunk metadata
as ``language``, see :func:`ragwright.index.language.detect_language`) or detected here. A query
is analysed for every language that holds a noticeable share of the index (and its own language when
it can be told), and the terms are pooled: a German query finds the German documents whatever the
majority language is, and a short query whose language cannot be told is stemmed the way the corpus is.
Each query word contributes each distinct term once, so languages that stem a word alike do not
count it twice.

Measured (``benchmarks/RESULTS.md``): on the English collections this equals the English analyzer
(stemming is where the 0.05–0.09 nDCG@10 over the language-neutral analyzer comes from), and on the
identifier benchmark the joined codes take BM25 from 96.9 % to 100 % top-1.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ragwright.index.analyzers import tokenize
from ragwright.index.language import QUERY_MIN_CONFIDENCE, detect_language, language_scores
from ragwright.index.stopwords import stemmer_for, stop_words_for

__all__ = ["FuzzyAnalyzer", "LanguageAnalyzer", "identifier_terms"]

_IDENTIFIER: Final = re.compile(r"[^\W_]+(?:[-/._:][^\W_]+)+")
_DIGIT: Final = re.compile(r"\d")
_JOINER: Final = re.compile(r"[^\W_][-/._:][^\W_]")
#: A language joins query analysis when it holds at least this share of the indexed texts …
_MIN_SHARE: Final = 0.01
#: … up to this many languages (the most frequent first).
_MAX_QUERY_LANGUAGES: Final = 4


def identifier_terms(text: str) -> list[str]:
    """Joined codes of *text* that hold a digit, case-folded: ``"See INV-2024-0042."`` →
    ``["inv-2024-0042"]``."""
    if _DIGIT.search(text) is None:
        return []
    out: list[str] = []
    for word in text.split():  # cheap checks per word before the regex
        if _JOINER.search(word) is None or _DIGIT.search(word) is None:
            continue
        for match in _IDENTIFIER.finditer(word):
            code = match.group(0)
            if _DIGIT.search(code):
                out.append(code.casefold())
    return out


class _Language:
    """One language's stop words and (cached) stemmer."""

    __slots__ = ("cache", "stemmer", "stop")

    def __init__(self, code: str | None) -> None:
        self.stop: frozenset[str] = stop_words_for(code)
        self.stemmer: Any = stemmer_for(code)
        self.cache: dict[str, str] = {}

    def stem(self, token: str) -> str:
        got = self.cache.get(token)
        if got is None:
            if self.stemmer is None or not token.isalpha():  # digits, or marks the stemmers do not expect
                got = token
            else:
                got = str(self.stemmer.stemWord(token))
            if len(self.cache) < 500_000:  # a vocabulary bound, not an eviction policy
                self.cache[token] = got
        return got

    def terms(self, tokens: Iterable[str]) -> list[str]:
        stop, cache = self.stop, self.cache
        out: list[str] = []
        for token in tokens:
            if token in stop:
                continue
            stem = cache.get(token)
            out.append(stem if stem is not None else self.stem(token))
        return out


class LanguageAnalyzer:
    """Language-aware terms (stop words, Snowball stems) plus whole identifiers; see the module doc."""

    name: str = "auto/1"

    def __init__(self) -> None:
        self._languages: dict[str | None, _Language] = {}
        self._last: tuple[Mapping[str, int], list[str | None]] | None = None  # the index's languages, memoised

    def _language(self, code: str | None) -> _Language:
        lang = self._languages.get(code)
        if lang is None:
            lang = self._languages[code] = _Language(code)
        return lang

    def __call__(self, text: str) -> list[str]:
        """The index terms of *text*, its language detected."""
        return self.index_terms(text, detect_language(text))

    def index_terms(self, text: str, language: str | None) -> list[str]:
        """The index terms of *text* written in *language* (``None``: unknown, left unstemmed)."""
        return self._language(language).terms(tokenize(text)) + identifier_terms(text)

    def query_terms(self, query: str, languages: Mapping[str, int]) -> list[str]:
        """The terms of *query* against an index whose texts are in *languages* (code -> count).

        Every word is analysed for the index's main languages; its distinct terms are kept once each.
        The query's own language is detected only when it could add something — the index also holds
        languages too rare to be analysed for by default, or none known — and then joins them. A word is
        dropped as a stop word when it is one in the query's language (when told) or in every candidate.
        """
        last = self._last
        if last is not None and last[0] is languages:
            candidates = list(last[1])
        else:
            candidates = _main_languages(languages)
            self._last = (languages, list(candidates))
        own: str | None = None
        if not candidates or len(candidates) < len(languages):  # detection costs ~0.1 ms: only when useful
            code, confidence = language_scores(query)
            own = code if code and confidence >= QUERY_MIN_CONFIDENCE else None
            if own is not None and own not in candidates:
                candidates.insert(0, own)
        if not candidates:
            candidates = [None]
        langs = [self._language(c) for c in candidates]
        if own is not None:
            stops = [self._language(own).stop]
        else:
            stops = [lang.stop for lang in langs]
        if len(langs) == 1 and len(stops) == 1:  # the common case: one language, no pooling
            return langs[0].terms(tokenize(query)) + identifier_terms(query)
        out: list[str] = []
        for token in tokenize(query):
            if all(token in stop for stop in stops):
                continue
            out.extend(dict.fromkeys(lang.stem(token) for lang in langs))
        return out + identifier_terms(query)

    def __repr__(self) -> str:
        return f"LanguageAnalyzer(name={self.name!r})"


def _main_languages(languages: Mapping[str, int]) -> list[str | None]:
    """The languages with a noticeable share of the index, most frequent first."""
    total = sum(languages.values())
    if not total:
        return []
    ranked = Counter(languages).most_common(_MAX_QUERY_LANGUAGES)
    return [code for code, n in ranked if n / total >= _MIN_SHARE]


class FuzzyAnalyzer(LanguageAnalyzer):
    """The language-aware terms plus each word's character trigrams (``"fuzzy/1"``, opt-in).

    A word of four letters or more is also indexed as the trigrams of ``^word$`` (marked ``#``, so they
    never meet a real word), so a misspelled or OCR-damaged word still shares most of its trigrams with
    the right one, and morphological variants stemming misses ("polarography", "polarographic") meet.
    Measured (``benchmarks/keyword_variants.py``): MED +0.025 nDCG@10 after fusion, and with one
    misspelled word per query +0.006 to +0.040 on Cranfield, MED and NPL; but SciFact -0.020 and CISI
    -0.004 on clean text — an option, not the default. The index holds several times more postings.
    """

    name: str = "fuzzy/1"

    def index_terms(self, text: str, language: str | None) -> list[str]:
        return super().index_terms(text, language) + trigram_terms(text)

    def query_terms(self, query: str, languages: Mapping[str, int]) -> list[str]:
        return super().query_terms(query, languages) + trigram_terms(query)

    def __repr__(self) -> str:
        return f"FuzzyAnalyzer(name={self.name!r})"


def trigram_terms(text: str) -> list[str]:
    """``#``-marked character trigrams of each alphabetic word of four letters or more (case-folded)."""
    out: list[str] = []
    for token in tokenize(text):
        if len(token) >= 4 and token.isalpha():
            padded = f"^{token}$"
            out.extend("#" + padded[i : i + 3] for i in range(len(padded) - 2))
    return out
