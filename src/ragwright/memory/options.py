"""Conversation memory's options: the token budget of the history and the optional persistent memory.

:class:`MemoryOptions` (the ``[memory]`` table of ``ragwright.toml``) budgets a conversation in
``cl100k_base`` tokens — the encoding ``max_context_tokens`` counts sources in, so the two halves of a
prompt agree about what a token is. :class:`PersistentMemoryOptions` (``[memory.persistent]``)
switches on a per-identity memory recalled by similarity. Every value is checked on construction: a bad
one raises :class:`~ragwright.errors.ConfigError` naming the field, the value and what is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ragwright._validate import OptionsBase, check_bool, check_choice, check_float, check_int
from ragwright.errors import ConfigError

SummaryMode = Literal["auto", "llm", "extractive", "off"]
CondenseMode = Literal["auto", "llm", "heuristic", "off"]
SUMMARY_MODES: Final[tuple[str, ...]] = ("auto", "llm", "extractive", "off")
CONDENSE_MODES: Final[tuple[str, ...]] = ("auto", "llm", "heuristic", "off")


@dataclass(frozen=True)
class PersistentMemoryOptions(OptionsBase):
    """A memory kept across conversations, per identity (tenant + user), recalled by similarity.

    * ``top_k``: at most this many remembered items go into a prompt.
    * ``min_score``: the minimum cosine similarity of a recalled item (from -1.0 to 1.0, finite).
      ``0.0`` (the default, as for retrieval's ``min_score``) recalls up to ``top_k`` regardless of
      score. A memory store whose scores are on an opaque ranking scale (``ScoreScale.OPAQUE_RANKING``)
      skips the threshold and takes its results in rank order: a similarity cut-off would filter an
      ordinal score arbitrarily.
    * ``remember_turns``: store each answered question with its answer (declines are not stored);
      ``False`` keeps only what :meth:`remember` is told explicitly.
    * ``max_recall_tokens``: the recalled items' share of the prompt (cl100k tokens; lowest-ranked
      items are dropped whole until they fit).
    * ``max_items``: items kept per identity; the oldest are forgotten beyond it.
    """

    top_k: int = 3
    min_score: float = 0.0
    remember_turns: bool = True
    max_recall_tokens: int = 256
    max_items: int = 1000

    def __post_init__(self) -> None:
        check_int("memory.persistent.top_k", self.top_k, minimum=1)
        check_float("memory.persistent.min_score", self.min_score, lo=-1.0, hi=1.0)
        check_bool("memory.persistent.remember_turns", self.remember_turns)
        check_int("memory.persistent.max_recall_tokens", self.max_recall_tokens, minimum=16)
        check_int("memory.persistent.max_items", self.max_items, minimum=1)


@dataclass(frozen=True)
class MemoryOptions(OptionsBase):
    """How a conversation's history is kept within a budget (a conversation memory pipeline).

    * ``budget_tokens``: cl100k tokens for the system prompt(s), the history and the current question
      together (the retrieved sources have their own budget, ``max_context_tokens``). The system
      prompt and the question are never dropped, even when they alone exceed it (logged); the newest
      turns are kept whole, the oldest go first.
    * ``summarize``: what happens to the turns that do not fit — ``"auto"`` (default): summarised by
      the chat model when one is configured, else extractively (the first sentence of each dropped
      message); ``"llm"``: the chat model (a configuration error without one); ``"extractive"``;
      ``"off"``: dropped. A chat model that fails degrades to the extractive summary (logged
      ``memory_summary_failed``). Every drop and summary is logged with its counts.
    * ``summary_max_tokens``: the summary's share of the budget (less than ``budget_tokens``).
    * ``condense``: how a follow-up question becomes a standalone one for retrieval — ``"auto"``
      (default) and ``"heuristic"``: the heuristic (a question with a personal pronoun carries the
      names of the earlier questions it leans on), which beat the local chat model's condensing on
      held-out data (benchmarks/conversation_memory.py: SQuAD 2.0 test articles, nDCG@10 −0.117 for
      the 1.5B model, −0.100 for the 0.5B on the dev articles); ``"llm"``: the chat model (opt-in; a
      configuration error without one; a failure falls back to the heuristic); ``"off"``.
    * ``history_turns``: how many recent messages the condenser reads.
    * ``persistent``: :class:`PersistentMemoryOptions`, or ``None`` (default) for none.
    """

    budget_tokens: int = 2048
    summarize: SummaryMode = "auto"
    summary_max_tokens: int = 256
    condense: CondenseMode = "auto"
    history_turns: int = 6
    persistent: PersistentMemoryOptions | None = None

    def __post_init__(self) -> None:
        check_int("memory.budget_tokens", self.budget_tokens, minimum=64)
        check_choice("memory.summarize", self.summarize, SUMMARY_MODES)
        check_int("memory.summary_max_tokens", self.summary_max_tokens, minimum=16)
        if self.summary_max_tokens >= self.budget_tokens:
            raise ConfigError.invalid(
                "memory.summary_max_tokens",
                self.summary_max_tokens,
                f"an integer below memory.budget_tokens ({self.budget_tokens}); lower it or raise budget_tokens",
            )
        check_choice("memory.condense", self.condense, CONDENSE_MODES)
        check_int("memory.history_turns", self.history_turns, minimum=0)
        if self.persistent is not None and not isinstance(self.persistent, PersistentMemoryOptions):
            raise ConfigError.invalid(
                "memory.persistent", self.persistent, "a PersistentMemoryOptions, or None for no persistent memory"
            )
