"""Propositional chunking (Chen et al. 2023, "Dense X Retrieval: What Retrieval Granularity Should We
Use?"): a chat model splits
each chunk into atomic, self-contained propositions, which are embedded and searched; a hit returns the
chunk the proposition came from.

For every chunk the model is asked for a JSON list of propositions, pronouns and vague references
replaced by what they name. Each proposition is then:

* **mapped back** to its source span: the sentence of the chunk whose content words it covers the
  largest share of (``metadata["source_start"]`` / ``["source_end"]``, character offsets in the chunk's text); one
  that shares no content word with the chunk is dropped as unsupported (counted in :attr:`dropped`);
* **stored as a child** of its source chunk: the proposition chunks carry ``parent_id`` = the source
  chunk, which is stored as a parent (not embedded), so retrieval with ``use_parent_document`` (the
  default) returns the source chunk in the proposition's place.

Nothing may be lost: a sentence of the chunk whose content words the propositions cover less than
half of becomes a proposition itself, verbatim (counted in :attr:`restored`). A call that fails, or a
reply that is not a JSON list of strings, keeps the chunk whole as its own single proposition (event
``propositions_failed``). Calls, tokens and seconds go to :attr:`ledger` (and to the ingest report).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ragwright.chunk.enrich import truncate_tokens
from ragwright.errors import GenerationError
from ragwright.model.chunk import Chunk
from ragwright.models.llms.base import ChatLedger, Message, parse_json

if TYPE_CHECKING:
    from ragwright.models.llms.base import ChatModel

log = logging.getLogger(__name__)

VERSION = "propositions/1"
PROMPT_VERSION = "dense-x/1"
SYSTEM = (
    "Decompose the passage into clear and simple propositions. Each proposition states one fact and must be "
    "understandable on its own, without the passage: replace pronouns and vague references (it, this, the "
    "company) with the full names they refer to, and keep every number, date and name. Cover every fact of "
    "the passage. Reply with a JSON list of strings only."
)
SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be by for from has have in is it its of on or that the their this to was were with"
    )
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP and len(w) > 1}


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of *text*'s sentences (and lines)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if text[start : m.start()].strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


def _propositions(value: Any) -> list[str]:
    if isinstance(value, dict):  # {"propositions": [...]} is accepted too
        value = next((v for v in value.values() if isinstance(v, list)), None)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a JSON list of strings")
    out = [" ".join(v.split()) for v in value if v.strip()]
    if not out:
        raise ValueError("the list is empty")
    return out


class PropositionSplitter:
    """Splits chunks into propositions with *llm*; *count_tokens* / *window* are the embedder's."""

    def __init__(
        self,
        llm: ChatModel,
        count_tokens: Any,
        window: int,
        *,
        concurrency: int = 4,
        min_coverage: float = 0.5,
        max_tokens: int = 512,
        ledger: ChatLedger | None = None,
    ) -> None:
        self.llm, self.count_tokens, self.window = llm, count_tokens, window
        self.concurrency, self.min_coverage, self.max_tokens = concurrency, min_coverage, max_tokens
        self.ledger = ledger if ledger is not None else ChatLedger()
        self._lock = threading.Lock()
        self.dropped = 0  # propositions sharing no content word with their chunk
        self.restored = 0  # sentences the propositions missed, kept verbatim
        self.unusable = 0  # replies that were no JSON list of strings (the chunk kept whole)

    @property
    def signature(self) -> str:
        return f"{VERSION}:{self.llm.name}:{PROMPT_VERSION}:{self.min_coverage}"

    def split(self, title: str | None, chunks: Sequence[Chunk]) -> tuple[list[Chunk], list[Chunk]]:
        """``(propositions, sources)``: the proposition chunks (each with ``parent_id`` = its source chunk),
        linked prev/next, and the source chunks to store as their parents."""
        if not chunks:
            return [], []
        if self.concurrency <= 1 or len(chunks) == 1:
            replies = [self._ask(title, c) for c in chunks]
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(chunks))) as pool:
                replies = list(pool.map(lambda c: self._ask(title, c), chunks))
        out: list[Chunk] = []
        for source, reply in zip(chunks, replies, strict=True):
            if reply is None:  # kept whole, embedded as it would have been
                out.append(self._child(source, source.text, 0, len(source.text), len(out), source.embed_text))
                continue
            for text, (start, end) in self._mapped(source.text, reply):
                out.append(self._child(source, text, start, end, len(out)))
        linked = [
            dataclasses.replace(
                c,
                prev_id=out[i - 1].id if i > 0 else None,
                next_id=out[i + 1].id if i + 1 < len(out) else None,
            )
            for i, c in enumerate(out)
        ]
        sources = [dataclasses.replace(c, metadata={**c.metadata, "parent": True}) for c in chunks]
        return linked, sources

    # -- mapping ---------------------------------------------------------------------------------------
    def _mapped(self, text: str, reply: list[str]) -> list[tuple[str, tuple[int, int]]]:
        """Each kept proposition with its source span, and the sentences they missed, in text order."""
        spans = sentence_spans(text)
        words = [content_words(text[a:b]) for a, b in spans]
        kept: list[tuple[str, tuple[int, int]]] = []
        covered: set[str] = set()
        for proposition in reply:
            own = content_words(proposition)
            # the sentence it covers the largest share of (entities a proposition spells out for a
            # pronoun are shared with other sentences; what it states is its sentence's own words)
            best = max(range(len(spans)), key=lambda i: (len(own & words[i]) / max(len(words[i]), 1), -i))
            if not own & words[best]:
                with self._lock:
                    self.dropped += 1
                continue
            covered |= own
            kept.append((proposition, spans[best]))
        for i, (a, b) in enumerate(spans):
            if words[i] and len(words[i] & covered) / len(words[i]) < self.min_coverage:
                with self._lock:
                    self.restored += 1
                kept.append((text[a:b].strip(), (a, b)))
        kept.sort(key=lambda item: item[1][0])
        return kept

    def _child(
        self, source: Chunk, text: str, start: int, end: int, position: int, embed_text: str | None = None
    ) -> Chunk:
        if embed_text is None and self.count_tokens(text) > self.window:  # a runaway reply: within the window
            text = truncate_tokens(text, max(16, self.window // 2))
        meta = {
            **source.metadata,
            "proposition": True,
            "source_chunk": source.id,
            "source_start": start,
            "source_end": end,
        }
        meta.pop("context_chars", None)
        return Chunk.create(
            source.document_id,
            text,
            position,
            section_path=source.section_path,
            page=source.page,
            page_end=source.page_end,
            parent_id=source.id,
            metadata=meta,
            tenant=source.tenant,
            acl=source.acl,
            embed_text=embed_text,
        )

    # -- the model -------------------------------------------------------------------------------------
    def _ask(self, title: str | None, chunk: Chunk) -> list[str] | None:
        head = f"Title: {title}\n" if title else ""
        section = f"Section: {chunk.section}\n" if chunk.section else ""
        messages = [Message("system", SYSTEM), Message("user", f"{head}{section}Passage:\n{chunk.text}")]
        started = time.perf_counter()
        try:
            response = self.llm.chat(messages, temperature=0.0, max_tokens=self.max_tokens, json_schema=SCHEMA)
        except Exception as exc:  # an optional stage never fails ingestion: the chunk stays whole
            self.ledger.record_failure(time.perf_counter() - started)
            log.warning("propositions_failed: %s", exc)
            return None
        self.ledger.record(response.usage, response.seconds or time.perf_counter() - started)
        try:
            return list(parse_json(response.text, _propositions))
        except GenerationError as exc:
            with self._lock:
                self.unusable += 1
            log.warning("propositions_failed: %s", exc)
            return None
