"""Quoted phrases: ``"exact words"`` in a query asks for that wording.

The words of a phrase take part in every arm as usual; then the results whose text holds each quoted
phrase — the same words, in the same order, adjacent (case-folded, punctuation ignored; CJK compared as
its bigrams) — move ahead of those that do not, keeping their order. Each such result carries a
``phrase`` arm in its evidence. A query without quotes, or with an unbalanced quote, is untouched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from ragwright.index.analyzers import tokenize
from ragwright.model.results import ArmHit, SearchResult

__all__ = ["apply_phrases", "quoted_phrases"]

_QUOTED: Final = re.compile(r'"([^"]+)"|“([^”]+)”|„([^“”]+)[“”]|«\s*([^»]+?)\s*»')


def quoted_phrases(query: str) -> list[tuple[str, ...]]:
    """The quoted phrases of *query* as token sequences (single words and empty quotes are dropped:
    a quoted word is matched as a word already)."""
    out: list[tuple[str, ...]] = []
    for match in _QUOTED.finditer(query):
        text = next(g for g in match.groups() if g is not None)
        tokens = tuple(tokenize(text))
        if len(tokens) > 1 and tokens not in out:
            out.append(tokens)
    return out


def _holds(tokens: Sequence[str], phrase: tuple[str, ...]) -> bool:
    text = " " + " ".join(tokens) + " "
    return " " + " ".join(phrase) + " " in text


def apply_phrases(results: list[SearchResult], phrases: Sequence[tuple[str, ...]]) -> list[SearchResult]:
    """*results* with those holding every phrase first (order kept within each group)."""
    if not phrases or not results:
        return results
    matched: list[SearchResult] = []
    others: list[SearchResult] = []
    for r in results:
        tokens = tokenize(r.chunk.text_for_embedding)
        if all(_holds(tokens, p) for p in phrases):
            hit = ArmHit(len(matched) + 1, 1.0)
            matched.append(replace(r, arms={**r.arms, "phrase": hit}))
        else:
            others.append(r)
    return matched + others
