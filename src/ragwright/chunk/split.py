"""Splitting oversized units within a token budget: sentences, lines, words, table row groups, code lines.

A :class:`Budget` holds the limits a piece must satisfy — by default ``cl100k_base`` tokens
≤ ``max_tokens`` *and* the embedder's own tokens ≤ its window — and counts each distinct text once
(a per-document cache). Packing adds the counts of the pieces and their separators (an estimate that
is an upper bound in practice); every packed piece is then counted exactly and repaired when the
estimate was low, so every piece these functions return fits its room.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

TokenCounter = Callable[[str], int]
Cost = tuple[int, ...]

# A sentence ends at . ! ? (or CJK 。！？) followed by space and a capital or digit; abbreviations stay
# imperfect. Text with no capital letters at all (lower-cased corpora) ends sentences at any . ! ? + space.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9À-ÖØ-Þ])|(?<=[。！？])")
_SENTENCE_LOWER = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping every character except the separating spaces."""
    pattern = _SENTENCE_LOWER if text.islower() else _SENTENCE
    return [s.strip() for s in pattern.split(text) if s and s.strip()]


class Budget:
    """Token limits a text must satisfy, one per counter, with a cache of exact counts.

    >>> b = Budget([len], [10])
    >>> b.fits("abc"), b.fits("a" * 11)
    (True, False)
    """

    def __init__(self, counters: Sequence[TokenCounter], limits: Sequence[int]) -> None:
        if len(counters) != len(limits) or not counters:
            raise ValueError("a budget needs one limit per counter")
        self.counters = tuple(counters)
        self.limits: Cost = tuple(int(n) for n in limits)
        self._cache: list[dict[str, int]] = [{} for _ in self.counters]

    def fresh(self) -> Budget:
        """The same limits with an empty cache (one per document keeps memory bounded)."""
        return Budget(self.counters, self.limits)

    def _count(self, i: int, text: str) -> int:
        cache = self._cache[i]
        n = cache.get(text)
        if n is None:
            n = self.counters[i](text)
            if len(cache) < 200_000:
                cache[text] = n
        return n

    def cost(self, text: str) -> Cost:
        """Exact counts of *text*, one per counter (cached)."""
        return tuple(self._count(i, text) for i in range(len(self.counters)))

    def fits(self, text: str, room: Cost | None = None) -> bool:
        """Whether *text* fits *room* (default: the limits), counted exactly (stops at the first miss)."""
        room = self.limits if room is None else room
        return all(self._count(i, text) <= room[i] for i in range(len(self.counters)))

    def room_after(self, prefix: str, sep: str = "\n\n", floor: float = 0.5) -> Cost:
        """Room left once *prefix* and *sep* are paid for, never below ``floor`` × each limit."""
        used = add(self.cost(prefix), self.cost(sep))
        return tuple(max(int(limit * floor), limit - u) for limit, u in zip(self.limits, used, strict=True))


def add(*costs: Cost) -> Cost:
    """Element-wise sum of costs."""
    return tuple(sum(parts) for parts in zip(*costs, strict=True))


def within(cost: Cost, room: Cost) -> bool:
    """Whether every count of *cost* is within *room*."""
    return all(c <= r for c, r in zip(cost, room, strict=True))


def scale(room: Cost, factor: float, minimum: int = 1) -> Cost:
    """Each count of *room* times *factor* (rounded down, at least *minimum*)."""
    return tuple(max(minimum, int(r * factor)) for r in room)


def pack(texts: Iterable[str], room: Cost, budget: Budget, joiner: str = " ") -> list[str]:
    """Greedily join *texts* (in order) into pieces that fit *room*; an oversized text is split by words.

    Pieces of whitespace only (blank code lines that fell between groups) are dropped.
    """
    joined = ("".join(p) for p in pack_groups(list(texts), room, budget, joiner))
    return [p for p in joined if p.strip()]


def pack_groups(texts: Sequence[str], room: Cost, budget: Budget, joiner: str = " ") -> list[list[str]]:
    """Like :func:`pack` but keeps each piece as its parts interleaved with *joiner* (for callers that
    need the parts); oversized texts become word pieces of their own."""
    out: list[list[str]] = []
    current: list[str] = []
    used: Cost = tuple(0 for _ in room)
    sep = budget.cost(joiner)
    for text in texts:
        cost = budget.cost(text)
        if not within(cost, room):
            out.extend(_verified(current, room, budget))
            current, used = [], tuple(0 for _ in room)
            out.extend([w] for w in split_words(text, room, budget))
            continue
        step = add(used, sep, cost) if current else cost
        if current and not within(step, room):
            out.extend(_verified(current, room, budget))
            current, step = [], cost
        current.extend([joiner, text] if current else [text])
        used = step
    out.extend(_verified(current, room, budget))
    return out


def _verified(parts: list[str], room: Cost, budget: Budget) -> list[list[str]]:
    """Check a packed group exactly; peel parts off its end into groups of their own until it fits."""
    if not parts:
        return []
    tail: list[list[str]] = []
    while len(parts) > 1 and not budget.fits("".join(parts), room):
        tail.insert(0, [parts[-1]])
        parts = parts[:-2]  # drop the last part and the joiner before it
    return [parts, *tail]


def split_words(text: str, room: Cost, budget: Budget) -> list[str]:
    """Last resort for a unit with no smaller boundary: pieces of whole words within *room*."""
    out: list[str] = []
    for group in pack_groups_words(text.split(), room, budget):
        out.append(" ".join(group))
    return out


def pack_groups_words(words: Sequence[str], room: Cost, budget: Budget) -> list[list[str]]:
    """Words packed into groups that fit *room* when joined by spaces; a huge word is cut by characters."""
    out: list[list[str]] = []
    current: list[str] = []
    used: Cost = tuple(0 for _ in room)
    sep = budget.cost(" ")
    for word in words:
        cost = budget.cost(word)
        if not within(cost, room):
            if current:
                out.extend(_verified_words(current, room, budget))
                current, used = [], tuple(0 for _ in room)
            out.extend([piece] for piece in split_chars(word, room, budget))
            continue
        step = add(used, sep, cost) if current else cost
        if current and not within(step, room):
            out.extend(_verified_words(current, room, budget))
            current, step = [], cost
        current.append(word)
        used = step
    if current:
        out.extend(_verified_words(current, room, budget))
    return out


def _verified_words(words: list[str], room: Cost, budget: Budget) -> list[list[str]]:
    tail: list[list[str]] = []
    while len(words) > 1 and not budget.fits(" ".join(words), room):
        tail.insert(0, [words[-1]])
        words = words[:-1]
    return [words, *tail]


def split_chars(word: str, room: Cost, budget: Budget) -> list[str]:
    """Cut a single enormous "word" (a URL, a hash, unspaced CJK) into the longest prefixes that fit."""
    out: list[str] = []
    rest = word
    while rest:
        if budget.fits(rest, room):
            out.append(rest)
            break
        lo, hi = 1, len(rest)  # the longest prefix that fits lies in [lo, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if budget.fits(rest[:mid], room):
                lo = mid
            else:
                hi = mid
        out.append(rest[:lo])
        rest = rest[lo:]
    return out


#: A cell that is a number, an amount or a share ("18,870", "-3.5", "(12)", "$1.2", "45 %"): a data cell.
_NUMBER = re.compile(r"^[-+−(]?[$€£¥]?\s?\d[\d,.\s]*\s?[%‰]?\)?$")
#: At most this many body rows are read as the column labels under a sparse group row.
MAX_LABEL_ROWS = 3


def _row_cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _is_rule(line: str) -> bool:
    return bool(line.strip()) and set(line.replace("|", "").replace(" ", "")) <= set("-:")


def _label_rows(title: str, rows: Sequence[str]) -> int:
    """How many of the first body *rows* are column labels that belong to the header.

    Only under a sparse title row (at least half of its cells empty: the group labels of merged header
    cells, as PDF and spreadsheet tables give them), up to :data:`MAX_LABEL_ROWS` rows as wide as the
    title, each naming at least half of the columns and none of whose cells is a number, followed by a
    row that holds a number (data). A table whose body is text throughout keeps its rows as they are, and
    so does one whose first body row labels a group of rows ("Current assets:" over a balance sheet).
    """
    cells = _row_cells(title)
    if 2 * sum(not c for c in cells) < len(cells):
        return 0
    for n, row in enumerate(rows[: MAX_LABEL_ROWS + 1]):
        got = _row_cells(row)
        if len(got) != len(cells) or not row.strip().startswith("|"):
            return 0
        if any(_NUMBER.match(c) for c in got):
            return n  # the first data row
        if 2 * sum(bool(c) for c in got) < len(got):
            return 0  # a row naming few columns: a group of rows ("Current assets:"), not column labels
    return 0  # no data row within reach: a table of text


def table_parts(table: str) -> tuple[list[str], list[str], list[str]]:
    """A Markdown table's title and separator rows, the column-label rows under a sparse title row
    (see :func:`_label_rows`), and its body rows; no title when there is no separator row."""
    lines = table.split("\n")
    if len(lines) >= 2 and _is_rule(lines[1]):
        n = _label_rows(lines[0], lines[2:])
        return lines[:2], lines[2 : 2 + n], lines[2 + n :]
    return [], [], lines


def table_header(table: str) -> tuple[str, list[str]]:
    """A Markdown table's header (title row, separator row and any column-label rows under a sparse
    title row, joined) and its body rows."""
    title, labels, rows = table_parts(table)
    return "\n".join([*title, *labels]), rows


def header_forms(table: str) -> list[str]:
    """The headers :func:`split_table` may repeat over a table's row groups, in order of preference:
    the whole header; under a sparse title row, its column labels with the separator; the title and
    separator alone (none for a table without a separator row)."""
    title, labels, _ = table_parts(table)
    if not title:
        return []
    if not labels:
        return ["\n".join(title)]
    return ["\n".join([*title, *labels]), "\n".join([labels[0], title[1], *labels[1:]]), "\n".join(title)]


def _rows_room(header: str, rows: Sequence[str], room: Cost, budget: Budget) -> Cost | None:
    """The room rows have under *header* when it may be repeated: while it leaves a quarter of the
    room, or room for every row; ``None`` when it may not."""
    rows_room = tuple(r - h - s for r, h, s in zip(room, budget.cost(header), budget.cost("\n"), strict=True))
    roomy = all(x >= r // 4 for x, r in zip(rows_room, room, strict=True))
    if min(rows_room) > 0 and (roomy or all(within(budget.cost(row), rows_room) for row in rows)):
        return rows_room
    return None


def split_table(table: str, room: Cost, budget: Budget, lead: str | None = None) -> list[str]:
    """Split a Markdown table into row groups, repeating the header (and separator) in each.

    Rows are never split unless a single row alone exceeds the room (then by words). The header is
    repeated while it leaves a quarter of the room, or room for every row; a header larger than that
    becomes the first rows of the first group. Under a sparse title row (group labels over merged
    cells) the column-label rows belong to the header; when title and labels together are too large
    to repeat, the labels are repeated with the separator (they name the columns a row's cells are
    read by) and the title opens the first group only; failing that, the title and separator alone.

    A *lead* (the table's title or caption line, which precedes it) opens every group after the first
    as well, so a row read in a later chunk still says what table it belongs to — unless repeating it
    would cost the header a row group repeats; a row too large to share a chunk with both keeps its
    header without the lead.
    """
    pieces, form = _split_table(table, room, budget, "")
    if lead and len(pieces) > 1:
        led, led_form = _split_table(table, room, budget, f"{lead}\n\n")
        if led_form == form and form < _NO_HEADER:
            return led
    return pieces


_NO_HEADER = 3  # _split_table's form when no header could be repeated


def _split_table(table: str, room: Cost, budget: Budget, opening: str) -> tuple[list[str], int]:
    """:func:`split_table` with *opening* before the header of every group after the first (the first
    group is sized to leave room for it too, where the header allows); also which header form was
    repeated (0 whole, 1 labels, 2 title and separator, 3 none)."""
    _, labels, rows = table_parts(table)
    forms = header_forms(table)
    if not forms:
        return pack(rows, room, budget, joiner="\n"), _NO_HEADER
    header = forms[0]
    rows_room = _rows_room(opening + header, rows, room, budget)
    if rows_room is not None:
        return _groups(header, rows, rows_room, _rows_room(header, rows, room, budget), budget, opening), 0
    if labels:
        repeat = forms[1]
        rows_room = _rows_room(opening + repeat, rows, room, budget)
        if rows_room is not None and budget.fits(header, room):
            k = 0  # the rows that fit under the whole header (and the lead-in before it) open the first group
            ahead = opening if budget.fits(opening + header, room) else ""
            while k < len(rows) and budget.fits("\n".join([ahead + header, *rows[: k + 1]]), room):
                k += 1
            first = "\n".join([header, *rows[:k]])
            plain = _rows_room(repeat, rows, room, budget)
            rest = _groups(repeat, rows[k:], rows_room, plain, budget, opening, first=False)
            return [first, *rest], 1
        header, rows = forms[2], [*labels, *rows]
        rows_room = _rows_room(opening + header, rows, room, budget)
        if rows_room is not None:
            return _groups(header, rows, rows_room, _rows_room(header, rows, room, budget), budget, opening), 2
    return pack([*header.split("\n"), *rows], room, budget, joiner="\n"), _NO_HEADER


def _groups(
    header: str,
    rows: Sequence[str],
    rows_room: Cost,
    plain_room: Cost | None,
    budget: Budget,
    opening: str,
    *,
    first: bool = True,
) -> list[str]:
    """*rows* packed into *rows_room* under *opening* and *header* (the first group under *header* alone
    when *first*); a row too large for *rows_room* that fits *plain_room* (under the header alone) is a
    group of its own without the opening."""
    out: list[tuple[str, bool]] = []
    run: list[str] = []
    for row in rows:
        if not opening or plain_room is None or within(budget.cost(row), rows_room):
            run.append(row)
            continue
        out.extend((g, True) for g in pack(run, rows_room, budget, joiner="\n"))
        run = []
        out.extend((g, False) for g in pack([row], plain_room, budget, joiner="\n"))
    out.extend((g, True) for g in pack(run, rows_room, budget, joiner="\n"))
    return [f"{opening if led and (i or not first) else ''}{header}\n{g}" for i, (g, led) in enumerate(out)]


def split_code(code: str, room: Cost, budget: Budget) -> list[str]:
    """Split code at line boundaries (whole lines packed in order; a huge line by words)."""
    return pack(code.split("\n"), room, budget, joiner="\n")


def split_prose(text: str, room: Cost, budget: Budget) -> list[str]:
    """Split prose at sentence boundaries into maximal pieces (a huge sentence by words)."""
    return pack(sentences(text), room, budget, joiner=" ")


def balanced(texts: Sequence[str], room: Cost, budget: Budget, joiner: str = " ") -> list[str]:
    """Pack into the fewest pieces of roughly equal size (no tiny tail piece), each within *room*."""
    greedy = pack(texts, room, budget, joiner)
    if len(greedy) <= 1:
        return greedy
    total = add(*(budget.cost(t) for t in texts))
    target = tuple(max(1, -(-t // len(greedy))) for t in total)  # ceil(total / pieces)
    slack = tuple(min(r, int(t * 1.15) + 1) for r, t in zip(room, target, strict=True))
    attempt = pack(texts, slack, budget, joiner)
    return attempt if len(attempt) <= len(greedy) else greedy
