"""Language detection for chunks and queries (py3langid: a naive Bayes model shipped in its wheel).

Chosen by measurement on short text (``benchmarks/RESULTS.md``, "Language detection"): 94 of 95 short
queries and sentences in eleven languages right, 0.04 ms each, against 85/95 at 4 ms for lingua in its
fast mode (93/95 at 164 ms in its accurate mode). The model loads once, lazily (about 0.5 s), and never
touches the network.

:func:`detect_language` answers an ISO 639-1 code, or ``None`` when the text is too short or too
ambiguous to tell (the model's calibrated probability under ``min_confidence``): a three-word query
such as "cobalt shipment 00196" is not confidently English, and the analyzers then fall back to the
languages of the indexed documents instead of guessing.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Any, Final

from ragwright.errors import MissingDependencyError

__all__ = [
    "CHUNK_MIN_CONFIDENCE",
    "QUERY_MIN_CONFIDENCE",
    "chunk_languages",
    "detect_language",
    "language_scores",
    "load",
]

#: A chunk's own language is trusted at this probability; below it, its document's language is used.
CHUNK_MIN_CONFIDENCE: Final = 0.5
#: A query's detected language joins the analysis at this probability.
QUERY_MIN_CONFIDENCE: Final = 0.6
#: Longer texts are cut here before detection: a thousand characters decide it as well as the whole.
_MAX_CHARS: Final = 1200
#: Each chunk of a document is told from its first few hundred characters (the cost grows with the length;
#: the document's own sample decides the chunks that are too short or too mixed to tell).
_CHUNK_SAMPLE: Final = 400
#: A chunk is first probed from this many characters: when that names its document's language, it is taken.
_CHUNK_PROBE: Final = 160

_identifier: Any = None
_lock = threading.Lock()


def _model() -> Any:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                try:
                    langid: Any = importlib.import_module("py3langid.langid")
                except ImportError as exc:  # pragma: no cover - a base dependency
                    raise MissingDependencyError("py3langid", "", "language detection") from exc
                _identifier = langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)
    return _identifier


def load() -> None:
    """Load the model now (otherwise on first use): ingestion does it on a side thread while its first
    document is parsed, so the load does not delay the first chunks."""
    _model()


def language_scores(text: str, *, limit: int = _MAX_CHARS) -> tuple[str, float]:
    """The most likely language of *text* (its first *limit* characters) and its probability
    (``("", 0.0)`` for text with no letters)."""
    sample = text[:limit]
    if not any(ch.isalpha() for ch in sample):
        return "", 0.0
    code, confidence = _model().classify(sample)
    return str(code), float(confidence)


def detect_language(text: str, *, min_confidence: float = CHUNK_MIN_CONFIDENCE) -> str | None:
    """The ISO 639-1 code of *text*'s language, or ``None`` when it cannot be told confidently."""
    code, confidence = language_scores(text)
    return code if code and confidence >= min_confidence else None


def chunk_languages(texts: Sequence[str]) -> list[str | None]:
    """The language of each chunk of one document: its own when it can be told, else the document's
    (detected over the chunks together), so a short chunk inherits and a quoted passage in another
    language keeps its own.

    The document's language is told once; each chunk is then probed from its first
    :data:`_CHUNK_PROBE` characters, and only a chunk whose probe does not confidently name the
    document's language is told from its :data:`_CHUNK_SAMPLE` characters (on the docs corpus: the same
    label for all 1,533 chunks, 27 % less detection time).
    """
    if not texts:
        return []
    document = detect_language(" ".join(texts)[:_MAX_CHARS])
    out: list[str | None] = []
    for text in texts:
        if document is not None and len(text) > _CHUNK_PROBE:
            code, confidence = language_scores(text, limit=_CHUNK_PROBE)
            if code == document and confidence >= CHUNK_MIN_CONFIDENCE:
                out.append(document)  # the probe agrees with the document: no longer sample needed
                continue
        code, confidence = language_scores(text, limit=_CHUNK_SAMPLE)
        out.append(code if code and confidence >= CHUNK_MIN_CONFIDENCE else document)
    return out
