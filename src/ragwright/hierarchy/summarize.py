"""Summaries that cite the chunks they draw from: extractive (no model) or by a chat model.

Extractive (the default without a chat model): the title, the section headings, and one
representative sentence from each of a few representative chunks — chunks chosen by maximal marginal
relevance around the centroid of their vectors (Carbonell & Goldstein 1998), the sentence of each
chosen chunk that carries most of the text's salient words (log document frequency over the members,
stop words dropped). Every sentence comes from a chunk whose id the summary lists, so a summary never
says anything its cited chunks do not.

By a chat model: the same representative chunks are sent (with their ids) and the reply is the
summary; it cites the chunks it was shown. A failed or empty reply falls back to the extractive summary
(event ``hierarchy_summary_failed``). :func:`hypothetical_questions` asks for questions a text answers
(multi-vector, opt-in).
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragwright.chunk.split import sentences
from ragwright.errors import GenerationError
from ragwright.index.stopwords import SNOWBALL_ENGLISH
from ragwright.model.chunk import Chunk

if TYPE_CHECKING:
    from ragwright.models.llms.base import ChatModel

log = logging.getLogger(__name__)
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
MAX_SENTENCE_CHARS = 400
MAX_LLM_INPUT_CHARS = 6000

SUMMARY_PROMPT = (
    "Summarize the passages below into one coherent summary of what they are about. Use only the information "
    "provided; keep names and figures. Reply with the summary only, at most {sentences} sentences."
)
QUESTIONS_PROMPT = (
    "Write {n} different questions that the passage below answers, one per line, without numbering. "
    "Use only the passage's information."
)


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary's text, the chunks it draws from (ids, document order) and how it was written."""

    text: str
    chunk_ids: tuple[str, ...]
    method: str


def _words(text: str) -> list[str]:
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(w) > 2 and w not in SNOWBALL_ENGLISH]


def representative(chunks: Sequence[Chunk], vectors: Mapping[str, Any] | None, k: int) -> list[Chunk]:
    """Up to *k* chunks that cover *chunks*: MMR around the centroid of their vectors (evenly spaced
    chunks when vectors are missing), returned in document order."""
    if len(chunks) <= k:
        return list(chunks)
    have = [c for c in chunks if vectors is not None and c.id in vectors]
    if len(have) < k:
        step = len(chunks) / k
        return [chunks[int(i * step)] for i in range(k)]
    import numpy as np

    assert vectors is not None
    m = np.asarray([vectors[c.id] for c in have], dtype=np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    centroid = m.mean(axis=0)
    relevance = m @ centroid
    chosen: list[int] = []
    closest = np.full(len(have), -1.0, dtype=np.float32)
    for _ in range(k):
        score = relevance - 0.5 * np.maximum(closest, 0.0)
        if chosen:
            score[chosen] = -np.inf
        best = int(np.argmax(score))
        chosen.append(best)
        closest = np.maximum(closest, m @ m[best])
    picked = {have[i].id for i in chosen}
    return [c for c in chunks if c.id in picked]


def _best_sentence(text: str, salience: Mapping[str, float]) -> str:
    best, best_score = "", -1.0
    for s in sentences(text):
        if len(s) < 20:
            continue
        words = _words(s)
        if not words:
            continue
        score = sum(salience.get(w, 0.0) for w in set(words)) / math.sqrt(len(words))
        if score > best_score:
            best, best_score = s, score
    if not best:
        best = " ".join(text.split())
    if len(best) > MAX_SENTENCE_CHARS:
        best = best[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
    return best


def headings(chunks: Sequence[Chunk], title: str, limit: int = 8) -> list[str]:
    """The distinct section headings of *chunks* in document order (the title left out)."""
    seen: dict[str, None] = {}
    for c in chunks:
        for h in c.section_path:
            h = " ".join(h.split())
            if h and h != title and h not in seen:
                seen[h] = None
    return list(seen)[:limit]


def extractive_summary(
    chunks: Sequence[Chunk], vectors: Mapping[str, Any] | None, *, sentences_wanted: int, title: str = ""
) -> Summary:
    """The extractive summary of *chunks* (see the module docstring)."""
    chunks = sorted(chunks, key=lambda c: (c.document_id, c.position))
    if not chunks:
        return Summary(title, (), "extractive")
    df: Counter[str] = Counter()
    for c in chunks:
        df.update(set(_words(c.text)))
    salience = {w: math.log1p(n) for w, n in df.items() if n > 1 or len(chunks) == 1}
    picked = representative(chunks, vectors, sentences_wanted)
    lines = []
    if title:
        lines.append(title)
    heads = headings(chunks, title)
    if heads:
        lines.append("Sections: " + "; ".join(heads))
    lines.append(" ".join(_best_sentence(c.text, salience) for c in picked))
    return Summary("\n".join(lines), tuple(c.id for c in picked), "extractive")


def llm_summary(
    llm: ChatModel,
    chunks: Sequence[Chunk],
    vectors: Mapping[str, Any] | None,
    *,
    sentences_wanted: int,
    title: str = "",
) -> Summary:
    """A summary written by *llm* from the representative chunks; the extractive one when it fails."""
    from ragwright.models.llms.base import Message

    chunks = sorted(chunks, key=lambda c: (c.document_id, c.position))
    picked = representative(chunks, vectors, max(sentences_wanted, 3))
    budget = MAX_LLM_INPUT_CHARS // max(1, len(picked))
    body = "\n\n".join(c.text[:budget] for c in picked)
    try:
        reply = llm.chat(
            [
                Message("system", SUMMARY_PROMPT.format(sentences=sentences_wanted)),
                Message("user", (f"Title: {title}\n\n" if title else "") + body),
            ],
            temperature=0.0,
            max_tokens=300,
        ).text.strip()
        if not reply:
            raise GenerationError("empty summary")
    except GenerationError as exc:
        log.warning("hierarchy_summary_failed: %s; extractive summary instead", exc)
        return extractive_summary(chunks, vectors, sentences_wanted=sentences_wanted, title=title)
    text = f"{title}\n{reply}" if title else reply
    return Summary(text, tuple(c.id for c in picked), f"llm:{llm.name}")


def hypothetical_questions(llm: ChatModel, text: str, n: int) -> list[str]:
    """Up to *n* questions *text* answers, written by *llm* (``[]`` when the call fails)."""
    from ragwright.models.llms.base import Message

    try:
        reply = llm.chat(
            [Message("system", QUESTIONS_PROMPT.format(n=n)), Message("user", text[:MAX_LLM_INPUT_CHARS])],
            temperature=0.0,
            max_tokens=40 * n,
        ).text
    except GenerationError as exc:
        log.warning("hierarchy_questions_failed: %s", exc)
        return []
    out = []
    for line in reply.splitlines():
        q = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        if len(q) > 5 and q not in out:
            out.append(q)
    return out[:n]
