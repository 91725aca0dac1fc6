"""Splitting oversized units: sentences, words, table row groups, code line groups."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

TokenCounter = Callable[[str], int]

# A sentence ends at . ! ? (or CJK 。！？) followed by space or end; abbreviations stay imperfect.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9À-ÖØ-Þ])|(?<=[。！？])")


def sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping every character except the separating spaces."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def pack(units: Iterable[str], budget: int, count: TokenCounter, joiner: str = " ") -> list[str]:
    """Greedily pack units into groups of at most *budget* tokens; an oversized unit is split by words."""
    out: list[str] = []
    current: list[str] = []
    used = 0
    for unit in units:
        n = count(unit)
        if n > budget:
            if current:
                out.append(joiner.join(current))
                current, used = [], 0
            out.extend(split_words(unit, budget, count))
            continue
        if current and used + n + 1 > budget:
            out.append(joiner.join(current))
            current, used = [], 0
        current.append(unit)
        used += n + (1 if len(current) > 1 else 0)
    if current:
        out.append(joiner.join(current))
    return out


def split_words(text: str, budget: int, count: TokenCounter) -> list[str]:
    """Last resort for a unit with no smaller boundary: pieces of whole words within *budget*."""
    words = text.split()
    out: list[str] = []
    current: list[str] = []
    used = 0
    for word in words:
        n = count(word) or 1
        if current and used + n > budget:
            out.append(" ".join(current))
            current, used = [], 0
        if n > budget:  # a single enormous "word" (a URL, a hash): cut by characters
            step = max(1, len(word) * budget // (n + 1))
            out.extend(word[i : i + step] for i in range(0, len(word), step))
            continue
        current.append(word)
        used += n
    if current:
        out.append(" ".join(current))
    return out


def split_table(table: str, budget: int, count: TokenCounter) -> list[str]:
    """Split a Markdown table into row groups, repeating the header (and separator) in each."""
    lines = table.split("\n")
    header: list[str] = []
    if len(lines) >= 2 and set(lines[1].replace("|", "").replace(" ", "")) <= set("-:"):
        header, lines = lines[:2], lines[2:]
    head_text = "\n".join(header)
    room = max(1, budget - (count(head_text) + 1 if header else 0))
    groups = pack(lines, room, count, joiner="\n")
    return [f"{head_text}\n{g}" if header else g for g in groups]


def split_code(code: str, budget: int, count: TokenCounter) -> list[str]:
    """Split code at line boundaries (blank lines preferred by packing whole lines in order)."""
    return pack(code.split("\n"), budget, count, joiner="\n")
