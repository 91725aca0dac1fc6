"""Conversation memory (a conversation memory pipeline and a persistent memory).

* :mod:`~ragwright.memory.options` — :class:`MemoryOptions` (the budget in cl100k tokens, summaries,
  condensing) and :class:`PersistentMemoryOptions` (recall per identity with a minimum score);
* :mod:`~ragwright.memory.budget` — the history fitted to the budget, newest turns kept, the oldest
  summarised or dropped, the system prompt and question never dropped;
* :mod:`~ragwright.memory.summarize` — LLM and extractive summaries;
* :mod:`~ragwright.memory.condense` — follow-up questions made standalone for retrieval;
* :mod:`~ragwright.memory.store` — where memory lives (in process, or tables in the SQLite store's
  file), strictly per :class:`MemoryScope` (tenant + user);
* :mod:`~ragwright.memory.recall` — similarity recall with the minimum score (skipped, rank order
  taken, on an opaque score scale);
* :mod:`~ragwright.memory.conversation` — one conversation's turns and summary.

The facade is :mod:`ragwright.rag_memory` (``rag.conversation()``).
"""

from __future__ import annotations

from ragwright.memory.budget import MESSAGE_OVERHEAD, BudgetReport, FittedHistory, fit_history, message_tokens
from ragwright.memory.condense import Condensed, condense_question, heuristic_condense
from ragwright.memory.conversation import ConversationMemory
from ragwright.memory.options import MemoryOptions, PersistentMemoryOptions
from ragwright.memory.recall import recall, recall_text
from ragwright.memory.store import (
    InProcessMemory,
    MemoryBackend,
    MemoryHit,
    MemoryItem,
    MemoryScope,
    SessionState,
    SqliteMemory,
    SqlMemory,
    open_memory,
)

__all__ = [
    "MESSAGE_OVERHEAD",
    "BudgetReport",
    "Condensed",
    "ConversationMemory",
    "FittedHistory",
    "InProcessMemory",
    "MemoryBackend",
    "MemoryHit",
    "MemoryItem",
    "MemoryOptions",
    "MemoryScope",
    "PersistentMemoryOptions",
    "SessionState",
    "SqlMemory",
    "SqliteMemory",
    "condense_question",
    "fit_history",
    "heuristic_condense",
    "message_tokens",
    "open_memory",
    "recall",
    "recall_text",
]
