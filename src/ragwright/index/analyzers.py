"""Analyzers: how text is split into index terms.

:class:`DefaultAnalyzer` is language-neutral. It splits on runs of Unicode letters and digits (so
Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari … tokenise as words; combining marks stay inside
their word), case-folds with :meth:`str.casefold`, and applies no stemming and no stop words.
Chinese, Japanese and Korean do not put spaces between words, so runs of Han, Hiragana, Katakana and
Hangul characters become overlapping character bigrams, as Lucene's CJK analyzer does
(``人工智能`` → ``人工 工智 智能``); a lone CJK character stays a unigram. Thai, Khmer and Lao are
left as whole runs: bigramming is not the accepted treatment for them.

:class:`EnglishAnalyzer` adds Lucene's English stop words and the Snowball English stemmer
(PyStemmer, a C extension).

``"auto"`` (:class:`~ragwright.index.multilingual.LanguageAnalyzer`, the default of every store) indexes
each text with the stop words and stemmer of its own language and keeps identifiers such as
``INV-2024-0042`` whole; it is what :data:`DEFAULT_ANALYZER` names.

Every analyzer has a stable, versioned :attr:`~Analyzer.name`; an index snapshot records it, and a
snapshot is only loaded with the same analyzer. Change the name whenever the terms an analyzer
produces change.
"""

from __future__ import annotations

import importlib
import re
import threading
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, runtime_checkable

from ragwright.errors import ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_ANALYZER",
    "ENGLISH_STOP_WORDS",
    "Analyzer",
    "DefaultAnalyzer",
    "EnglishAnalyzer",
    "LanguageAwareAnalyzer",
    "analyzer_names",
    "get_analyzer",
    "tokenize",
]

#: The analyzer stores use unless told otherwise: language-aware (``ragwright.index.multilingual``).
DEFAULT_ANALYZER: Final = "auto"


@runtime_checkable
class Analyzer(Protocol):
    """Turns text into index terms. ``name`` is stable and versioned (e.g. ``"default/1"``)."""

    name: str

    def __call__(self, text: str) -> list[str]: ...


@runtime_checkable
class LanguageAwareAnalyzer(Analyzer, Protocol):
    """An analyzer that indexes each text in its own language and analyses queries against the
    languages of the index (``LanguageAnalyzer``). ``__call__`` detects the language itself."""

    def index_terms(self, text: str, language: str | None) -> list[str]: ...

    def query_terms(self, query: str, languages: Mapping[str, int]) -> list[str]: ...


# Characters that are bigrammed: Han (URO, extension A, B-I, compatibility ideographs and their
# supplement, iteration/ideographic-number marks), Hiragana, Katakana (with the phonetic extension,
# the kana supplements and halfwidth forms), Hangul (syllables, Jamo, compatibility and halfwidth
# Jamo). Only letters are listed: punctuation inside those blocks (・, ゠ …) still splits runs.
_CJK_RANGES: Final = (
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029\u3038-\u303b"  # Hangzhou numerals, 〻
    "\u3041-\u3096\u3099\u309a\u309d-\u309f"  # Hiragana (+ combining voiced marks, iteration marks)
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana (ー included, ・ excluded)
    "\u3131-\u318e"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97c"  # Hangul Jamo extended A
    "\uac00-\ud7a3"  # Hangul syllables
    "\ud7b0-\ud7c6\ud7cb-\ud7fb"  # Hangul Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # halfwidth Katakana (･ excluded)
    "\uffa0-\uffdc"  # halfwidth Hangul
    "\u1100-\u11ff"  # Hangul Jamo
    "\U0001b000-\U0001b16f"  # Kana supplement / extended / small kana
    "\U00020000-\U0002fa1f"  # CJK extensions B-F, I and compatibility supplement
    "\U00030000-\U000323af"  # CJK extensions G-H
)
_CJK_RE: Final = re.compile(f"[{_CJK_RANGES}]")

_compiled: re.Pattern[str] | None = None
_compile_lock = threading.Lock()


def _mark_ranges() -> str:
    """Combining marks (Unicode category M*), as a character-class body.

    Python's ``\\w`` leaves them out, which would cut Devanagari, Arabic with harakat or decomposed
    Latin (``e`` + U+0301) into pieces; the analyzer keeps them inside their word.
    """
    ranges: list[tuple[int, int]] = []
    for cp in range(0x0300, 0x20000):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


_ASCII_RUN: Final = re.compile(r"[a-z0-9]+")


def _word_pattern() -> re.Pattern[str]:
    """A letter/digit run, with the combining marks inside and at the end of it."""
    global _compiled
    if _compiled is None:
        with _compile_lock:
            if _compiled is None:
                marks = _mark_ranges()
                _compiled = re.compile(rf"[^\W_]+(?:[{marks}]+[^\W_]*)*")
    return _compiled


_CJK_SPLIT: Final = re.compile(f"[{_CJK_RANGES}]+|[^{_CJK_RANGES}]+")


def tokenize(text: str) -> list[str]:
    """Case-folded letter/digit runs; CJK runs turned into overlapping bigrams."""
    if text.isascii():  # the fast path: no marks, no CJK, and casefold is lower
        return _ASCII_RUN.findall(text.lower())
    folded = text.casefold()
    runs = _word_pattern().findall(folded)
    if _CJK_RE.search(folded) is None:
        return runs
    terms: list[str] = []
    for run in runs:
        if _CJK_RE.search(run) is None:
            terms.append(run)
            continue
        for part in _CJK_SPLIT.findall(run):  # "gpt4は人工" -> "gpt4", "は人工"
            if len(part) > 1 and _CJK_RE.match(part) is not None:
                terms.extend(part[i : i + 2] for i in range(len(part) - 1))
            else:
                terms.append(part)
    return terms


class DefaultAnalyzer:
    """Language-neutral terms: Unicode letter/digit runs, case-folded; CJK as character bigrams."""

    name: str = "default/1"

    def __call__(self, text: str) -> list[str]:
        return tokenize(text)

    def __repr__(self) -> str:
        return f"DefaultAnalyzer(name={self.name!r})"


# Lucene's EnglishAnalyzer stop set (also bm25s' ``STOPWORDS_EN``).
ENGLISH_STOP_WORDS: Final[frozenset[str]] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)


class EnglishAnalyzer:
    """Default tokenisation, then English stop words removed, then the Snowball English stemmer."""

    name: str = "english/1"

    def __init__(self) -> None:
        try:
            stemmer_module: Any = importlib.import_module("Stemmer")
        except ImportError as exc:  # pragma: no cover - PyStemmer is a base dependency
            raise MissingDependencyError("PyStemmer", "", "English stemming") from exc
        self._stemmer: Any = stemmer_module.Stemmer("english")
        self._cache: dict[str, str] = {}
        self._stop = ENGLISH_STOP_WORDS

    def stem(self, word: str) -> str:
        """The Snowball English stem of one (case-folded) word, cached."""
        stem = self._cache.get(word)
        if stem is None:
            stem = str(self._stemmer.stemWord(word))
            if len(self._cache) < 1_000_000:  # a vocabulary bound, not an eviction policy
                self._cache[word] = stem
        return stem

    def __call__(self, text: str) -> list[str]:
        cache, stop = self._cache, self._stop
        out: list[str] = []
        for token in tokenize(text):
            if token in stop:
                continue
            stem = cache.get(token)
            out.append(stem if stem is not None else self.stem(token))
        return out

    def __repr__(self) -> str:
        return f"EnglishAnalyzer(name={self.name!r})"


def _language_analyzer() -> Analyzer:
    from ragwright.index.multilingual import LanguageAnalyzer

    return LanguageAnalyzer()


def _fuzzy_analyzer() -> Analyzer:
    from ragwright.index.multilingual import FuzzyAnalyzer

    return FuzzyAnalyzer()


_ANALYZERS: Final[dict[str, tuple[str, Callable[[], Analyzer]]]] = {
    "auto": ("auto/1", _language_analyzer),
    "fuzzy": ("fuzzy/1", _fuzzy_analyzer),
    "default": (DefaultAnalyzer.name, DefaultAnalyzer),
    "english": (EnglishAnalyzer.name, EnglishAnalyzer),
}


def analyzer_names() -> tuple[str, ...]:
    """The analyzers :func:`get_analyzer` knows, by base name (``"auto"`` first: the default)."""
    return tuple(_ANALYZERS)


def get_analyzer(name: str) -> Analyzer:
    """The analyzer called *name*: ``"auto"`` (language-aware, the default), ``"fuzzy"`` (``auto`` plus
    character trigrams, for OCR'd or misspelled text), ``"default"`` (language-neutral) or
    ``"english"``, or one of their versioned names (``"auto/1"``)."""
    base, _, version = name.partition("/") if isinstance(name, str) else ("", "", "")
    entry = _ANALYZERS.get(base)
    if entry is not None and (not version or entry[0] == name):
        return entry[1]()
    versions = ", ".join(current for current, _ in _ANALYZERS.values())
    accepted = f"one of {', '.join(_ANALYZERS)} (current versions: {versions})"
    raise ConfigError.invalid("analyzer", name, accepted)
