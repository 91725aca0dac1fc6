"""The chunkers' options, beside the chunkers (re-exported by :mod:`ragwright.options`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragwright._validate import OptionsBase, _is_int, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError


@dataclass(frozen=True)
class ChunkingOptions(OptionsBase):
    """Options of the chunkers.

    * ``max_tokens``: the budget per chunk in ``cl100k_base`` tokens (section prefix and overlap
      included). Independently, no chunk ever exceeds the embedder's window in the embedder's own
      tokens (the chunker asks the embedder), so nothing is silently truncated when embedded.
    * ``min_tokens``: the smallest chunk the recursive and semantic chunkers make on purpose (tiny
      segments are merged into a neighbour within their section); a short section stays short.
    * ``prefix_section_path``: embed ``"A > B"`` before the chunk text (the displayed text is the chunk).
    * ``strategy``: ``"structural"`` (default), ``"recursive"``, ``"semantic"`` or ``"sentence_window"``
      (one chunk per sentence carrying ``window_sentences`` neighbours on each side; see :func:`make_chunker`).
    * ``overlap``: ``"none"`` (default: chunks link to their neighbours, retrieval expands),
      ``"sentences"`` (repeat the last ``overlap_sentences`` sentences of the previous chunk) or
      ``"tokens"`` (repeat about ``overlap_tokens`` cl100k tokens, starting at a word). Overlap never
      crosses a heading; each chunk records the repeated prefix length in ``metadata["overlap_chars"]``.
    * ``breakpoint_percentile``: the semantic chunker splits where the distance between neighbouring
      sentence windows is above this percentile of the document's distances; ``sentence_buffer``
      neighbours on each side of a sentence are embedded with it.
    * ``context``: contextual enrichment, a short prefix per chunk that is embedded and indexed for
      BM25 but never displayed (:mod:`ragwright.chunk.enrich`): ``"none"`` (default), ``"extractive"``
      (the document title and its lead sentences, no model) or ``"llm"`` (a sentence the chat model
      writes to situate each chunk in its document). ``context_tokens`` bounds the prefix (cl100k).
    * ``late_chunking``: each chunk's vector is pooled from token embeddings computed over its whole
      document, in windows of the embedder's size sharing ``late_overlap_tokens`` (embedder tokens; by
      default a quarter of the window) (:mod:`ragwright.chunk.late`); needs a local BERT-style ONNX embedder.
    * ``propositions``: the chat model splits each chunk into self-contained propositions, which are
      embedded and searched; a hit returns its source chunk (:mod:`ragwright.chunk.propositions`).
    """

    max_tokens: int = 400
    min_tokens: int = 16
    prefix_section_path: bool = True
    strategy: Literal["structural", "recursive", "semantic", "sentence_window"] = "structural"
    overlap: Literal["none", "sentences", "tokens"] = "none"
    overlap_sentences: int = 1
    overlap_tokens: int = 40
    breakpoint_percentile: float = 90.0
    sentence_buffer: int = 1
    window_sentences: int = 2
    context: Literal["none", "extractive", "llm"] = "none"
    context_tokens: int = 64
    late_chunking: bool = False
    late_overlap_tokens: int | None = None
    propositions: bool = False

    def __post_init__(self) -> None:
        check_int("max_tokens", self.max_tokens, minimum=16)
        check_int("min_tokens", self.min_tokens, minimum=0)
        if self.min_tokens >= self.max_tokens:
            raise ConfigError.invalid("min_tokens", self.min_tokens, f"an integer < max_tokens ({self.max_tokens})")
        check_bool("prefix_section_path", self.prefix_section_path)
        check_choice("strategy", self.strategy, ("structural", "recursive", "semantic", "sentence_window"))
        check_choice("overlap", self.overlap, ("none", "sentences", "tokens"))
        if not _is_int(self.overlap_sentences) or not 1 <= self.overlap_sentences <= 2:
            raise ConfigError.invalid("overlap_sentences", self.overlap_sentences, "an integer from 1 to 2")
        check_int("overlap_tokens", self.overlap_tokens, minimum=1)
        limit = self.max_tokens // 2
        if self.overlap == "tokens" and self.overlap_tokens > limit:
            raise ConfigError.invalid(
                "overlap_tokens", self.overlap_tokens, f"an integer from 1 to max_tokens // 2 ({limit})"
            )
        check_float("breakpoint_percentile", self.breakpoint_percentile, lo=0.0, hi=100.0, lo_open=True)
        if not _is_int(self.sentence_buffer) or not 0 <= self.sentence_buffer <= 3:
            raise ConfigError.invalid("sentence_buffer", self.sentence_buffer, "an integer from 0 to 3")
        if not _is_int(self.window_sentences) or not 1 <= self.window_sentences <= 10:
            raise ConfigError.invalid("window_sentences", self.window_sentences, "an integer from 1 to 10")
        check_choice("context", self.context, ("none", "extractive", "llm"))
        if not _is_int(self.context_tokens) or not 8 <= self.context_tokens <= 256:
            raise ConfigError.invalid("context_tokens", self.context_tokens, "an integer from 8 to 256")
        check_bool("late_chunking", self.late_chunking)
        check_int("late_overlap_tokens", self.late_overlap_tokens, minimum=0, optional=True)
        check_bool("propositions", self.propositions)
