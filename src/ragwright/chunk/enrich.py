"""Contextual enrichment: a short prefix that situates each chunk (the LLM mode is Anthropic's
"contextual retrieval", 2024).

The prefix goes into ``Chunk.embed_text`` — what is embedded and what BM25 indexes — and never into
``Chunk.text``, which is displayed and cited. Two ways to write it:

* ``"extractive"`` (no model): the document's title (unless the chunk's section path already starts
  with it) and the document's *gist*, its lead sentences up to ``context_tokens`` cl100k tokens; a gist
  sentence the chunk already holds is left out (so a one-chunk document gains at most its title);
* ``"llm"``: one or two sentences a chat model writes per chunk from the document and the chunk
  ("contextual retrieval"). The document comes first in the prompt and is the same for all of a
  document's chunks, so a backend with a prompt/prefix cache (llama.cpp, hosted APIs) pays for it once;
  a document's chunks are sent ``concurrency`` at a time. A call that fails falls back to the extractive
  prefix for that chunk (event ``context_llm_failed``); calls, tokens and seconds go to :attr:`ledger`
  (and from there to the ingest report).

Every enriched ``embed_text`` stays within the embedder's window: the prefix is shortened (gist sentences
dropped from the end, then the title; the model's sentence cut at a word boundary) until it fits, so the
chunk itself is never cut off. A chunk that leaves less than :data:`MIN_ROOM` embedder tokens of its
window free (a full-size chunk) is not sent to the model at all: no sentence could be kept, and the call
would be paid for nothing; it gets the extractive prefix if one fits, as after a failed call.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal

from ragwright.chunk import tokens
from ragwright.chunk.split import TokenCounter, sentences
from ragwright.model.chunk import Chunk
from ragwright.model.document import Document, ElementKind
from ragwright.models.llms.base import ChatLedger, Message

if TYPE_CHECKING:
    from ragwright.models.llms.base import ChatModel

log = logging.getLogger(__name__)

VERSION = "context/1"
PROMPT_VERSION = "situate/1"
SITUATE_SYSTEM = (
    "In one or two sentences, describe where this chunk fits in the document and what it is about, so it "
    "can be understood on its own. Use only the information provided. Output only the description."
)
MIN_ROOM = 8  # embedder tokens a chunk must leave free in its window to be worth a model call
_BODY = (ElementKind.PARAGRAPH, ElementKind.LIST_ITEM)
_SEP = "\n\n"


def truncate_tokens(text: str, limit: int) -> str:
    """*text* cut to at most *limit* cl100k tokens, at a word boundary when one is near."""
    ids = tokens.encode(text)
    if len(ids) <= limit:
        return text
    cut = tokens.decode(ids[:limit])
    space = cut.rfind(" ")
    return (cut[:space] if space > len(cut) // 2 else cut).rstrip()


def document_gist(document: Document, limit: int) -> list[str]:
    """The lead sentences of the document's first section with body text (not headings or tables)
    within *limit* cl100k tokens; the first sentence alone is cut to the limit when it is longer."""
    out: list[str] = []
    used = 0
    for element in document.elements:
        if out and element.kind in (ElementKind.HEADING, ElementKind.TITLE):
            break  # the gist is the opening section's lead
        if element.kind not in _BODY or not element.text.strip():
            continue
        for sentence in sentences(" ".join(element.text.split())):
            n = tokens.count_tokens(sentence) + (1 if out else 0)
            if used + n > limit:
                return out or [truncate_tokens(sentence, limit)]
            out.append(sentence)
            used += n
    return out


@dataclasses.dataclass
class ContextEnricher:
    """Writes each chunk's context prefix. *count_tokens* and *window* are the embedder's."""

    mode: Literal["extractive", "llm"]
    count_tokens: TokenCounter
    window: int
    context_tokens: int = 64
    llm: ChatModel | None = None
    document_tokens: int = 1500
    concurrency: int = 4
    ledger: ChatLedger = dataclasses.field(default_factory=ChatLedger)

    def __post_init__(self) -> None:
        if self.mode == "llm" and self.llm is None:
            raise ValueError("contextual enrichment with mode 'llm' needs a chat model")

    @property
    def signature(self) -> str:
        """What changes the prefixes: recorded in the chunker's fingerprint, so changing it re-chunks."""
        base = f"{VERSION}:{self.mode}:{self.context_tokens}"
        if self.mode == "llm" and self.llm is not None:
            return f"{base}:{self.llm.name}:{PROMPT_VERSION}:{self.document_tokens}"
        return base

    def enrich(self, document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        """*chunks* (of *document*) with their context prefixed to ``embed_text``."""
        if not chunks:
            return []
        title = " ".join((document.title or "").split())
        title = truncate_tokens(title, self.context_tokens) if title else ""
        gist = document_gist(document, self.context_tokens - (tokens.count_tokens(title) if title else 0))
        if self.mode == "llm":
            written = self._situate(document, title, chunks)
        else:
            written = [None] * len(chunks)
        out = []
        for chunk, sentence in zip(chunks, written, strict=True):
            if sentence:
                words = sentence.split()
                cuts = sorted({len(words) * k // 4 for k in (3, 2, 1)} - {0}, reverse=True)
                candidates = [[sentence], *([" ".join(words[:n])] for n in cuts)]
            else:
                candidates = self._extractive(chunk, title, gist)
            out.append(self._apply(chunk, candidates))
        return out

    # -- extractive ----------------------------------------------------------------------------------
    def _extractive(self, chunk: Chunk, title: str, gist: list[str]) -> list[list[str]]:
        """Candidate prefixes, longest first, each a list of lines."""
        show_title = bool(title) and not (chunk.section_path and chunk.section_path[0] == title)
        head = [title] if show_title else []
        lead = [s for s in gist if s not in chunk.text]
        candidates = [[*head, " ".join(lead[:k])] for k in range(len(lead), 0, -1)]
        if head:
            candidates.append(head)
        return candidates

    def _apply(self, chunk: Chunk, candidates: list[list[str]]) -> Chunk:
        base = chunk.text_for_embedding
        for lines in candidates:
            prefix = "\n".join(line for line in lines if line)
            if not prefix:
                continue
            text = f"{prefix}{_SEP}{base}"
            if self.count_tokens(text) <= self.window:
                meta = {**chunk.metadata, "context_chars": len(prefix)}
                return dataclasses.replace(chunk, embed_text=text, metadata=meta)
        return chunk

    # -- LLM -----------------------------------------------------------------------------------------
    def _situate(self, document: Document, title: str, chunks: Sequence[Chunk]) -> list[str | None]:
        body = truncate_tokens(_SEP.join(c.text for c in chunks), self.document_tokens)
        head = f'<document title="{title}">' if title else "<document>"
        prefix = f"{head}\n{body}\n</document>\n"  # identical for every chunk: the cacheable part

        def one(chunk: Chunk) -> str | None:
            return self._ask(
                [Message("system", SITUATE_SYSTEM), Message("user", f"{prefix}<chunk>\n{chunk.text}\n</chunk>")]
            )

        asked = [i for i, c in enumerate(chunks) if self._room(c) >= MIN_ROOM]  # none where nothing could fit
        if self.concurrency <= 1 or len(asked) <= 1:
            replies = [one(chunks[i]) for i in asked]
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(asked))) as pool:
                replies = list(pool.map(lambda i: one(chunks[i]), asked))
        written = dict(zip(asked, replies, strict=True))
        return [written.get(i) for i in range(len(chunks))]

    def _room(self, chunk: Chunk) -> int:
        """Embedder tokens of the window left for a prefix (after the separator) before *chunk*'s text."""
        return self.window - self.count_tokens(f"{_SEP}{chunk.text_for_embedding}")

    def _ask(self, messages: list[Message]) -> str | None:
        assert self.llm is not None
        started = time.perf_counter()
        try:
            response = self.llm.chat(messages, temperature=0.0, max_tokens=max(2 * self.context_tokens, 48))
        except Exception as exc:  # an optional stage never fails ingestion: the extractive prefix is used
            self.ledger.record_failure(time.perf_counter() - started)
            log.warning("context_llm_failed: %s", exc)
            return None
        self.ledger.record(response.usage, response.seconds or time.perf_counter() - started)
        text = " ".join(response.text.split())
        return truncate_tokens(text, self.context_tokens) if text else None
