"""Overlap between consecutive chunks of one section.

``overlap="sentences"`` repeats the last ``overlap_sentences`` whole sentences of the previous chunk;
``overlap="tokens"`` repeats about ``overlap_tokens`` cl100k tokens, starting at a word. Overlap is
taken only from prose (paragraphs, quotes) at the end of the previous chunk — never from a table,
code or list — and never across a heading. The chunker offers the candidates largest first and
keeps the largest that fits the budget with the chunk (none when nothing fits), so bounds still
hold; the chunk records the repeated prefix length in ``metadata["overlap_chars"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ragwright.chunk import tokens
from ragwright.chunk.options import ChunkingOptions
from ragwright.chunk.split import Budget, Cost, sentences, within
from ragwright.model.document import ElementKind

#: Element kinds overlap may repeat text from.
PROSE = frozenset({ElementKind.PARAGRAPH, ElementKind.QUOTE})


class _UnitLike(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def kind(self) -> ElementKind: ...

    @property
    def joiner(self) -> str: ...


def reserve(options: ChunkingOptions, budget: Budget, prose: Sequence[str]) -> Cost:
    """Room to keep free when packing a section so that the overlap usually fits untrimmed.

    Sized from the section's own *prose*: ``overlap_sentences`` times its 75th-percentile sentence,
    or ``overlap_tokens`` converted to the embedder's tokens at the section's ratio; at most 30 % of
    each limit.
    """
    zero = tuple(0 for _ in budget.limits)
    if options.overlap == "none" or not prose:
        return zero
    if options.overlap == "sentences":
        costs = sorted((budget.cost(s) for text in prose for s in sentences(text)), key=max)
        if not costs:
            return zero
        typical = costs[min(len(costs) - 1, (3 * len(costs)) // 4)]
        want = tuple(options.overlap_sentences * (c + 1) for c in typical)
    else:
        totals = [sum(parts) for parts in zip(*(budget.cost(t) for t in prose), strict=True)]
        ratios = [t / totals[0] if totals[0] else 1.0 for t in totals]
        want = tuple(int(options.overlap_tokens * r) + 2 for r in ratios)
    return tuple(min(w, int(limit * 0.3)) for w, limit in zip(want, budget.limits, strict=True))


def prose_tail(units: Sequence[_UnitLike]) -> str:
    """The trailing run of prose units of a chunk, joined as in the chunk."""
    run: list[_UnitLike] = []
    for unit in reversed(units):
        if unit.kind not in PROSE:
            break
        run.append(unit)
    run.reverse()
    if not run:
        return ""
    return run[0].text + "".join(u.joiner + u.text for u in run[1:])


def candidates(previous: Sequence[_UnitLike], options: ChunkingOptions, budget: Budget) -> list[str]:
    """Overlap texts to try for the chunk after *previous*, largest first, each within half the limits."""
    if options.overlap == "none":
        return []
    tail = prose_tail(previous)
    if not tail:
        return []
    out: list[str] = []
    if options.overlap == "sentences":
        sents = sentences(tail)
        for k in range(min(options.overlap_sentences, len(sents)), 0, -1):
            out.append(" ".join(sents[-k:]))
    else:
        ids = tokens.encode(tail)
        n = options.overlap_tokens
        while n >= 1:
            text = _token_suffix(tail, ids, n)
            if text and text not in out:
                out.append(text)
            n //= 2
    cap = tuple(limit // 2 for limit in budget.limits)
    return [c for c in out if c and within(budget.cost(c), cap)]


def _token_suffix(text: str, ids: list[int], n: int) -> str:
    """About the last *n* tokens of *text*, moved forward to start at a word."""
    if n >= len(ids):
        return text.strip()
    start = max(0, len(text) - len(tokens.decode(ids[-n:])))
    if start > 0 and not text[start - 1].isspace():
        nxt = next((i for i in range(start, len(text)) if text[i].isspace()), len(text))
        start = nxt
    return text[start:].strip()
