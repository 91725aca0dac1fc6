"""Contextual compression: keep the sentences of a passage that answer the question (extractive
compression as in RECOMP: Xu, Shi & Choi 2024, "RECOMP: Improving Retrieval-Augmented LMs with
Compression and Selective Augmentation").

* :func:`apply_windows` — sentence-window chunks hand over their window instead of the sentence.
* :class:`EmbeddingCompressor` — extractive: every sentence of every passage embedded in one batch,
  the ones whose cosine to the query reaches ``min_similarity`` kept **in their original order**
  (the best one always), up to ``max_sentences`` per passage.
* :class:`LlmCompressor` — the model is asked to copy the relevant sentences verbatim; a returned
  sentence is kept only when it occurs in the passage (no paraphrase, no invention slips through).

Compression never loses a passage: when nothing qualifies or the stage fails, the full passage is
used (``compressed_text`` stays ``None``) and ``compression_failed`` is logged. The original text is
always kept beside the compressed one (``SearchResult.compressed_text``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragwright.chunk.split import sentences
from ragwright.model.results import SearchResult

if TYPE_CHECKING:
    from ragwright.models.embedders.base import Embedder
    from ragwright.models.llms.base import ChatModel

log = logging.getLogger(__name__)
_SPACE = re.compile(r"\s+")


def apply_windows(results: Sequence[SearchResult]) -> list[SearchResult]:
    """Sentence-window hits carry their window as text; the sentence moves to ``matched_sentence``."""
    out = []
    for r in results:
        window = r.chunk.metadata.get("window")
        if isinstance(window, str) and window and window != r.chunk.text:
            meta = {k: v for k, v in r.chunk.metadata.items() if k != "window"}
            chunk = replace(r.chunk, text=window, metadata={**meta, "matched_sentence": r.chunk.text})
            r = replace(r, chunk=chunk)
        out.append(r)
    return out


def _units(text: str) -> list[str]:
    """Sentences of prose; table rows and code lines stay whole lines."""
    out: list[str] = []
    for block in text.split("\n"):
        line = block.strip()
        if not line:
            continue
        out.extend([line] if line.startswith(("|", "```")) else sentences(line))
    return out


class EmbeddingCompressor:
    """Extractive compression by embedding similarity to the query."""

    def __init__(self, embedder: Embedder, *, min_similarity: float = 0.35, max_sentences: int | None = None) -> None:
        self.embedder, self.min_similarity, self.max_sentences = embedder, min_similarity, max_sentences

    def compress(self, query: str, results: Sequence[SearchResult], query_vector: Any = None) -> list[SearchResult]:
        import numpy as np

        if not results:
            return []
        try:
            units = [_units(r.chunk.text) for r in results]
            flat = [u for us in units for u in us]
            if not flat:
                return list(results)
            qv = query_vector if query_vector is not None else self.embedder.embed_query(query)
            sims = np.asarray(self.embedder.embed_documents(flat), dtype=np.float32) @ np.asarray(qv, dtype=np.float32)
        except Exception as exc:  # an optional stage degrades to the full passages
            log.warning("compression_failed: %s; using the full passages", exc)
            return list(results)
        out, offset = [], 0
        for r, us in zip(results, units, strict=True):
            scores = sims[offset : offset + len(us)]
            offset += len(us)
            if len(us) <= 1:
                out.append(r)
                continue
            keep = [i for i in range(len(us)) if scores[i] >= self.min_similarity] or [int(np.argmax(scores))]
            if self.max_sentences is not None and len(keep) > self.max_sentences:
                keep = sorted(sorted(keep, key=lambda i: -float(scores[i]))[: self.max_sentences])
            text = " ".join(us[i] for i in keep)
            out.append(replace(r, compressed_text=text) if len(keep) < len(us) else r)
        return out


_PROMPT = (
    "Copy, word for word, the sentences of the passage that help answer the question. One sentence per "
    "line. Do not change, summarise or add anything. If no sentence helps, reply NONE.\n\n"
    "Question: {query}\n\nPassage:\n<<<\n{passage}\n>>>"
)


class LlmCompressor:
    """Verbatim extraction by a chat model, checked against the passage."""

    def __init__(self, llm: ChatModel, *, max_tokens: int = 256) -> None:
        self.llm, self.max_tokens = llm, max_tokens

    def compress(self, query: str, results: Sequence[SearchResult], query_vector: Any = None) -> list[SearchResult]:
        from ragwright.models.llms.base import Message

        out = []
        for r in results:
            try:
                reply = self.llm.chat(
                    [Message("user", _PROMPT.format(query=query, passage=r.chunk.text))],
                    temperature=0.0,
                    max_tokens=self.max_tokens,
                ).text
            except Exception as exc:
                log.warning("compression_failed: %s: %s; using the full passage", self.llm.name, exc)
                out.append(r)
                continue
            source = _SPACE.sub(" ", r.chunk.text)
            kept = [
                s
                for line in reply.splitlines()
                if (s := _SPACE.sub(" ", line.strip().strip("-*• ").strip())) and s.upper() != "NONE" and s in source
            ]
            if kept and len(" ".join(kept)) < len(source):
                out.append(replace(r, compressed_text=" ".join(dict.fromkeys(kept))))
            else:
                if reply.strip() and reply.strip().upper() != "NONE" and not kept:
                    log.info("compression_unverified: no extracted sentence occurs in the passage; keeping it whole")
                out.append(r)
        return out
