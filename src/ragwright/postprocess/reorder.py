"""Lost-in-the-middle reordering: the best results at both ends of the context, the weakest in the middle.

Language models use the start and the end of a long context best (Liu et al. 2024, "Lost in the
Middle: How Language Models Use Long Contexts").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def lost_in_the_middle(items: Sequence[T]) -> list[T]:
    """Rank 1 first, rank 2 last, rank 3 second, rank 4 second to last, … (ranks alternate ends)."""
    front: list[T] = []
    back: list[T] = []
    for i, item in enumerate(items):
        (front if i % 2 == 0 else back).append(item)
    return front + back[::-1]
