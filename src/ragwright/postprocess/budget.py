"""The token budget: whole chunks dropped, lowest ranked first, until the set fits.

Never truncates a chunk — a chunk cut mid-sentence is evidence an answer can cite while it no longer
supports what it says. Counted in cl100k_base. Every drop is logged (``budget_dropped``) with counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


def apply_budget(items: Sequence[T], text: Callable[[T], str], max_tokens: int | None) -> list[T]:
    """Keep items in rank order while the running total fits; drop the rest, lowest ranked first."""
    if max_tokens is None:
        return list(items)
    from ragwright.chunk.tokens import count_tokens

    costs = [count_tokens(text(item)) for item in items]
    kept = list(items)
    total = sum(costs)
    dropped = 0
    while kept and total > max_tokens:
        total -= costs[len(kept) - 1]
        kept.pop()
        dropped += 1
    if dropped:
        log.info(
            "budget_dropped: %d of %d chunks dropped to fit max_context_tokens=%d (kept %d tokens, %d chunks)",
            dropped,
            len(items),
            max_tokens,
            total,
            len(kept),
        )
    return kept
